import { describe, expect, it } from 'vitest';
import { propertyFilterSchema } from '../shared/chart-filters.js';
import { parseNameValues, parsePerformed, parseWhere, splitList } from './chart-expr.js';
import { UsageError } from './errors.js';

function usage(fn: () => unknown): UsageError {
  try {
    fn();
  } catch (error) {
    if (error instanceof UsageError) return error;
    throw error;
  }
  throw new Error('expected a UsageError');
}

describe('parseWhere: every operator of cli.md', () => {
  it.each([
    ['plan = pro', 'eq', ['pro']],
    ['plan != pro', 'neq', ['pro']],
    ['age > 18', 'gt', [18]],
    ['age >= 18', 'gte', [18]],
    ['age < 65', 'lt', [65]],
    ['age <= 65.5', 'lte', [65.5]],
    ['country in US,CA, MX', 'in', ['US', 'CA', 'MX']],
    ['country not in US,CA', 'nin', ['US', 'CA']],
    ['country NOT   IN US', 'nin', ['US']],
    ['age between 18,65', 'between', [18, 65]],
    // SQL's parentheses, as people type them (the help showed them once).
    ['model in (gpt-4o, gpt-4o-mini)', 'in', ['gpt-4o', 'gpt-4o-mini']],
    ['age between (100,500)', 'between', [100, 500]],
    ["tag in '(draft)'", 'in', ['(draft)']],
    ['model ~ ^gpt-4', 'regex', ['^gpt-4']],
    ['model !~ mini$', 'not_regex', ['mini$']],
    ['plan =i PRO', 'case_insensitive_eq', ['PRO']],
    ['plan !=i Free', 'case_insensitive_neq', ['Free']],
    // Digits past 2^53 stay text to = (as `cas import` keeps them); an ordering compares numbers.
    ['w = 10000000000000000', 'eq', ['10000000000000000']],
    ['w >= 10000000000000000', 'gte', [1e16]],
    ['w < 012', 'lt', [12]],
    ['w between 10000000000000000,20000000000000000', 'between', [1e16, 2e16]],
  ])('%s → %s %j', (text, operator, values) => {
    const filter = parseWhere(text);
    expect(filter).toEqual({ property_name: text.split(' ')[0], operator, values });
    // Every shape built here must be one the wire schema accepts.
    expect(propertyFilterSchema.safeParse(filter).success).toBe(true);
  });

  it('reads operators without spaces and keeps `=i` apart from values starting with i', () => {
    expect(parseWhere('age>=18')).toEqual({ property_name: 'age', operator: 'gte', values: [18] });
    expect(parseWhere('device=ipad')).toEqual({ property_name: 'device', operator: 'eq', values: ['ipad'] });
    expect(parseWhere('device!=ios')).toEqual({ property_name: 'device', operator: 'neq', values: ['ios'] });
  });

  it('types numbers and booleans; quotes keep strings, spaces and commas', () => {
    expect(parseWhere('pro = true').values).toEqual([true]);
    expect(parseWhere('pro = false').values).toEqual([false]);
    expect(parseWhere('delta > -2.5').values).toEqual([-2.5]);
    expect(parseWhere(`zip = '02134'`).values).toEqual(['02134']);
    expect(parseWhere('pro = "true"').values).toEqual(['true']);
    expect(parseWhere('city = "New York, NY"').values).toEqual(['New York, NY']);
    expect(parseWhere(`city in "a,b",'c', 3`).values).toEqual(['a,b', 'c', 3]);
    expect(parseWhere(`note = ''`).values).toEqual(['']);
  });

  it('keeps regex and case-insensitive values as text, never splitting or typing them', () => {
    expect(parseWhere('code ~ ^(1|2),3$').values).toEqual(['^(1|2),3$']);
    expect(parseWhere('code ~ 42').values).toEqual(['42']);
    expect(parseWhere('flag =i TRUE').values).toEqual(['TRUE']);
  });

  it('accepts a quoted property name with spaces', () => {
    expect(parseWhere(`"plan type" = pro`)).toEqual({
      property_name: 'plan type',
      operator: 'eq',
      values: ['pro'],
    });
  });

  it('names the flag and the problem for each kind of mistake', () => {
    expect(usage(() => parseWhere('= pro')).message).toBe('--where "= pro": expected a property name first');
    expect(usage(() => parseWhere('plan pro')).message).toMatch(
      /^--where "plan pro": expected an operator after "plan"/,
    );
    expect(usage(() => parseWhere('plan =')).message).toBe(
      '--where "plan =": expected a value after the operator',
    );
    expect(usage(() => parseWhere('age >> 3')).message).toMatch(/^--where "age >> 3": unknown operator ">>"/);
    expect(usage(() => parseWhere('age between 1')).message).toBe(
      '--where "age between 1": between takes two values, low,high',
    );
    expect(usage(() => parseWhere('c in a,,b')).message).toMatch(
      /^--where "c in a,,b": empty value in the list/,
    );
    const other = usage(() => parseWhere('plan', '--user-where'));
    expect(other.message).toMatch(/^--user-where "plan"/);
    expect(other.hint).toContain('--user-where "plan = pro"');
  });

  // Both matched nothing, and every count was 0, silently (found by probing).
  it('refuses a quote never closed and a between whose bounds are reversed', () => {
    expect(usage(() => parseWhere("model = 'gpt-4o")).message).toBe(
      `--where "model = 'gpt-4o": the ' before gpt-4o is never closed`,
    );
    expect(usage(() => parseWhere('model in "a,b')).message).toBe(
      '--where "model in "a,b": the " before a,b is never closed',
    );
    expect(usage(() => parseWhere("name ~ 'O")).message).toMatch(/never closed/);
    const reversed = usage(() => parseWhere('prompt_tokens between 500,100'));
    expect(reversed.message).toBe(
      '--where "prompt_tokens between 500,100": between takes low,high; 500 is above 100',
    );
    expect(reversed.hint).toBe('e.g. --where "prompt_tokens between 100,500"');
    // A quote inside a value is text; equal bounds are a range of one value.
    expect(parseWhere("name = O'Brien").values).toEqual(["O'Brien"]);
    expect(parseWhere('n between 3,3').values).toEqual([3, 3]);
  });
});

