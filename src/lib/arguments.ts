import { z } from 'zod';
import { formatPath } from '../shared/errors.js';
import { wireErrorMap } from '../shared/event-bodies.js';
import { EVENT_NAMES } from '../shared/event-names.js';
import { isPlainObject, MAX_COST, MAX_RUNTIME_MS, MAX_TOKENS } from '../shared/event-properties.js';
import { findJsonProblem, LONE_SURROGATE_MESSAGE } from '../shared/json-problem.js';
import { nearestNames } from '../shared/nearest-names.js';
import {
  FORBIDDEN_KEYS,
  idSchema,
  instantSchema,
  isStoredInstant,
  propertiesSchema,
  STORED_TIME_MESSAGE,
  scalarSchema,
  traitsSchema,
} from '../shared/primitives.js';

/**
 * The library's arguments, in JavaScript naming (library.md). Checked when the call is made, so a
 * wrong shape is a TypeError at the caller's line instead of an error record seconds later. Objects
 * are strict: `conversation_id` where `conversationId` is meant must not be silently dropped.
 */

const timestampArg = z
  .union([z.date(), instantSchema, z.number()], {
    error: 'must be a Date, an ISO 8601 time with Z or an offset, or epoch milliseconds',
  })
  .refine((t) => typeof t === 'string' || Number.isFinite(new Date(t).getTime()), {
    message: 'is not a valid time',
    abort: true,
  })
  .refine((t) => isStoredInstant(typeof t === 'string' ? Date.parse(t) : new Date(t).getTime()), {
    message: STORED_TIME_MESSAGE,
    // 'yesterday' was told its form and then the range it is not in (found by probing).
    when: (payload) => payload.issues.length === 0,
  })
  .transform((t) => (typeof t === 'string' ? t : new Date(t).toISOString()));

/**
 * Looks for the forbidden keys (decisions §1) in what the caller passed. A zod record leaves an own
 * `__proto__` out of its output without an issue (assigning it would set the prototype), so the
 * record's own key check never sees it and `JSON.parse('{"__proto__":1}')` would be stored as `{}`.
 */
function ownKeysChecked<S extends z.ZodType>(schema: S) {
  return z
    .unknown()
    .superRefine((value, ctx) => {
      if (!isPlainObject(value)) return;
      for (const key of Object.keys(value)) {
        if (FORBIDDEN_KEYS.has(key)) {
          ctx.addIssue({ code: 'custom', path: [key], message: `key "${key}" is not allowed` });
        }
      }
    })
    .transform(withoutUndefined)
    .pipe(schema);
}

/**
 * A key whose value is `undefined` is left out, as JSON leaves it out and the analytics SDKs apps
 * know do (`{plan: user.plan}` for a user without one): it was a TypeError (found by probing).
 */
function withoutUndefined(value: unknown): unknown {
  if (!isPlainObject(value) || !Object.values(value).includes(undefined)) return value;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) if (v !== undefined) out[key] = v;
  return out;
}

const traitsArg = ownKeysChecked(traitsSchema);
const propertiesArg = ownKeysChecked(propertiesSchema);

/** The longest delay setTimeout honours (2^31 - 1 ms). */
const MAX_TIMER_MS = 2_147_483_647;

/** A whole number from 0 to `max`: one message for a number past it, however far. */
const wholeUpTo = (max: number, unit = '') =>
  z
    .number()
    .min(0, 'must be 0 or more')
    .max(max, `must be at most ${max === Number.MAX_SAFE_INTEGER ? max : max.toLocaleString('en-US')}${unit}`)
    // Not zod's int(), which calls 2**53 "not a whole number" (found by probing): it is one, past exact.
    .refine(Number.isInteger, 'must be a whole number');
const count = wholeUpTo(Number.MAX_SAFE_INTEGER);
/**
 * The wire's bounds, checked here so the refusal names the caller's field (`cost.promptTokens`), not
 * the wire's (`properties.prompt_tokens`, found by probing).
 */
