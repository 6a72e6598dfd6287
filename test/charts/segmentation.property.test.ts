import fc from 'fast-check';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Database } from '../../src/service/store/database.js';
import { seed } from '../helpers/seed.js';
import { expectClose } from './compare.js';
import { dataArb, rangeArb } from './generators.js';
import { eventFilterArb, selectionArb } from './generators-filters.js';
import { controlsOf, freshProject, openChartDb, retrieve, runChart, withoutDrilldowns } from './harness.js';
import { referenceSegmentation } from './reference-seg-ret.js';

let db: Database;
beforeAll(async () => {
  db = await openChartDb();
});
afterAll(() => db.close());

/** Mostly whole-project charts; sometimes narrowed by the session_id / conversation_id parameters. */
const scopeArb = fc.constantFrom({}, {}, {}, {}, {}, {}, { session_id: 's0' }, { conversation_id: 'c0' });

it('segmentation in SQL equals the brute-force reference on random projects (200 cases)', async () => {
  const caseArb = rangeArb.chain((range) =>
    fc.record({
      range: fc.constant(range),
      data: dataArb(range),
      eventFilters: fc.array(eventFilterArb(range, { groupBy: true }), { minLength: 1, maxLength: 3 }),
      selection: selectionArb(range),
      scope: scopeArb,
    }),
  );
  await fc.assert(
    fc.asyncProperty(caseArb, async ({ range, data, eventFilters, selection, scope }) => {
      const project = freshProject();
      await seed(db, project, data);
      const input = { range, eventFilters, ...selection };
      const sql = await runChart(db, project, 'segmentation', input, scope);
      expectClose(
        withoutDrilldowns(sql),
        referenceSegmentation(data, controlsOf('segmentation', input), scope),
      );
      // The busiest point's drilldown returns exactly its unique users.
      const points = sql.flatMap((r) => [...(r.points ?? []), ...(r.groups ?? []).flatMap((g) => g.points)]);
      if (points.length === 0) return;
      const busiest = points.reduce((a, b) => (b.unique > a.unique ? b : a));
      const drilled = await retrieve(db, project, busiest.drilldown_id!);
      expect(drilled.total).toBe(busiest.unique);
    }),
    { numRuns: 200 },
  );
}, 300_000);
