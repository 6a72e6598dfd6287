import type { Scalar } from '../../shared/primitives.js';
import type { StoreValue } from '../store/statements.js';

/**
 * Building blocks for chart SQL. Every value that comes from a request (property and trait names,
 * filter values, regexes, zones, instants) goes through `Params.bind`, so no caller text is ever
 * spliced into a statement; only fixed fragments written in this folder are.
 */
export class Params {
  readonly values: StoreValue[] = [];
  private readonly refs = new Map<string, string>();

  /** A placeholder for `value`; one value bound twice reuses its placeholder. */
  bind(value: string | number | boolean): string {
    const key = `${typeof value}:${String(value)}`;
    let ref = this.refs.get(key);
    if (ref === undefined) {
      this.values.push(value);
      ref = `$${this.values.length}`;
      this.refs.set(key, ref);
    }
    return ref;
  }

  /**
   * Numbers compare as DOUBLE. They travel as their shortest round-trip text: the driver would bind
   * 1 as INTEGER and refuse 1e21 as out of BIGINT range, while DuckDB parses the text to the same double.
   */
  number(value: number): string {
    return `${this.bind(String(value))}::DOUBLE`;
  }

  instant(value: Date): string {
    return `${this.bind(value.toISOString())}::TIMESTAMPTZ`;
  }

  /** A JSON pointer (RFC 6901) to a top-level key: any name, dots, quotes and slashes included, is one key. */
  pointer(name: string): string {
    return this.bind(`/${name.replaceAll('~', '~0').replaceAll('/', '~1')}`);
  }

  scalar(value: Scalar): string {
    return typeof value === 'number' ? this.number(value) : this.bind(value);
  }
}

/** Common table expressions in dependency order, each added once under a stable name. */
export class Query {
  readonly params = new Params();
  private readonly ctes: Array<{ name: string; sql: string }> = [];
  private counter = 0;

  has(name: string): boolean {
    return this.ctes.some((c) => c.name === name);
  }

  /** Adds `name AS (sql)` unless already there; returns the name. */
  cte(name: string, sql: string | (() => string)): string {
    if (!this.has(name)) this.ctes.push({ name, sql: typeof sql === 'string' ? sql : sql() });
    return name;
  }

  /** A name no other CTE of this query has. */
  fresh(prefix: string): string {
    this.counter += 1;
    return `${prefix}_${this.counter}`;
  }

  /** The full statement: the CTEs collected so far, then `select`. */
  sql(select: string): string {
    if (this.ctes.length === 0) return select;
    return `WITH ${this.ctes.map((c) => `${c.name} AS (${c.sql})`).join(',\n')}\n${select}`;
  }
}

/** Joins SQL conditions; an empty list is TRUE so callers need no special case. */
export function all(conditions: ReadonlyArray<string>): string {
  return conditions.length === 0 ? 'TRUE' : conditions.map((c) => `(${c})`).join(' AND ');
}

export function any(conditions: ReadonlyArray<string>): string {
  return conditions.length === 0 ? 'FALSE' : conditions.map((c) => `(${c})`).join(' OR ');
}