const tokens = wholeUpTo(MAX_TOKENS);
const tokenUsage = z.strictObject({
  model: z.string().min(1, 'must not be empty').max(100, 'must be at most 100 characters'),
  promptTokens: tokens,
  completionTokens: tokens,
});
const directCost = z.strictObject({
  cost: z
    .number()
    .min(0, 'must be 0 or more')
    .max(MAX_COST, `must be at most ${MAX_COST.toLocaleString('en-US')} (in US dollars)`),
});
/** Token-based or direct (spec part 2); which one is told by the keys, so errors name the right one. */
const usageArg = z.custom<unknown>().transform((value, ctx) => {
  const schema = typeof value === 'object' && value !== null && 'cost' in value ? directCost : tokenUsage;
  const parsed = schema.safeParse(value, { error: argsErrorMap('field') });
  if (parsed.success) return parsed.data;
  for (const issue of parsed.error.issues) ctx.addIssue({ ...issue, code: 'custom' });
  return z.NEVER;
});

/** Function-call args and results are JSON text on the wire; other values are JSON-encoded for the caller. */
const jsonText = z.unknown().transform((value, ctx) => {
  if (typeof value === 'string') return value;
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch (error) {
    // JSON.stringify's own TypeError names neither the call nor the field.
    ctx.addIssue({ code: 'custom', message: `cannot be serialized as JSON (${whyNotJson(error)})` });
    return z.NEVER;
  }
  if (text === undefined) {
    ctx.addIssue({ code: 'custom', message: 'must be a string or a JSON value' });
    return z.NEVER;
  }
  return text;
});

/** A short reason from what JSON.stringify threw (V8's texts; any other error by its first line). */
function whyNotJson(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  if (/circular/i.test(message)) return 'circular structure';
  if (/call stack/i.test(message)) return 'nested too deeply';
  if (/BigInt/.test(message)) return 'a BigInt';
  return message.split('\n', 1)[0] ?? message;
}

const attributes = ownKeysChecked(z.record(z.string(), scalarSchema).pipe(traitsSchema));

export const sessionOptionsSchema = z
  .strictObject({
    sessionId: idSchema,
    conversationId: idSchema.optional(),
    id: idSchema.optional(),
    deviceId: idSchema.optional(),
    attributes: attributes.optional(),
    onError: z
      .custom<(error: never) => void>((f) => typeof f === 'function', 'must be a function')
      .optional(),
    onEvent: z
      .custom<(event: never) => void>((f) => typeof f === 'function', 'must be a function')
      .optional(),
  })
  .refine((o) => o.id !== undefined || o.deviceId !== undefined, {
    message: 'id or deviceId is required',
    path: ['id'],
  });

/**
 * `new Client(options)` (library.md). Strict like the calls: a misspelt `endpoint` would otherwise
 * silently send everything to the embedded store. Bounds that need the environment too (an
 * endpoint's URL and credentials) are checked in config.ts, after the fallbacks.
 */
/**
 * An option given as `''` is refused, as the CLI refuses `--data-dir ""`: taken for "not set", it sent
 * an app's events to the default store or the environment's endpoint without a word (found by probing).
 */
const setting = z.string().min(1, 'is empty: leave it out for the default').optional();

export const clientOptionsSchema = z.strictObject({
  endpoint: setting,
  apiKey: setting,
  projectId: setting,
  dataDir: setting,
  debug: z.boolean().optional(),
  // 0: no timeout. Past setTimeout's ceiling Node fires at once, so every request would time out.
  timeoutMs: z
    .number()
    .min(0, 'must be 0 (no timeout) or more')
    .max(MAX_TIMER_MS, `must be at most ${MAX_TIMER_MS} (about 24.8 days)`)
    .optional(),
  // Attempts in all, the first included (the CLI's --retries): 0 and 1 both mean no retry.
  retries: count.optional(),
  // 0 would drop every event, each recorded as an error: a queue that takes nothing is no setting.
  maxQueueSize: count.min(1, 'must be at least 1').optional(),
});

export type SessionOptionsInput = z.output<typeof sessionOptionsSchema>;

export const identifyArgs = z
  .strictObject({ id: idSchema.optional(), deviceId: idSchema.optional(), traits: traitsArg.optional() })
  .refine((o) => o.id !== undefined || o.deviceId !== undefined, {
    message: 'id or deviceId is required',
    path: ['id'],
  });
export const aliasArgs = z.strictObject({ id: idSchema, previousId: idSchema });

export const sessionIdentifyArgs = z.strictObject({
  timestamp: timestampArg.optional(),
  id: idSchema,
  deviceId: idSchema.optional(),
  traits: traitsArg.optional(),
});
export const sessionAliasArgs = z.strictObject({
  timestamp: timestampArg.optional(),
  id: idSchema,
  previousId: idSchema,
});
/**
 * Names another call of the session records, with the shape it checks: through trackEvent, a turn
 * was refused for "properties: required", which the caller never gave (found by probing).
 */
