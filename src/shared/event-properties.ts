import { z } from 'zod';
import { ANY_INTENT } from './chart-filters.js';
import { LIMITS } from './limits.js';
import { idSchema, keyLengthOk, propertyValueSchema } from './primitives.js';

/*
 * The `properties` of the event kinds with rules of their own (spec parts 2 and 8, decisions §5),
 * apart from the event bodies (event-bodies.ts) that hold them.
 */

/** Adds a custom issue; refinements below report several, each at its own path. */
export function report(ctx: z.RefinementCtx, path: PropertyKey[], message: string): void {
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
export const MAX_TOKENS = 1e9;
export const MAX_COST = 1e6;
export const MAX_RUNTIME_MS = 1e10;
const tokenCountSchema = z
  .number()
  .int()
  .min(0, 'must be 0 or more')
  .max(MAX_TOKENS, `must be at most ${MAX_TOKENS.toLocaleString('en-US')}`);
export const costSchema = z
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
  cache_creation_1h_tokens: tokenCountSchema
    .optional()
    .describe(
      'extension: of cache_creation_tokens, those written to live an hour (Anthropic: priced at their own rate)',
    ),
  reasoning_tokens: tokenCountSchema
    .optional()
    .describe('extension: reasoning tokens (a subset of completion_tokens)'),
  batch: z
    .boolean()
    .optional()
    .describe('extension: the call went through the provider batch API (priced at its batch rates)'),
};

/** What prices a turn or a usage event: its model and tokens, or a cost given directly. */
const pricedFields = {
  model: modelSchema.optional(),
  prompt_tokens: tokenCountSchema.optional(),
  completion_tokens: tokenCountSchema.optional(),
  ...tokenDetailFields,
  cost: costSchema.optional(),
};

interface TokenDetails {
  prompt_tokens?: number | undefined;
  completion_tokens?: number | undefined;
  cached_prompt_tokens?: number | undefined;
  cache_creation_tokens?: number | undefined;
  cache_creation_1h_tokens?: number | undefined;
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
  const hour = p.cache_creation_1h_tokens;
  if (hour !== undefined && hour > (written ?? 0)) {
    report(
      ctx,
      ['cache_creation_1h_tokens'],
      `exceeds cache_creation_tokens (${written ?? 0}): those written for an hour are a part of them`,
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
      ...pricedFields,
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
  z.object(pricedFields).catchall(propertyValueSchema),
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

export function usageCost(p: UsageProperties): UsageCost {
  if (p.cost !== undefined) return { form: 'direct', cost: p.cost };
  // The refinement guarantees all three when cost is absent; the defaults only satisfy the compiler.
  const { model = '', prompt_tokens = 0, completion_tokens = 0 } = p;
  return { form: 'tokens', model, prompt_tokens, completion_tokens };
}
