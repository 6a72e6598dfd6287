import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Database, openDatabase } from '../store/database.js';
import { DrilldownStore, type StoredQuery } from './drilldown-store.js';

let db: Database;
beforeAll(async () => {
  db = await openDatabase(':memory:');
});
afterAll(async () => {
  await db.close();
});

const query = (name: string): StoredQuery => ({
  kind: 'segmentation',
  scope: {},
  controls: { eventFilters: [{ event_name: name }] },
});
/** Writes are serialized: one more waits for the store's background writes. */
const settled = () => db.write(async () => undefined);

describe('the drilldown queries kept across restarts', () => {
  it('keeps the most recently charted per project: charting a query again renews it', async () => {
    const charted = new DrilldownStore({ db, rowsPerProject: 2 });
    const a = charted.register('p', query('A'));
    charted.register('p', query('B'));
    await settled();
    // A restart: only the table remembers. A is charted again, then C pushes out the oldest.
    const restarted = new DrilldownStore({ db, rowsPerProject: 2 });
    expect(restarted.register('p', query('A'))).toBe(a);
    await settled();
    restarted.register('p', query('C'));
    await settled();
    const fresh = new DrilldownStore({ db, rowsPerProject: 2 });
    expect(await fresh.lookup('p', a)).toEqual(query('A'));
    const b = new DrilldownStore().register('p', query('B'));
    expect(await fresh.lookup('p', b)).toBeUndefined();
  });
});
