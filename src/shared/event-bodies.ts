import { z } from 'zod';
import { EVENT_NAMES, RESERVED_TRACK_NAMES } from './event-names.js';
import {
  costSchema,
  functionPropertiesSchema,
  report,
  turnPropertiesSchema,
  usageCost,
  usagePropertiesSchema,
} from './event-properties.js';
import {
  eventIdSchema,
  eventNameSchema,
  idSchema,
  propertiesSchema,
  timestampSchema,
  traitsSchema,
} from './primitives.js';

const TYPE_WORDS: Readonly<Record<string, string>> = {
  string: 'a string',
  number: 'a number',
  int: 'an integer',
  boolean: 'a boolean',
  object: 'an object',
  record: 'an object',
  array: 'an array',
};

/**
 * Per-parse messages in the words of decisions §1 ("one line a person can act on"): zod's defaults
 * ("Invalid input: expected string, received undefined") read badly in a 400 body. Messages set on a
 * schema (idSchema's lengths, for one) take precedence over this map.
 */
export const wireErrorMap: z.core.$ZodErrorMap = (iss) => {
  if (iss.code === 'invalid_type') {
    if (iss.input === undefined) return 'required';
    return `must be ${TYPE_WORDS[iss.expected] ?? iss.expected}`;
  }
  if (iss.code === 'invalid_union') {
    // The only unions here are property values (arrays allowed) and trait/attribute values (scalars).
    // An array's branches refuse its items, not its type: `[true]` was told to be a string, number
    // or boolean, which its items are (found by probing).
    if (Array.isArray(iss.input) && iss.errors.some((branch) => branch.some((b) => b.path.length > 0)))
      return 'must be an array of strings only or of numbers only';
    const allowsArrays = iss.errors.some((branch) =>
      branch.some((b) => b.code === 'invalid_type' && b.expected === 'array'),
    );
    return allowsArrays
      ? 'must be a string, number, boolean, or an array of strings or of numbers'
      : 'must be a string, number or boolean';
  }
  return undefined;
};

/**
 * The same words for every route's body, query and parameters (service/http/server.ts): a missing
 * field is "required", a value of another type "must be …", and a union whose every branch refused
 * the value's type names those types. Their bodies read "Invalid input: expected string, received
 * undefined", or just "Invalid input" for a trait set to null (found by probing).
 */
export const routeErrorMap: z.core.$ZodErrorMap = (iss) => {
  if (iss.code !== 'invalid_union') return wireErrorMap(iss);
  const expected: string[] = [];
  for (const branch of iss.errors) {
    const root = branch.filter((b) => b.path.length === 0);
    if (root.length !== 1 || root[0]?.code !== 'invalid_type') return undefined;
    const words = TYPE_WORDS[root[0].expected] ?? root[0].expected;
    if (!expected.includes(words)) expected.push(words);
  }
  if (expected.length === 0) return undefined;
  const last = expected.pop()!;
  return `must be ${expected.length === 0 ? last : `${expected.join(', ')} or ${last}`}`;
};

/** The longest inactivity gap a derived session may be split by (`session_gap_ms`). */
export const MAX_SESSION_GAP_MS = 366 * 86_400_000;

/** Fields any event may carry (decisions §4): idempotency key, time, and who it is about. */
const commonFields = {
  event_id: eventIdSchema.optional(),
  timestamp: timestampSchema.optional(),
  user_id: idSchema.optional(),
  device_id: idSchema.optional(),
};
/**
 * Our import extension (decisions §4, named `import-derived-sessions` in /healthz): a session the
 * importer derived from a user's or device's activity says whose activity (`session_key`) and the
 * inactivity gap that split it, so the service joins it with stored sessions of that key within the
 * gap, and any split of the records into runs ends as one run would have.
 */
