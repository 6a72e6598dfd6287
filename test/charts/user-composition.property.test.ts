import fc from 'fast-check';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Database } from '../../src/service/store/database.js';
import { seed } from '../helpers/seed.js';
import { expectClose } from './compare.js';
import { dataArb, rangeArb } from './generators.js';
import { selectionArb, sometimes, traitGroupArb } from './generators-filters.js';
import { controlsOf, freshProject, openChartDb, retrieve, runChart, withoutDrilldowns } from './harness.js';
import { referenceComposition } from './reference-ses-comp.js';

let db: Database;
beforeAll(async () => {
  db = await openChartDb();
});
afterAll(() => db.close());

/** Mostly whole-project charts; sometimes narrowed by the session_id / conversation_id parameters. */
const scopeArb = fc.constantFrom({}, {}, {}, {}, {}, {}, { session_id: 's0' }, { conversation_id: 'c0' });

it('user composition in SQL equals the brute-force reference on random projects (200 cases)', async () => {
  const caseArb = rangeArb.chain((range) =>
    fc.record({
      range: fc.constant(range),
      data: dataArb(range),
      selectedTrait: traitGroupArb,
      groupBy: sometimes(traitGroupArb, 0.35),
      selection: selectionArb(range),
      scope: scopeArb,
    }),
  );
  let sliced = 0;
  await fc.assert(
    fc.asyncProperty(caseArb, async ({ range, data, selectedTrait, groupBy, selection, scope }) => {
      const project = freshProject();
      await seed(db, project, data);
      const input = { range, selectedTrait, ...(groupBy ? { groupBy } : {}), ...selection };
      const sql = await runChart(db, project, 'user-composition', input, scope);
      expectClose(
        withoutDrilldowns(sql),
        referenceComposition(data, controlsOf('user-composition', input), scope),
      );
      const slices = [...(sql.slices ?? []), ...(sql.groups ?? []).flatMap((g) => g.slices)];
      if (slices.length === 0) return;
      const biggest = slices.reduce((a, b) => (b.value > a.value ? b : a));
      if (biggest.value > 0 && slices.length > 1) sliced += 1;
      expect((await retrieve(db, project, biggest.drilldown_id!)).total).toBe(biggest.value);
    }),
    { numRuns: 200 },
  );
  // A guard that the generator keeps producing multi-slice charts (typically ~50 of 200), with
  // headroom so an unlucky draw of random cases does not fail the run.
  expect(sliced).toBeGreaterThan(20);
}, 300_000);
