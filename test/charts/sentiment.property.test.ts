import fc from 'fast-check';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Database } from '../../src/service/store/database.js';
import { seed } from '../helpers/seed.js';
import { expectClose } from './compare.js';
import { rangeArb } from './generators.js';
import { analysisDataArb } from './generators-analysis.js';
import { intentFilterArb, selectionArb, sometimes, traitGroupArb } from './generators-filters.js';
import { controlsOf, freshProject, openChartDb, retrieve, runChart, withoutDrilldowns } from './harness.js';
import { referenceSentiment } from './reference-analysis.js';

let db: Database;
beforeAll(async () => {
  db = await openChartDb();
});
afterAll(() => db.close());

const RUNS = Number(process.env.CAS_PROPERTY_RUNS ?? 200);
/** Drilldowns double a case's queries; every fourth case checks one (50 of the 200). */
const DRILL_EVERY = 4;
const scopeArb = fc.constantFrom({}, {}, {}, {}, {}, {}, { session_id: 's0' }, { conversation_id: 'c0' });

it(`the sentiment split in SQL equals the brute-force reference (${RUNS} cases)`, async () => {
  const caseArb = rangeArb.chain((range) =>
    fc.record({
      range: fc.constant(range),
      data: analysisDataArb(range),
      intentFilter: intentFilterArb(range),
      groupBy: sometimes(traitGroupArb, 0.3),
      selection: selectionArb(range),
      scope: scopeArb,
    }),
  );
  let sliced = 0;
  let cases = 0;
  await fc.assert(
    fc.asyncProperty(caseArb, async ({ range, data, intentFilter, groupBy, selection, scope }) => {
      const project = freshProject();
      await seed(db, project, data);
      const input = { range, intentFilter, ...(groupBy ? { groupBy } : {}), ...selection };
      const sql = await runChart(db, project, 'sentiment-analysis', input, scope);
      expectClose(
        withoutDrilldowns(sql),
        referenceSentiment(data, controlsOf('sentiment-analysis', input), scope),
      );
      const slices = [...(sql.slices ?? []), ...(sql.groups ?? []).flatMap((g) => g.slices)];
      const biggest = slices.reduce<(typeof slices)[number] | undefined>(
        (a, b) => (a && a.value >= b.value ? a : b),
        undefined,
      );
      cases += 1;
      if (!biggest || biggest.value === 0) return;
      if (slices.length > 1) sliced += 1;
      if (cases % DRILL_EVERY !== 0) return;
      // A slice counts conversations; its drilldown lists the persons behind them.
      const drilled = await retrieve(db, project, biggest.drilldown_id!);
      expect(drilled.total).toBeGreaterThan(0);
      expect(drilled.total).toBeLessThanOrEqual(biggest.value);
    }),
    { numRuns: RUNS },
  );
  expect(sliced).toBeGreaterThan(RUNS / 40);
}, 300_000);
