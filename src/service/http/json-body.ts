import { FORBIDDEN_KEY_MESSAGE, findJsonProblem, LONE_SURROGATE_MESSAGE } from '../../shared/json-problem.js';
import { FORBIDDEN_KEYS } from '../../shared/primitives.js';
import { ServiceError } from '../errors.js';

export function findForbiddenKey(value: unknown): string | undefined {
  return findJsonProblem(value, { keys: true, strings: false })?.path;
}

/** Bodies parsed without the surrogate check whose text holds a surrogate escape (pairs too). */
const uncheckedSurrogates = new WeakSet<object>();

/** Whether `body` may hold a lone surrogate its route must judge (parseJsonBody's `surrogates: false`). */
export function mayHoldLoneSurrogate(body: unknown): boolean {
  return body !== null && typeof body === 'object' && uncheckedSurrogates.has(body);
}

/** Sizes of the JSON texts that bodies were parsed from, keyed by the parsed value. */
const checkedSizes = new WeakMap<object, number>();

/**
 * The UTF-8 size of the JSON text `body` was parsed from, when parseJsonBody parsed it (and so
 * refused forbidden keys in it); undefined for any other value.
 */
export function checkedBodyBytes(body: unknown): number | undefined {
  return body !== null && typeof body === 'object' ? checkedSizes.get(body) : undefined;
}

/**
 * A forbidden key is in the text either spelled out or written with `\u` escapes; a text with
 * neither (the common case) needs no walk over the parsed value.
 */
const MAY_HOLD_FORBIDDEN = new RegExp(`${[...FORBIDDEN_KEYS].join('|')}|\\\\u`);
/**
 * Strictly decoded UTF-8 cannot hold a surrogate, so a lone one can only come from a `\uD800`-style
 * escape. JSON.parse keeps it as is, and storing it would turn it into U+FFFD: two different ids
 * would become one.
 */
const MAY_HOLD_SURROGATE = /\\u[dD][89a-fA-F]/;

export function parseJsonBody(
  text: string,
  bytes: number = Buffer.byteLength(text, 'utf8'),
  /** false: a lone surrogate is left for the route to judge where it is (the trace receiver, per span). */
  options: { surrogates: boolean } = { surrogates: true },
): unknown {
  if (text.trim() === '')
    throw new ServiceError(400, 'invalid_input', 'request body is empty; send a JSON value');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    const detail = error instanceof Error ? error.message.split('\n')[0]?.slice(0, 120) : '';
    throw new ServiceError(400, 'invalid_input', `body is not valid JSON (${detail})`);
  }
  const check = {
    keys: MAY_HOLD_FORBIDDEN.test(text),
    strings: options.surrogates && MAY_HOLD_SURROGATE.test(text),
  };
  const found = check.keys || check.strings ? findJsonProblem(value, check) : undefined;
  if (found?.problem === 'forbidden key') {
    throw new ServiceError(400, 'invalid_input', `${found.path}: this key is not allowed`, [
      { path: found.path, message: FORBIDDEN_KEY_MESSAGE },
    ]);
  }
  if (found?.problem === 'lone surrogate') {
    const path = found.path === '' ? '(body)' : found.path;
    const message = LONE_SURROGATE_MESSAGE;
    throw new ServiceError(400, 'invalid_input', `${path}: ${message}`, [{ path: found.path, message }]);
  }
  if (value !== null && typeof value === 'object') {
    checkedSizes.set(value, bytes);
    if (!options.surrogates && MAY_HOLD_SURROGATE.test(text)) uncheckedSurrogates.add(value);
  }
  return value;
}