const derivedSessionFields = {
  session_key: idSchema.optional().describe('import extension: the user or device key of a derived session'),
  session_gap_ms: z
    .number()
    .int()
    .min(1)
    .max(MAX_SESSION_GAP_MS)
    .optional()
    .describe('import extension: the inactivity gap (ms) that splits the derived sessions of session_key'),
};
const inSession = {
  ...commonFields,
  session_id: idSchema,
  conversation_id: idSchema.optional(),
  ...derivedSessionFields,
};

type UserNamed = { id?: string | undefined; user_id?: string | undefined };

/**
 * Who an event is about: the Python client names the user `id`, the JS client `user_id` (decisions §4);
 * if both come they must agree, and a session or identify needs a user or a device.
 */
function checkUser(e: UserNamed & { device_id?: string | undefined }, ctx: z.RefinementCtx): void {
  if (e.id !== undefined && e.user_id !== undefined && e.id !== e.user_id) {
    report(ctx, ['user_id'], `differs from id "${e.id}"; name the user once`);
  } else if (e.id === undefined && e.user_id === undefined && e.device_id === undefined) {
    report(ctx, ['user_id'], 'required: user_id (or id) or device_id');
  }
}

/** Folds `id` into `user_id` so consumers read one field; no key is left holding `undefined`. */
function foldUser<T extends UserNamed>(e: T): Omit<T, 'id'> {
  const { id, ...rest } = e;
  const user = e.user_id ?? id;
  return user === undefined ? rest : { ...rest, user_id: user };
}

export const startSessionEventSchema = z
  .object({
    type: z.literal('start_session'),
    ...inSession,
    id: idSchema.optional(),
    attributes: traitsSchema.optional(),
  })
  .superRefine(checkUser)
  .transform((e) => ({ kind: 'start_session' as const, ...foldUser(e) }));

export const endSessionEventSchema = z
  .object({
    type: z.literal('end_session'),
    ...commonFields,
    session_id: idSchema,
    ...derivedSessionFields,
    attributes: traitsSchema.optional(),
    provisional: z
      .boolean()
      .optional()
      .describe(
        'import extension (`import-provisional-ends`): an end the importer added, reopened by later history of the session',
      ),
  })
  .transform((e) => ({ kind: 'end_session' as const, ...e }));

export const identifyEventSchema = z
  .object({
    type: z.literal('identify'),
    ...commonFields,
    session_id: idSchema.optional(),
    id: idSchema.optional(),
    traits: traitsSchema.optional(),
  })
  .superRefine(checkUser)
  .transform((e) => ({ kind: 'identify' as const, ...foldUser(e) }));

/** The OpenAPI leaves `id` optional beside `user_id`; a JS-style alias naming the new id in `user_id` still works. */
export const aliasEventSchema = z
  .object({
    type: z.literal('alias'),
    ...commonFields,
    session_id: idSchema.optional(),
    id: idSchema.optional(),
    previous_id: idSchema,
  })
  .superRefine((e, ctx) => {
    if (e.id === undefined && e.user_id === undefined) {
      report(ctx, ['id'], 'required: the new id');
    }
  })
  .transform(({ id, ...e }) => ({ kind: 'alias' as const, ...e, id: (id ?? e.user_id)! }));

/** A `track` event whose name selects dedicated `properties` rules. */
function trackEvent<N extends string, P extends z.ZodType>(event: N, properties: P) {
  return z.object({ type: z.literal('track'), event: z.literal(event), ...inSession, properties });
}

export const turnEventSchema = trackEvent(EVENT_NAMES.conversationTurn, turnPropertiesSchema).transform(
  (e) => ({
    kind: 'turn' as const,
    ...e,
  }),
);

export const usageEventSchema = trackEvent(EVENT_NAMES.conversationUsage, usagePropertiesSchema).transform(
  (e) => ({ kind: 'usage' as const, ...e, usage: usageCost(e.properties) }),
);

export const functionEventSchema = trackEvent(
  EVENT_NAMES.conversationFunction,
  functionPropertiesSchema,
).transform((e) => ({ kind: 'function' as const, ...e }));

