import { describe, expect, it } from 'vitest';
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

describe('drilldown tokens', () => {
  it('round-trip the chart, scope, controls and point, whatever the characters in the controls', () => {
    const encode = tokenEncoder('segmentation', controls, { session_id: 's1' });
    for (const bin of [0, 1, 2, 6]) {
      const id = encode({ chart: 'segmentation', series: 0, bin, group: 'grüppe' });
      expect(id).toMatch(/^[A-Za-z0-9_-]+$/);
      const decoded = decodeToken(id);
      expect(decoded).toMatchObject({
        ok: true,
        value: { kind: 'segmentation', scope: { session_id: 's1' }, point: { bin, group: 'grüppe' } },
      });
      if (decoded.ok) expect(decoded.value.controls).toEqual(controls);
    }
  });

  it('refuses junk, a point of another chart, and controls the schema rejects', () => {
    expect(decodeToken('not a token!')).toMatchObject({ ok: false, issues: [{ path: 'id' }] });
    expect(decodeToken(Buffer.from('{"v":1}').toString('base64url'))).toMatchObject({ ok: false });
    const mismatch = tokenEncoder('retention', controls, {})({ chart: 'segmentation', series: 0, bin: 0 });
    expect(decodeToken(mismatch)).toMatchObject({ ok: false });
    const badZone = tokenEncoder(
      'segmentation',
      { ...controls, range: { ...controls.range, tz: 'Nowhere' } },
      {},
    );
    const decoded = decodeToken(badZone({ chart: 'segmentation', series: 0, bin: 0 }));
    expect(decoded).toMatchObject({
      ok: false,
      issues: [{ path: 'id', message: expect.stringMatching(/range\.tz/) }],
    });
  });
});
