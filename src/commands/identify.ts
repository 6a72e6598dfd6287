import type { z } from 'zod';
import type { Client } from '../client/http-client.js';
import { alias, identify } from '../client/routes.js';
import { booleanWord } from '../importer/values.js';
import { FORBIDDEN_KEYS, type Scalar, type Traits } from '../shared/primitives.js';
import { aliasBodySchema, identifyBodySchema, type UserRecord } from '../shared/users.js';
import { UsageError } from './errors.js';

export interface IdentifyOptions {
  id?: string | undefined;
  device?: string | undefined;
  trait?: string[] | undefined;
  traits?: string | undefined;
}

/**
 * `age=30` → 30, `pro=true` (or TRUE, True: as `cas import` reads a cell) → true, `zip='02134'` → "02134" (quotes keep a string; so do a leading
 * zero and an integer too large to hold exactly).
 */
export function parseTraitValue(raw: string): Scalar {
  const quoted = /^'(.*)'$|^"(.*)"$/s.exec(raw);
  if (quoted) return quoted[1] ?? quoted[2] ?? '';
  const boolean = booleanWord(raw);
  if (boolean !== undefined) return boolean;
  if (raw.trim() !== '' && /^-?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i.test(raw)) {
    // As `cas import` types a cell (importer/values.ts): a zip code's leading zero, or an id's digits
    // past 2^53, would be lost as a number (02134 became 2134, 12345678901234567890 …567000).
    if (/^-?0\d/.test(raw) || (/^-?\d+$/.test(raw) && !Number.isSafeInteger(Number(raw)))) return raw;
    return Number(raw);
  }
  return raw;
}

/** decisions §1: these keys are invalid input anywhere; the service refuses them, so the CLI does too. */
const forbidden = (flag: string, key: string): UsageError =>
  new UsageError(
    `${flag}: the key "${key}" is not allowed (__proto__, constructor and prototype are reserved)`,
  );

export function parseTraits(pairs: ReadonlyArray<string>, json: string | undefined): Traits {
  let traits: Traits = {};
  if (json !== undefined) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(json);
    } catch {
      throw new UsageError(`--traits must be a JSON object, e.g. --traits '{"plan":"pro"}'`);
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
      throw new UsageError(`--traits must be a JSON object, e.g. --traits '{"plan":"pro"}'`);
    }
    const bad = Object.keys(parsed).find((key) => FORBIDDEN_KEYS.has(key));
    if (bad !== undefined) throw forbidden('--traits', bad);
    // Named here, key and all: the wire schema's refusal named only "--trait: Invalid input".
    for (const [key, value] of Object.entries(parsed)) {
      const scalar =
        typeof value === 'string' ||
        typeof value === 'boolean' ||
        (typeof value === 'number' && Number.isFinite(value));
      if (!scalar) {
        throw new UsageError(
          `--traits: "${key}" is ${JSON.stringify(value) ?? String(value)}; a trait is a string, a number or true/false`,
        );
      }
    }
    traits = { ...(parsed as Traits) };
  }
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new UsageError(`--trait "${pair}" must look like key=value, e.g. --trait plan=pro`);
    const key = pair.slice(0, eq);
    // Assigned, `__proto__` would set the object's prototype instead of a trait.
    if (FORBIDDEN_KEYS.has(key)) throw forbidden('--trait', key);
    const value = parseTraitValue(pair.slice(eq + 1));
    if (typeof value === 'number' && !Number.isFinite(value)) {
      throw new UsageError(`--trait "${pair}": ${pair.slice(eq + 1)} is beyond the numbers a trait can hold`);
    }
    traits[key] = value;
  }
  return traits;
}

/** Validates with the wire schema and reports the failure against the flag a person typed. */
function check<T>(schema: z.ZodType<T>, value: unknown, flags: Record<string, string>): T {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const field = String(issue?.path[0] ?? '');
  throw new UsageError(`${flags[field] ?? field}: ${issue?.message ?? 'invalid'}`);
}

export async function runIdentify(options: IdentifyOptions, deps: { client: Client }): Promise<UserRecord> {
  const traits = parseTraits(options.trait ?? [], options.traits);
  const body = check(
    identifyBodySchema,
    {
      ...(options.id !== undefined ? { id: options.id } : {}),
      ...(options.device !== undefined ? { device_id: options.device } : {}),
      ...(Object.keys(traits).length > 0 ? { traits } : {}),
    },
    { id: '--id (or --device)', device_id: '--device', traits: '--trait' },
  );
  return identify(deps.client, body);
}

export async function runAlias(
  options: { id?: string; previous?: string },
  deps: { client: Client },
): Promise<UserRecord> {
  const body = check(
    aliasBodySchema,
    { id: options.id, previous_id: options.previous },
    { id: '--id', previous_id: '--previous' },
  );
  return alias(deps.client, body);
}