const conversationEdgeFields = {
  type: z.literal('track'),
  ...inSession,
  properties: propertiesSchema.optional(),
  attributes: traitsSchema.optional(),
};

export const startConversationEventSchema = z
  .object({ ...conversationEdgeFields, event: z.literal(EVENT_NAMES.conversationStarted) })
  .transform((e) => ({ kind: 'start_conversation' as const, ...e }));

const analysisSentiment = z.enum(['positive', 'negative', 'neutral']);

/**
 * The hosted API's analyses an app may send with a conversation's end (its OpenAPI; the spec leaves
 * them out): kept as flat properties of the `Conversation Ended` event (`analysis_summary`,
 * `analysis_sentiment`, …: service/ingest/client-analysis.ts), and the app's sentiment is the
 * summary's. They were dropped without a word (found by probing).
 */
export const conversationAnalysisSchema = z.object({
  summary: z.string().describe('A summary of the conversation.'),
  sentiment: analysisSentiment.describe('The overall sentiment of the conversation.'),
  cost: costSchema.describe('What the analysis cost (kept as analysis_cost, not added to the conversation).'),
});
export const intentAnalysisSchema = z.object({
  summary: z.string().describe("A summary of the user's intent."),
  sentiment: analysisSentiment.describe('The sentiment associated with the intent.'),
  intent_fulfilled: z.enum(['yes', 'no']).describe('Whether the intent was fulfilled.'),
  cost: costSchema.describe('What the analysis cost (kept as intent_analysis_cost).'),
});

export const endConversationEventSchema = z
  .object({
    ...conversationEdgeFields,
    event: z.literal(EVENT_NAMES.conversationEnded),
    conversation_analysis: conversationAnalysisSchema.optional(),
    intent_analysis: intentAnalysisSchema.optional(),
  })
  .transform((e) => ({ kind: 'end_conversation' as const, ...e }));

export const customEventSchema = z
  .object({
    type: z.literal('track'),
    event: eventNameSchema.refine((name) => !RESERVED_TRACK_NAMES.has(name), {
      error: (iss) =>
        `"${String(iss.input)}" is reserved: ${RESERVED_TRACK_NAMES.get(String(iss.input)) ?? ''}`,
    }),
    ...inSession,
    properties: propertiesSchema.optional(),
  })
  .transform((e) => ({ kind: 'custom' as const, ...e }));

/** One schema per normalized kind; the dispatcher in events.ts picks one by `type`, then `event`. */
export const WIRE_EVENT_SCHEMAS = {
  start_session: startSessionEventSchema,
  end_session: endSessionEventSchema,
  identify: identifyEventSchema,
  alias: aliasEventSchema,
  turn: turnEventSchema,
  usage: usageEventSchema,
  function: functionEventSchema,
  start_conversation: startConversationEventSchema,
  end_conversation: endConversationEventSchema,
  custom: customEventSchema,
} as const;

export type WireEventKind = keyof typeof WIRE_EVENT_SCHEMAS;
export const WIRE_EVENT_KINDS = Object.keys(WIRE_EVENT_SCHEMAS) as WireEventKind[];
/** A parsed wire event: the wire fields as sent (with `id` folded into `user_id`) plus `kind`. */
export type WireEvent = { [K in WireEventKind]: z.output<(typeof WIRE_EVENT_SCHEMAS)[K]> }[WireEventKind];
export type WireEventOf<K extends WireEventKind> = Extract<WireEvent, { kind: K }>;

/** `track` names that select a dedicated kind; any other name is a custom event. */
export const TRACK_EVENT_KINDS: ReadonlyMap<string, WireEventKind> = new Map<string, WireEventKind>([
  [EVENT_NAMES.conversationTurn, 'turn'],
  [EVENT_NAMES.conversationUsage, 'usage'],
  [EVENT_NAMES.conversationFunction, 'function'],
  [EVENT_NAMES.conversationStarted, 'start_conversation'],
  [EVENT_NAMES.conversationEnded, 'end_conversation'],
]);
