import { formatPath } from '../../shared/errors.js';
import { FORBIDDEN_KEYS } from '../../shared/primitives.js';
import { ServiceError } from '../errors.js';

/** A node of the walk; the path is rebuilt from parent links only when a key is found. */
interface WalkNode {
  node: unknown;
  parent: WalkNode | undefined;
  key: PropertyKey | undefined;
}

function pathOf(leaf: WalkNode): PropertyKey[] {
  const path: PropertyKey[] = [];
  for (let n: WalkNode | undefined = leaf; n?.key !== undefined; n = n.parent) path.push(n.key);
  return path.reverse();
}

/** A UTF-16 surrogate without its other half; in a well-formed pair the regex sees one code point. */
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

export type JsonProblem = 'forbidden key' | 'lone surrogate';

/**
 * Finds the first `__proto__` / `constructor` / `prototype` key anywhere in a parsed body, or (with
 * `strings`) the first key or string holding a lone UTF-16 surrogate, and returns its path, so the 400
 * can say where it is. JSON.parse itself stores such keys as plain own properties, so the walk is
 * safe; nothing spreads the body before this check. Parent links instead of a copied path per node:
 * copying made 100,000 levels of `[[[…]]]` (200 KB) cost O(depth²), about 45 s of CPU per request.
 */
export function findJsonProblem(
  value: unknown,
  check: { keys: boolean; strings: boolean },
): { path: string; problem: JsonProblem } | undefined {
  const bad = (s: string) => check.strings && LONE_SURROGATE.test(s);
  const visit = (node: unknown) =>
    (node !== null && typeof node === 'object') || (check.strings && typeof node === 'string');
  const stack: WalkNode[] = [{ node: value, parent: undefined, key: undefined }];
  for (let walk = stack.pop(); walk !== undefined; walk = stack.pop()) {
    const { node } = walk;
    if (typeof node === 'string') {
      if (bad(node)) return { path: formatPath(pathOf(walk)), problem: 'lone surrogate' };
      continue;
    }
    // Children go on the stack last first, so the walk meets problems in document order.
    const children: WalkNode[] = [];
    if (Array.isArray(node)) {
      for (let i = 0; i < node.length; i++) {
        const item: unknown = node[i];
        if (visit(item)) children.push({ node: item, parent: walk, key: i });
      }
    } else if (node !== null && typeof node === 'object') {
      for (const key of Object.keys(node)) {
        if ((check.keys && FORBIDDEN_KEYS.has(key)) || bad(key)) {
          const path = formatPath([...pathOf(walk), key]);
          return { path, problem: bad(key) ? 'lone surrogate' : 'forbidden key' };
        }
        const child: unknown = (node as Record<string, unknown>)[key];
        if (visit(child)) children.push({ node: child, parent: walk, key });
      }
    }
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i] as WalkNode);
  }
  return undefined;
}

export function findForbiddenKey(value: unknown): string | undefined {
  return findJsonProblem(value, { keys: true, strings: false })?.path;
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

export function parseJsonBody(text: string, bytes: number = Buffer.byteLength(text, 'utf8')): unknown {
  if (text.trim() === '')
    throw new ServiceError(400, 'invalid_input', 'request body is empty; send a JSON value');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    const detail = error instanceof Error ? error.message.split('\n')[0]?.slice(0, 120) : '';
    throw new ServiceError(400, 'invalid_input', `body is not valid JSON (${detail})`);
  }
  const check = { keys: MAY_HOLD_FORBIDDEN.test(text), strings: MAY_HOLD_SURROGATE.test(text) };
  const found = check.keys || check.strings ? findJsonProblem(value, check) : undefined;
  if (found?.problem === 'forbidden key') {
    throw new ServiceError(400, 'invalid_input', `${found.path}: this key is not allowed`, [
      { path: found.path, message: 'key is not allowed (__proto__, constructor and prototype are reserved)' },
    ]);
  }
  if (found?.problem === 'lone surrogate') {
    const path = found.path === '' ? '(body)' : found.path;
    const message =
      'holds a lone UTF-16 surrogate (a \\uD800-\\uDFFF escape without its pair); send valid Unicode';
    throw new ServiceError(400, 'invalid_input', `${path}: ${message}`, [{ path: found.path, message }]);
  }
  if (value !== null && typeof value === 'object') checkedSizes.set(value, bytes);
  return value;
}
