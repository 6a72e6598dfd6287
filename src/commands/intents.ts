import type { Client } from '../client/http-client.js';
import { addIntent, listIntents, removeIntent } from '../client/routes.js';
import { formatPath } from '../shared/errors.js';
import { type UdiBodyInput, type UdiRecord, udiBodySchema } from '../shared/udi.js';
import { UsageError } from './errors.js';
import { namingFlags, nthFlag } from './flag-refusals.js';
import { refuseWithout } from './service-features.js';

/**
 * `cas intents list|add|remove`: the project's user-defined intents (`/udi`). `add` takes RE2
 * `--pattern`s (our extension; without any, the intent is found where its name appears as words) and
 * `--attribute name[:description]`s; `remove` takes the name or the id.
 */

export interface IntentAddOptions {
  name: string;
  description?: string | undefined;
  pattern?: readonly string[] | undefined;
  attribute?: readonly string[] | undefined;
}

export function intentBody(options: IntentAddOptions): UdiBodyInput {
  const attributes = (options.attribute ?? []).map((text) => {
    const colon = text.indexOf(':');
    const name = (colon < 0 ? text : text.slice(0, colon)).trim();
    if (name === '') {
      throw new UsageError(
        `--attribute "${text}": expected a name first`,
        'e.g. --attribute "order_id:the order number"',
      );
    }
    return { name, description: colon < 0 ? '' : text.slice(colon + 1).trim() };
  });
  const body: UdiBodyInput = {
    intent: { name: options.name, description: options.description ?? '' },
    attributes,
    ...(options.pattern && options.pattern.length > 0 ? { patterns: [...options.pattern] } : {}),
  };
  const parsed = udiBodySchema.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const path = formatPath(issue?.path ?? []);
    const flag = path.startsWith('patterns')
      ? '--pattern'
      : path.startsWith('attributes')
        ? '--attribute'
        : 'the intent';
    throw new UsageError(`${flag} (${path}): ${issue?.message ?? 'invalid'}`);
  }
  return body;
}

export function runIntentList(_options: unknown, deps: { client: Client }): Promise<UdiRecord[]> {
  return listIntents(deps.client);
}

export async function runIntentAdd(options: IntentAddOptions, deps: { client: Client }): Promise<UdiRecord> {
  const body = intentBody(options);
  if (body.patterns !== undefined) await refuseWithout(deps.client, 'intent-patterns', '--pattern');
  return namingFlags(
    () => addIntent(deps.client, body),
    (path) => nthFlag('--pattern', 'patterns', options.pattern, path),
  );
}

/**
 * By id when the argument is one's, else by name (trimmed, any case: names are unique so), else the
 * argument is taken as an id (the service says 404).
 */
export async function runIntentRemove(
  options: { intent: string },
  deps: { client: Client },
): Promise<{ removed: string; user_defined_intent_id: string }> {
  const all = await listIntents(deps.client);
  const byId = all.find((i) => i.user_defined_intent_id === options.intent);
  if (byId !== undefined) {
    await removeIntent(deps.client, byId.user_defined_intent_id);
    return { removed: byId.intent.name, user_defined_intent_id: byId.user_defined_intent_id };
  }
  const wanted = options.intent.trim().toLowerCase();
  const named = all.filter((i) => i.intent.name.toLowerCase() === wanted);
  if (named.length > 1) {
    throw new UsageError(
      `${named.length} intents are named "${options.intent}"`,
      `remove one by id: ${named.map((i) => i.user_defined_intent_id).join(', ')}`,
    );
  }
  const id = named[0]?.user_defined_intent_id ?? options.intent;
  await removeIntent(deps.client, id);
  return { removed: named[0]?.intent.name ?? options.intent, user_defined_intent_id: id };
}
