import {
  type CountOperator,
  type PropertyFilterInput,
  type PropertyOperator,
  TEXT_OPERATORS,
} from '../shared/chart-filters.js';
import type { Scalar } from '../shared/primitives.js';
import { UsageError } from './errors.js';
import { parseTraitValue } from './identify.js';

/**
 * The small grammars inside chart flag values (cli.md "cas chart"): `--where "<prop> <op> <value>"`,
 * `--performed "<event> [op n]"` and `name[=v1,v2]`. Values are typed like `cas identify --trait`
 * (numbers and true/false typed, quotes keep strings), so a filter matches what identify stored.
 */

export const WHERE_EXAMPLE = '--where "plan = pro", --where "age >= 18", --where "country in US,CA"';
export const OPERATOR_LIST = '= != > >= < <= in, not in, between, ~ !~ (regex), =i !=i (case-insensitive)';

/** Longest first, so `>=` is never read as `>` with the value `=18`. */
const SYMBOLS: ReadonlyArray<readonly [string, PropertyOperator]> = [
  ['!=i', 'case_insensitive_neq'],
  ['=i', 'case_insensitive_eq'],
  ['!~', 'not_regex'],
  ['>=', 'gte'],
  ['<=', 'lte'],
  ['!=', 'neq'],
  ['~', 'regex'],
  ['=', 'eq'],
  ['>', 'gt'],
  ['<', 'lt'],
];
const WORDS: ReadonlyArray<readonly [RegExp, PropertyOperator]> = [
  [/^not\s+in(?=\s|$)/i, 'nin'],
  [/^in(?=\s|$)/i, 'in'],
  [/^between(?=\s|$)/i, 'between'],
];
const COUNT_SYMBOLS: Readonly<Record<string, CountOperator>> = {
  '=': 'eq',
  '>': 'gt',
  '>=': 'gte',
  '<': 'lt',
  '<=': 'lte',
};

const QUOTED = /^'(.*)'$|^"(.*)"$/s;

function unquote(text: string): string {
  const match = QUOTED.exec(text);
  return match ? (match[1] ?? match[2] ?? '') : text;
}

/** `a, "b,c", 'd'` → ['a', '"b,c"', "'d'"]: commas inside quotes do not split, quotes stay for typing. */
export function splitList(text: string): string[] {
  const items: string[] = [];
  let current = '';
  let quote: string | undefined;
  for (const ch of text) {
    if (quote) {
      if (ch === quote) quote = undefined;
      current += ch;
    } else if (ch === '"' || ch === "'") {
      quote = ch;
      current += ch;
    } else if (ch === ',') {
      items.push(current.trim());
      current = '';
    } else {
      current += ch;
    }
  }
  items.push(current.trim());
  return items;
}

function typedList(text: string, flag: string, example: string): Scalar[] {
  const items = splitList(text);
  if (items.some((item) => item === '')) {
    throw new UsageError(`${flag}: empty value in the list "${text}"`, `e.g. ${example}`);
  }
  for (const item of items) closedQuote(item, flag, `e.g. ${example}`);
  return items.map(parseTraitValue);
}

/**
 * A value that opens a quote closes it: `model = 'gpt-4o` was read as the text "'gpt-4o", which
 * matched nothing, silently (found by probing). A quote inside a value (O'Brien) is text.
 */
function closedQuote(value: string, label: string, hint: string): void {
  const open = value[0];
  if ((open === "'" || open === '"') && !QUOTED.test(value)) {
    throw new UsageError(`${label}: the ${open} before ${value.slice(1)} is never closed`, hint);
  }
}