describe('parsePerformed', () => {
  it('reads a bare event as "at least once" (the defaults) and a count with each operator', () => {
    expect(parsePerformed('Signed Up')).toEqual({ event_name: 'Signed Up' });
    expect(parsePerformed('Conversation Turn >= 3')).toEqual({
      event_name: 'Conversation Turn',
      number_of: 3,
      number_of_operator: 'gte',
    });
    const ops = ['=', '>', '>=', '<', '<='].map((op) => parsePerformed(`Buy ${op} 2`).number_of_operator);
    expect(ops).toEqual(['eq', 'gt', 'gte', 'lt', 'lte']);
    expect(parsePerformed(`'Buy' = 0`)).toEqual({
      event_name: 'Buy',
      number_of: 0,
      number_of_operator: 'eq',
    });
  });

  it('rejects a count that is not a whole number, naming the flag', () => {
    expect(usage(() => parsePerformed('Buy >= 2.5')).message).toBe(
      '--performed "Buy >= 2.5": the count must be a whole number, got "2.5"',
    );
    expect(usage(() => parsePerformed('>= 2')).message).toBe('--performed ">= 2": expected an event name');
    // It read "got \"=\"": the operator's second character taken for the count.
    expect(usage(() => parsePerformed('Buy >=')).message).toBe(
      '--performed "Buy >=": expected a whole number after the operator',
    );
  });

  // Read as the event "Conversation Turn >" more than 3 times, and stored so without a word.
  it('rejects a doubled operator; a quoted event name may end in one', () => {
    expect(usage(() => parsePerformed('Conversation Turn >> 3')).message).toBe(
      '--performed "Conversation Turn >> 3": one count operator is expected (>=, <=, =, > or <); quote an event name that ends in ">"',
    );
    expect(usage(() => parsePerformed('Buy != 3')).message).toMatch(/ends in "!"/);
    expect(parsePerformed(`'A->' >= 2`)).toEqual({
      event_name: 'A->',
      number_of: 2,
      number_of_operator: 'gte',
    });
  });

  // --where's list operators were read as part of the event name: a cohort of nobody, without a word.
  it('rejects between and in, which count nothing; a quoted name, or one merely holding the word, is a name', () => {
    expect(usage(() => parsePerformed('Purchase between 1,3')).message).toBe(
      '--performed "Purchase between 1,3": "between" is not a count operator (>=, <=, =, > or <); quote an event name that ends so',
    );
    expect(usage(() => parsePerformed('Purchase in 1, 2')).message).toMatch(/"in" is not a count operator/);
    expect(usage(() => parsePerformed('Purchase not in 1,2')).message).toMatch(/"not in" is not/);
    expect(parsePerformed(`'Purchase between 1,3'`)).toEqual({ event_name: 'Purchase between 1,3' });
    expect(parsePerformed('Signed in with Google')).toEqual({ event_name: 'Signed in with Google' });
    expect(parsePerformed('Logged in 2')).toEqual({ event_name: 'Logged in 2' });
  });
});

describe('parseNameValues and splitList', () => {
  it('reads name and name=v1,v2 with typed values', () => {
    expect(parseNameValues('plan', '--trait')).toEqual({ name: 'plan' });
    expect(parseNameValues('seats=1,2,"3"', '--trait')).toEqual({ name: 'seats', values: [1, 2, '3'] });
  });

  // Found by probing: " n" was trimmed to "n", another property, and "a=b" could not be named.
  it('takes a quoted name as written, spaces and "=" included', () => {
    expect(parseNameValues("' n'", '--group-by')).toEqual({ name: ' n' });
    expect(parseNameValues(` " plan " = pro,1`, '--trait')).toEqual({ name: ' plan ', values: ['pro', 1] });
    expect(parseNameValues("'a=b'=x", '--group-by')).toEqual({ name: 'a=b', values: ['x'] });
    expect(parseNameValues(' plan ', '--trait')).toEqual({ name: 'plan' });
    expect(usage(() => parseNameValues("''", '--trait')).message).toMatch(/expected a name/);
  });

  it('rejects an empty list or name, naming the flag', () => {
    expect(usage(() => parseNameValues('plan=', '--group-by')).message).toMatch(
      /^--group-by "plan=": list values/,
    );
    expect(usage(() => parseNameValues('=a', '--trait')).message).toMatch(/^--trait "=a": expected a name/);
  });

  it('splits on commas outside quotes only', () => {
    expect(splitList(`a, "b,c" ,'d,e'`)).toEqual(['a', '"b,c"', "'d,e'"]);
  });
});