const RECORDED_BY: ReadonlyMap<string, string> = new Map([
  [EVENT_NAMES.conversationTurn, 'trackConversationTurn'],
  [EVENT_NAMES.conversationUsage, 'trackConversationUsage'],
  [EVENT_NAMES.conversationFunction, 'trackFunctionCall'],
  [EVENT_NAMES.conversationEnded, 'endConversation'],
  [EVENT_NAMES.sessionEnded, 'endSession'],
  [EVENT_NAMES.userIdentified, 'userIdentify'],
  [EVENT_NAMES.userAliased, 'userAlias'],
]);

export const trackEventArgs = z.strictObject({
  event: idSchema.refine((name) => !RECORDED_BY.has(name), {
    error: (iss) => `"${String(iss.input)}" is recorded by session.${RECORDED_BY.get(String(iss.input))}()`,
  }),
  timestamp: timestampArg.optional(),
  conversationId: idSchema.optional(),
  properties: propertiesArg.optional(),
});
export const turnArgs = z.strictObject({
  timestamp: timestampArg.optional(),
  conversationId: idSchema.optional(),
  user: z.string(),
  assistant: z.string(),
  assistantId: idSchema.optional(),
  properties: propertiesArg.optional(),
  usage: usageArg.optional(),
});
export const usageArgs = z.strictObject({
  timestamp: timestampArg.optional(),
  conversationId: idSchema.optional(),
  cost: usageArg,
});
export const functionCallArgs = z.strictObject({
  name: idSchema,
  args: jsonText.optional(),
  result: jsonText.optional(),
  runtime: wholeUpTo(MAX_RUNTIME_MS, ' ms').optional(),
  properties: propertiesArg.optional(),
  conversationId: idSchema.optional(),
  timestamp: timestampArg.optional(),
});
export const endConversationArgs = z.strictObject({
  timestamp: timestampArg.optional(),
  conversationId: idSchema.optional(),
  properties: propertiesArg.optional(),
});
export const endSessionArgs = z.strictObject({
  timestamp: timestampArg.optional(),
  attributes: attributes.optional(),
});

/**
 * The wire's messages, and for a key a strict object does not declare, the declared one nearest to
 * it: a misspelt option is most often a typo (`endpiont`) or the wire's naming (`conversation_id`).
 */
function argsErrorMap(noun: 'field' | 'option'): z.core.$ZodErrorMap {
  return (issue) => {
    if (issue.code !== 'unrecognized_keys') return wireErrorMap(issue);
    const known = issue.inst instanceof z.ZodObject ? Object.keys(issue.inst.shape) : [];
    return issue.keys
      .map((key) => {
        if (FORBIDDEN_KEYS.has(key)) return `key "${key}" is not allowed`;
        const [near] = nearestNames(key, known, { limit: 1 });
        return `unknown ${noun} "${key}"${near === undefined ? '' : ` (did you mean "${near}"?)`}`;
      })
      .join('; ');
  };
}

/**
 * Parses a call's argument, or throws a TypeError naming the call and the offending path
 * (`session.trackConversationTurn: usage.promptTokens: must be a number`). `noun` is what an
 * undeclared key is called in the message.
 */
export function parseArgs<S extends z.ZodType>(
  call: string,
  schema: S,
  value: unknown,
  noun: 'field' | 'option' = 'field',
): z.output<S> {
  const parsed = schema.safeParse(value ?? {}, { error: argsErrorMap(noun) });
  if (parsed.success) {
    // The service refuses such a string (storing it would make it U+FFFD): refused at the call instead.
    const lone = findJsonProblem(parsed.data, { keys: false, strings: true });
    if (lone !== undefined) throw new TypeError(`${call}: ${lone.path || noun}: ${LONE_SURROGATE_MESSAGE}`);
    return parsed.data;
  }
  // zod's issues as they are, not issuesFromZod's: an unknown key keeps argsErrorMap's "did you mean".
  const text = parsed.error.issues
    .map((issue) => {
      const path = formatPath(issue.path);
      return path ? `${path}: ${issue.message}` : issue.message;
    })
    .join('; ');
  throw new TypeError(`${call}: ${text}`);
}
