import type { z } from 'zod';
import { bracketKey } from '../../shared/api-params.js';
import type { Issue } from '../../shared/errors.js';

/** A zod schema's definition, as far as this walk reads it. */
interface Def {
  type: string;
  innerType?: z.ZodType;
  in?: z.ZodType;
  out?: z.ZodType;
  options?: readonly z.ZodType[];
  shape?: Record<string, z.ZodType>;
}

const defOf = (schema: z.ZodType): Def => (schema as unknown as { _zod: { def: Def } })._zod.def;

const SCALARS = new Set(['string', 'number', 'boolean', 'bigint', 'enum', 'literal']);
const WRAPPERS = new Set(['optional', 'default', 'prefault', 'nullable', 'readonly', 'catch', 'nonoptional']);

/** Whether a parameter takes one plain value (through optional, default and preprocess wrappers). */
function isScalar(schema: z.ZodType): boolean {
  const def = defOf(schema);
  if (SCALARS.has(def.type)) return true;
  if (WRAPPERS.has(def.type) && def.innerType) return isScalar(def.innerType);
  // A preprocess is a pipe into the schema that validates; a transform, a pipe out of it.
  if (def.type === 'pipe') {
    if (def.out && defOf(def.out).type !== 'transform') return isScalar(def.out);
    return def.in !== undefined && isScalar(def.in);
  }
  if (def.type === 'union' && def.options) return def.options.every(isScalar);
  return false;
}

/** The parameters of a route's query schema that take one plain value. */
export function scalarParameters(schema: z.ZodType): Set<string> {
  const def = defOf(schema);
  if (def.type === 'pipe' && def.in) return scalarParameters(def.in);
  if (def.type !== 'object' || !def.shape) return new Set();
  return new Set(Object.entries(def.shape).flatMap(([name, s]) => (isScalar(s) ? [name] : [])));
}

/**
 * A parameter of one plain value given in bracket form (`session_id[0]=s1`): Node's query parser
 * keeps the key as it is, a key the route does not know, so it was dropped and the route answered
 * unscoped, for the whole project (found by probing). Refused, naming the parameter.
 */
export function scalarBrackets(
  query: Readonly<Record<string, unknown>>,
  scalars: ReadonlySet<string>,
): Issue[] {
  const issues: Issue[] = [];
  for (const key of Object.keys(query)) {
    const name = bracketKey(key)?.name;
    if (name !== undefined && scalars.has(name) && !issues.some((i) => i.path === name))
      issues.push({ path: name, message: `takes one value (${name}=…), not the bracket form ${key}` });
  }
  return issues;
}
