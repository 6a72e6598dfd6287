import type { Client } from '../client/http-client.js';
import { listProperties, listUserTraits } from '../client/routes.js';
import { propertyStats } from '../client/stats-routes.js';
import { exactRegex, unknownPropertyLine, unknownTraitLine } from './hint-lines.js';

/** What a chart's groups are made of (chart-hints.ts `namedInControls`). */
export interface GroupedBy {
  groupedBy: { properties: Array<{ event: string; property: string }>; traits: string[] };
}

/** A lookup for a hint: its failure (an older service, a timeout) says nothing. */
export async function optional<T>(call: Promise<T>): Promise<T | undefined> {
  try {
    return await call;
  } catch {
    return undefined;
  }
}

/**
 * A chart with data whose group-by property or trait nothing has: it draws one `(none)` group (every
 * event or user), and said nothing (found by probing the README). Looked up only when the answer has
 * a `(none)` group, so a chart whose groups all have values costs no request; then the user traits
 * and, per grouped event, its property names.
 */
export async function groupHints(
  named: GroupedBy,
  raw: unknown,
  client: Client,
  signal: AbortSignal,
): Promise<string[]> {
  const { properties, traits } = named.groupedBy;
  if (properties.length + traits.length === 0 || !JSON.stringify(raw).includes('"(none)"')) return [];
  const known = await optional(listUserTraits(client, {}, { signal }));
  if (known === undefined) return [];
  const lines: string[] = [];
  for (const { event, property } of properties) {
    // Any Event's properties are every event's: not one name to list them by.
    if (known.includes(property) || event === 'Any Event') continue;
    const names =
      (await optional(listProperties(client, { event_regex: exactRegex(event) }, { signal }))) ??
      (await optional(propertyStats(client, { event_name: event, top: 0 }, { signal })))?.map(
        (p) => p.property,
      );
    if (names !== undefined && !names.includes(property))
      lines.push(unknownPropertyLine(event, property, names));
  }
  for (const trait of traits) if (!known.includes(trait)) lines.push(unknownTraitLine(trait, known));
  return lines;
}
