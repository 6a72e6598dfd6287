import { z } from 'zod';
import { ANY_INTENT } from './chart-filters.js';
import { LIMITS } from './limits.js';
import {
  eventIdSchema,
  eventNameSchema,
  idSchema,
  keyLengthOk,
  propertiesSchema,
  propertyValueSchema,
  timestampSchema,
  traitsSchema,
} from './primitives.js';

/** Names of stored rows (decisions §4): what charts, filters and live events see in `event`. */
export const EVENT_NAMES = {
  sessionStarted: 'Session Started',
  sessionEnded: 'Session Ended',
  conversationStarted: 'Conversation Started',
  conversationEnded: 'Conversation Ended',
  conversationTurn: 'Conversation Turn',
  conversationUsage: 'Conversation Usage',
  conversationFunction: 'Conversation Function',
  conversationSummary: 'Conversation Summary',
  intentInformed: 'Intent Informed',
  userIdentified: 'User Identified',
  userAliased: 'User Aliased',
} as const;
export type KnownEventName = (typeof EVENT_NAMES)[keyof typeof EVENT_NAMES];

export const WIRE_TYPES = ['start_session', 'end_session', 'identify', 'alias', 'track'] as const;
export type WireType = (typeof WIRE_TYPES)[number];

/** The event name of a live-events frame that reports a refused request, as both hosted SDKs check it. */
export const ML_ERROR_EVENT = 'MLError';

/**
 * Names a client may not `track` itself: the service records them from other wire types or generates
 * them, and a hand-made copy would double-count sessions or summaries in every chart.
 */
export const RESERVED_TRACK_NAMES: ReadonlyMap<string, string> = new Map([
  [EVENT_NAMES.sessionStarted, 'send type "start_session" instead'],
  [EVENT_NAMES.sessionEnded, 'send type "end_session" instead'],
  [EVENT_NAMES.userIdentified, 'send type "identify" instead'],
  [EVENT_NAMES.userAliased, 'send type "alias" instead'],
  [EVENT_NAMES.conversationSummary, 'the service records it when a conversation closes'],
  [EVENT_NAMES.intentInformed, 'the service records it when a conversation closes'],
  // Stored, it reached every live socket as a refusal: the SDKs and `onEvent` took it for one.
  [ML_ERROR_EVENT, 'live events report refused requests by that name'],
]);

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
    const allowsArrays = iss.errors.some((branch) =>
      branch.some((b) => b.code === 'invalid_type' && b.expected === 'array'),
    );
    return allowsArrays
      ? 'must be a string, number, boolean, or an array of strings or of numbers'
      : 'must be a string, number or boolean';
  }
  return undefined;
};