/** Reads the property name: quoted (may hold spaces), or up to a space or an operator symbol. */
function readName(text: string): { name: string; rest: string } {
  const quoted = /^(['"])(.*?)\1/s.exec(text);
  if (quoted) return { name: quoted[2] ?? '', rest: text.slice(quoted[0].length) };
  const bare = /^[^\s=!<>~]+/.exec(text);
  const name = bare?.[0] ?? '';
  return { name, rest: text.slice(name.length) };
}

function readOperator(text: string): { operator: PropertyOperator; rest: string } | undefined {
  for (const [pattern, operator] of WORDS) {
    const match = pattern.exec(text);
    if (match) return { operator, rest: text.slice(match[0].length) };
  }
  for (const [symbol, operator] of SYMBOLS) {
    if (!text.startsWith(symbol)) continue;
    const rest = text.slice(symbol.length);
    // `plan=ipad` is plan = "ipad", not a case-insensitive compare with "pad".
    if (symbol.endsWith('i') && rest !== '' && !/^\s/.test(rest)) continue;
    return { operator, rest };
  }
  return undefined;
}

/** `--where` / `--user-where` text to a PropertyFilter; `flag` names the flag in errors. */
export function parseWhere(expression: string, flag = '--where'): PropertyFilterInput {
  const label = `${flag} "${expression}"`;
  const hint = `e.g. ${WHERE_EXAMPLE.replaceAll('--where', flag)}`;
  const { name, rest } = readName(expression.trim());
  if (name === '') throw new UsageError(`${label}: expected a property name first`, hint);
  const op = readOperator(rest.trimStart());
  if (!op) {
    throw new UsageError(`${label}: expected an operator after "${name}", one of ${OPERATOR_LIST}`, hint);
  }
  const valueText = op.rest.trim();
  if (valueText === '') throw new UsageError(`${label}: expected a value after the operator`, hint);
  // `age >> 3` or `a =! b` is a mistyped operator far more often than a value starting with `>`.
  const stray = /^[=!<>~]+/.exec(valueText);
  if (stray) {
    const typed = rest.trimStart().slice(0, rest.trimStart().length - op.rest.length) + stray[0];
    throw new UsageError(
      `${label}: unknown operator "${typed}", expected one of ${OPERATOR_LIST}`,
      `quote a value that starts with "${stray[0]}": ${flag} "${name} = '${valueText}'"`,
    );
  }
  const { operator } = op;
  // SQL's `in (a, b)` is what people type: its parentheses are taken off (quote a value to keep them).
  const listText = /^\((.*)\)$/s.exec(valueText)?.[1]?.trim() ?? valueText;
  let values: Scalar[];
  if (operator === 'in' || operator === 'nin') {
    values = typedList(listText, label, `${flag} "country in US,CA"`);
  } else if (operator === 'between') {
    values = typedList(listText, label, `${flag} "age between 18,65"`);
    if (values.length !== 2) {
      throw new UsageError(
        `${label}: between takes two values, low,high`,
        `e.g. ${flag} "age between 18,65"`,
      );
    }
    values = values.map(ordering);
    // Reversed, the range is empty and every count was 0, silently (found by probing).
    const [low, high] = values;
    if (typeof low === 'number' && typeof high === 'number' && low > high) {
      throw new UsageError(
        `${label}: between takes low,high; ${low} is above ${high}`,
        `e.g. ${flag} "${name} between ${high},${low}"`,
      );
    }
  } else {
    closedQuote(valueText, label, hint);
    const value = TEXT_OPERATORS.has(operator) ? unquote(valueText) : parseTraitValue(valueText);
    values = [ORDERING.has(operator) && value === valueText ? ordering(value) : value];
  }
  return { property_name: name, operator, values };
}

const ORDERING: ReadonlySet<PropertyOperator> = new Set(['gt', 'gte', 'lt', 'lte']);

/**
 * An unquoted number kept as text (digits past 2^53, a leading zero: an id's or a zip code's, as
 * `cas import` keeps them) is a number to an ordering operator, which compares numbers or times: `w >=
 * 10000000000000000` was refused as "takes a number" (found by probing).
 */
function ordering(value: Scalar): Scalar {
  return typeof value === 'string' && /^-?\d+(\.\d+)?(e[+-]?\d+)?$/i.test(value) ? Number(value) : value;
}

export interface PerformedSpec {
  event_name: string;
  number_of?: number;
  number_of_operator?: CountOperator;
}

/** `"Purchase >= 3"` → event Purchase at least 3 times; a bare name keeps the defaults (at least once). */
export function parsePerformed(text: string): PerformedSpec {
  const label = `--performed "${text}"`;
  const hint = 'e.g. --performed "Signed Up" or --performed "Purchase >= 3"';
  const match = /^(.*?)\s*(>=|<=|=|>|<)\s*(\S+)$/s.exec(text.trim());
  const written = (match ? (match[1] ?? '') : text).trim();
  const eventName = unquote(written);
  if (eventName === '') throw new UsageError(`${label}: expected an event name`, hint);
  if (!match) {
    // --where's list operators read as part of the name counted an event nobody sends: 0 users.
    const listed = eventName === written ? /\s(between|not in|in)\s+\d+(\s*,\s*\d+)+$/i.exec(written) : null;
    if (listed)
      throw new UsageError(
        `${label}: "${listed[1]}" is not a count operator (>=, <=, =, > or <); quote an event name that ends so`,
        hint,
      );
    return { event_name: eventName };
  }
  // "Turn >> 3" read as the event "Turn >" at least... 3 (a typo stored as a cohort without a word);
  // an event name that really ends so is quoted.
  if (eventName === written && /[<>=!]$/.test(eventName)) {
    throw new UsageError(
      `${label}: one count operator is expected (>=, <=, =, > or <); quote an event name that ends in "${eventName.slice(-1)}"`,
      hint,
    );
  }
  const count = match[3] ?? '';
  // "X >=" read as the operator ">" and the count "=" (found by probing).
  if (/^[<>=!]+$/.test(count)) {
    throw new UsageError(`${label}: expected a whole number after the operator`, hint);
  }
  if (!/^\d+$/.test(count)) {
    throw new UsageError(`${label}: the count must be a whole number, got "${count}"`, hint);
  }
  const operator = COUNT_SYMBOLS[match[2] ?? ''];
  if (!operator) throw new UsageError(`${label}: unknown count operator "${match[2]}"`, hint);
  return { event_name: eventName, number_of: Number(count), number_of_operator: operator };
}

/**
 * `plan` → {name: 'plan'}; `plan=pro,team` → {name, values: ['pro', 'team']} (typed). A quoted name
 * (`' n'=1`, `'a=b'`) is taken as written, as `--where` takes it: trimmed, " n" was "n", another
 * property, and a name holding "=" could not be given (found by probing).
 */
export function parseNameValues(text: string, flag: string): { name: string; values?: Scalar[] } {
  const example = `${flag} plan or ${flag} plan=pro,team`;
  const quoted = /^\s*(['"])(.*?)\1\s*(?=$|=)/s.exec(text);
  const eq = quoted ? quoted[0].length : text.indexOf('=');
  const name = quoted ? (quoted[2] ?? '') : (eq < 0 ? text : text.slice(0, eq)).trim();
  if (name === '') throw new UsageError(`${flag} "${text}": expected a name before "="`, `e.g. ${example}`);
  if (eq < 0 || eq === text.length) return { name };
  const rest = text.slice(eq + 1).trim();
  if (rest === '') {
    throw new UsageError(
      `${flag} "${text}": list values after "=", or leave out "=" for every value`,
      `e.g. ${example}`,
    );
  }
  return { name, values: typedList(rest, `${flag} "${text}"`, example) };
}
