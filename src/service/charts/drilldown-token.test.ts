import { describe, expect, it } from 'vitest';
import { DrilldownStore } from './drilldown-store.js';
import { decodeToken, tokenEncoder } from './drilldown-token.js';

const controls = {
  range: { start: '2025-03-01', end: '2025-03-08', period: 'day', tz: 'Europe/London' },
  eventFilters: [
    {
      event_name: 'Tür öffnen ✓',
      number_of: 1,
      number_of_operator: 'gte',
      combine_previous_operation: 'and',
    },
  ],
};

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

describe('drilldown tokens', () => {
  it('round-trip the chart, scope, controls and point, whatever the characters in the controls', async () => {
    const drilldowns = new DrilldownStore();
    const encode = tokenEncoder(
      { drilldowns, project: 'p', scope: { session_id: 's1' } },
      'segmentation',
      controls,
    );
    for (const bin of [0, 1, 2, 6]) {
      const id = encode({ chart: 'segmentation', series: 0, bin, group: 'grüppe' });
      expect(id).toMatch(/^[A-Za-z0-9_-]+$/);
      const decoded = await decodeToken(id, 'p', drilldowns);
      expect(decoded).toMatchObject({
        ok: true,
        value: { kind: 'segmentation', scope: { session_id: 's1' }, point: { bin, group: 'grüppe' } },
      });
      if (decoded.ok) expect(decoded.value.controls).toEqual(controls);
    }
  });

  it('do not grow with the query: 300 filters make ids as short as one', () => {
    const drilldowns = new DrilldownStore();
    const many = { ...controls, eventFilters: Array.from({ length: 300 }, () => controls.eventFilters[0]) };
    const where = { drilldowns, project: 'p', scope: {} };
    const one = tokenEncoder(where, 'segmentation', controls)({ chart: 'segmentation', series: 0, bin: 6 });
    const big = tokenEncoder(where, 'segmentation', many)({ chart: 'segmentation', series: 299, bin: 6 });
    expect(big.length).toBeLessThanOrEqual(one.length + 4);
    expect(big.length).toBeLessThan(80);
  });

  it('name nothing in another project, or once the store forgot the query', async () => {
    const drilldowns = new DrilldownStore({ memoryBytes: 1 });
    const where = { drilldowns, project: 'p', scope: {} };
    const id = tokenEncoder(where, 'segmentation', controls)({ chart: 'segmentation', series: 0, bin: 0 });
    expect(await decodeToken(id, 'other', drilldowns)).toEqual({ ok: false, unknown: true });
    tokenEncoder(where, 'segmentation', { ...controls, eventFilters: [] })({
      chart: 'segmentation',
      series: 0,
      bin: 0,
    });
    expect(await decodeToken(id, 'p', drilldowns)).toEqual({ ok: false, unknown: true });
  });

  it('still read version-1 ids, which hold the whole query', async () => {
    const v1 = {
      v: 1,
      kind: 'segmentation',
      scope: {},
      controls,
      point: { chart: 'segmentation', series: 0, bin: 2 },
    };
    expect(await decodeToken(b64(v1), 'p', new DrilldownStore())).toMatchObject({
      ok: true,
      value: { kind: 'segmentation', controls, point: { bin: 2 } },
    });
  });

  it('refuse junk, a point of another chart, and controls the schema rejects', async () => {
    const drilldowns = new DrilldownStore();
    expect(await decodeToken('not a token!', 'p', drilldowns)).toMatchObject({
      ok: false,
      issues: [{ path: 'id' }],
    });
    expect(await decodeToken(b64({ v: 1 }), 'p', drilldowns)).toMatchObject({ ok: false });
    expect(await decodeToken(b64({ v: 2, q: 'short', p: [0, 0] }), 'p', drilldowns)).toMatchObject({
      ok: false,
      issues: [{ path: 'id' }],
    });
    const where = { drilldowns, project: 'p', scope: {} };
    const mismatch = tokenEncoder(where, 'retention', controls)({ chart: 'session', bin: 0 });
    expect(await decodeToken(mismatch, 'p', drilldowns)).toMatchObject({ ok: false });
    const badZone = tokenEncoder(where, 'segmentation', {
      ...controls,
      range: { ...controls.range, tz: 'Nowhere' },
    });
    const decoded = await decodeToken(badZone({ chart: 'segmentation', series: 0, bin: 0 }), 'p', drilldowns);
    expect(decoded).toMatchObject({
      ok: false,
      issues: [{ path: 'id', message: expect.stringMatching(/range\.tz/) }],
    });
  });
});
