import fc from 'fast-check';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { propertyCondition, propertyThenTrait } from '../../src/service/charts/property-filter.js';
import { Params } from '../../src/service/charts/sql.js';
import type { Database } from '../../src/service/store/database.js';
import { propertyFilterSchema } from '../../src/shared/chart-filters.js';
import type { Json } from '../helpers/seed.js';
import { propertyFilterArb } from './generators.js';
import { openChartDb } from './harness.js';
import { lookup, passes } from './reference-values.js';

/**
 * The thirteen operators in isolation: a random event-properties object, random user traits and a
 * random filter; DuckDB's verdict must equal the reference's. Values cluster on the filter values
 * (and their case variants) so equalities, case-folding, regexes and bounds are hit often.
 */

let db: Database;
beforeAll(async () => {
  db = await openChartDb();
});
afterAll(() => db.close());

const NAMES = ['plan', 'n', 'a.b', 's/l', 'q"x', 'when', '~t'];
const value: fc.Arbitrary<Json> = fc.oneof(
  fc.constantFrom<Json>(
    'free',
    'pro',
    'Pro',
    'PRO',
    'x',
    '',
    'ProX',
    'école',
    'ÉCOLE',
    '42',
    '-1',
    'true',
    'null',
  ),
  // Escapes: a string value compares as JSON text, so every escaping rule must agree.
  fc.constantFrom<Json>('a"b', 'back\\slash', 'tab\t', 'nl\n', '\u0001', '\u2028', '😀', '/', '</x>'),
  fc.constantFrom<Json>(0, 1, 1.5, 2, -3, -0.5, 18, 30, 42, 2 ** 53, 0.1),
  fc.constantFrom<Json>(true, false, null, ['a', 'b'], { k: 1 }),
  fc.constantFrom<Json>(
    '2025-03-09T06:00:00Z',
    '2025-03-09T01:00:00-05:00',
    '2025-06-15T00:00:00.500Z',
    '2025-02-30T00:00:00Z',
    '2025-03-09',
  ),
);
const bag = fc.dictionary(fc.constantFrom(...NAMES), value, { maxKeys: 5 });
/** Filter values from the same pool as the data, so equalities hold often. */
const filterValue = value.filter((v): v is string | number | boolean => v !== null && typeof v !== 'object');

it('every operator agrees with the reference on random values (200 cases × 20 filters)', async () => {
  const caseArb = fc.array(fc.tuple(bag, bag, propertyFilterArb(NAMES, filterValue)), {
    minLength: 20,
    maxLength: 20,
  });
  await fc.assert(
    fc.asyncProperty(caseArb, async (cases) => {
      const p = new Params();
      const columns = cases.map(([props, traits, raw], i) => {
        const f = propertyFilterSchema.parse(raw);
        const source = `(SELECT ${p.bind(JSON.stringify(props))}::JSON AS properties, ${p.bind(JSON.stringify(traits))}::JSON AS traits)`;
        return `(SELECT ${propertyCondition(p, f, propertyThenTrait(p, 's.properties', 's.traits', f.property_name))} FROM ${source} s) AS c${i}`;
      });
      const row = (await db.read.all(`SELECT ${columns.join(', ')}`, p.values))[0]!;
      cases.forEach(([props, traits, raw], i) => {
        const f = propertyFilterSchema.parse(raw);
        const expected = passes(f, lookup(props, traits, f.property_name));
        expect(row[`c${i}`], JSON.stringify({ props, traits, f })).toBe(expected);
      });
    }),
    { numRuns: 200 },
  );
}, 120_000);