/** Adds a custom issue; refinements below report several, each at its own path. */
function report(ctx: z.RefinementCtx, path: PropertyKey[], message: string): void {
  ctx.addIssue({ code: 'custom', path, message });
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Key limits for property objects that also declare known fields (object + catchall), mirroring the
 * records in primitives.ts. `when` makes the check run even when a field already failed, so one
 * response lists every problem of the event.
 */
function keyLimited<T extends z.ZodType<Record<string, unknown>>>(schema: T): T {
  return schema.superRefine(
    (obj, ctx) => {
      const keys = Object.keys(obj);
      if (keys.length > LIMITS.keysPerObject) {
        report(ctx, [], `at most ${LIMITS.keysPerObject} keys are allowed`);
      }
      for (const key of keys) {
        if (!keyLengthOk(key)) {
          report(ctx, [key], `keys must be 1 to ${LIMITS.keyLength} characters`);
        }
      }
    },
    { when: (payload) => isPlainObject(payload.value) },
  );
}

/**
 * Upper bounds far above any real call, so that a conversation's summed tokens, cost and runtime stay
 * exact finite numbers: two turns costing 1.7e308 each summed to Infinity, which JSON writes as null.
 */
const MAX_TOKENS = 1e9;
const MAX_COST = 1e6;
const MAX_RUNTIME_MS = 1e10;
const tokenCountSchema = z
  .number()
  .int()
  .min(0, 'must be 0 or more')
  .max(MAX_TOKENS, `must be at most ${MAX_TOKENS.toLocaleString('en-US')}`);
const costSchema = z
  .number()
  .min(0, 'must be 0 or more')
  .max(MAX_COST, `must be at most ${MAX_COST.toLocaleString('en-US')} (in US dollars)`);
const runtimeSchema = z
  .number()
  .int('must be a whole number of milliseconds')
  .min(0, 'must be 0 or more')
  .max(MAX_RUNTIME_MS, `must be at most ${MAX_RUNTIME_MS.toLocaleString('en-US')} ms`);
/** Spec part 8: model names are 1 to 100 characters. */
const modelSchema = z
  .string()
  .min(1, 'must not be empty')
  .max(LIMITS.idLength, `must be at most ${LIMITS.idLength} characters`);
/** Spec part 2 says args/result are strings (usually JSON); say how to fix an object sent by mistake. */
const jsonTextSchema = z.string({
  error: (iss) => (iss.input === undefined ? undefined : 'must be a string (JSON-encode structured values)'),
});

/**
 * Our wire extension (issue 19, `usage-token-details` in /healthz): the detail an exact price needs.
 * `prompt_tokens` stays the TOTAL input, cached and cache-written tokens included (OpenAI's
 * convention; Anthropic's `input_tokens` excludes them, so an importer adds them back), and
 * `reasoning_tokens` are part of `completion_tokens`. The hosted service ignores these fields.
 */
const tokenDetailFields = {
  cached_prompt_tokens: tokenCountSchema
    .optional()
    .describe('extension: prompt tokens read from the provider cache (a subset of prompt_tokens)'),
  cache_creation_tokens: tokenCountSchema
    .optional()
    .describe('extension: prompt tokens written to the provider cache (a subset of prompt_tokens)'),
  reasoning_tokens: tokenCountSchema
    .optional()
    .describe('extension: reasoning tokens (a subset of completion_tokens)'),
  batch: z
    .boolean()
    .optional()
    .describe('extension: the call went through the provider batch API (priced at its batch rates)'),
};

interface TokenDetails {
  prompt_tokens?: number | undefined;
  completion_tokens?: number | undefined;
  cached_prompt_tokens?: number | undefined;
  cache_creation_tokens?: number | undefined;
  reasoning_tokens?: number | undefined;
}

/** Subsets may not exceed their totals: a mapping that forgot to add cached tokens back says so here. */
function checkTokenDetails(p: TokenDetails, ctx: z.RefinementCtx): void {
  const { prompt_tokens: prompt, completion_tokens: completion, reasoning_tokens: reasoning } = p;
  const { cached_prompt_tokens: read, cache_creation_tokens: written } = p;
  const cached = (read ?? 0) + (written ?? 0);
  if ((read !== undefined || written !== undefined) && prompt !== undefined && cached > prompt) {
    report(
      ctx,
      [read === undefined ? 'cache_creation_tokens' : 'cached_prompt_tokens'],
      `cached_prompt_tokens + cache_creation_tokens (${cached}) exceed prompt_tokens (${prompt}): prompt_tokens counts all input, cached included`,
    );
  }
  if (reasoning !== undefined && completion !== undefined && reasoning > completion) {
    report(
      ctx,
      ['reasoning_tokens'],
      `exceeds completion_tokens (${completion}): completion_tokens counts reasoning tokens too`,
    );
  }
}

export const turnPropertiesSchema = keyLimited(
  z
    .object({
      user: z.string(),
      assistant: z.string(),
      assistant_id: idSchema.optional(),
      model: modelSchema.optional(),
      prompt_tokens: tokenCountSchema.optional(),
      completion_tokens: tokenCountSchema.optional(),
      ...tokenDetailFields,
      cost: costSchema.optional(),
    })
    .catchall(propertyValueSchema),
).superRefine((p, ctx) => {
  checkTokenDetails(p, ctx);
  // A label is an intent's name, and `cas intents add` refuses this one: a turn labelled with it
  // made an intent no filter could name apart from all of them (found by probing).
  const label = p.intent;
  if (typeof label === 'string' && label.trim().toLowerCase() === ANY_INTENT.toLowerCase()) {
    report(ctx, ['intent'], `"${ANY_INTENT}" is reserved: filters use it for every intent`);
  }
});

const USAGE_TOKEN_FIELDS = ['model', 'prompt_tokens', 'completion_tokens'] as const;

/**
 * Usage is token-based or direct (spec part 2). The OpenAPI writes it as `oneOf`, but a union's error
 * names neither branch's missing field, so the rule is a refinement: `cost` given, else all of
 * model, prompt_tokens and completion_tokens. Both forms together are accepted; `cost` wins (§5).
 */
export const usagePropertiesSchema = keyLimited(
  z
    .object({
      model: modelSchema.optional(),
      prompt_tokens: tokenCountSchema.optional(),
      completion_tokens: tokenCountSchema.optional(),
      ...tokenDetailFields,
      cost: costSchema.optional(),
    })
    .catchall(propertyValueSchema),
).superRefine((p, ctx) => {
  checkTokenDetails(p, ctx);
  if (p.cost !== undefined) return;
  const missing = USAGE_TOKEN_FIELDS.filter((k) => p[k] === undefined);
  if (missing.length === USAGE_TOKEN_FIELDS.length) {
    report(ctx, [], 'needs cost, or model with prompt_tokens and completion_tokens');
    return;
  }
  for (const key of missing) {
    report(ctx, [key], 'required with model and tokens (or send cost instead)');
  }
});

export const functionPropertiesSchema = keyLimited(
  z
    .object({
      name: idSchema,
      args: jsonTextSchema.optional(),
      result: jsonTextSchema.optional(),
      runtime: runtimeSchema.optional(),
    })
    .catchall(propertyValueSchema),
);

export type TurnProperties = z.output<typeof turnPropertiesSchema>;
export type UsageProperties = z.output<typeof usagePropertiesSchema>;
export type FunctionProperties = z.output<typeof functionPropertiesSchema>;

/** The cost a usage event carries, resolved per decisions §5 so consumers need not re-apply the rule. */
export type UsageCost =
  | { form: 'direct'; cost: number }
  | { form: 'tokens'; model: string; prompt_tokens: number; completion_tokens: number };

function usageCost(p: UsageProperties): UsageCost {
  if (p.cost !== undefined) return { form: 'direct', cost: p.cost };
  // The refinement guarantees all three when cost is absent; the defaults only satisfy the compiler.
  const { model = '', prompt_tokens = 0, completion_tokens = 0 } = p;
  return { form: 'tokens', model, prompt_tokens, completion_tokens };
}

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
    .max(366 * 86_400_000)
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

export const endConversationEventSchema = z
  .object({ ...conversationEdgeFields, event: z.literal(EVENT_NAMES.conversationEnded) })
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
