import { describe, expect, it } from 'vitest';
import { allZero, emptyParts, emptyRangeLine, namedInControls, readsIntents, spanOf } from './chart-hints.js';
import { exactRegex, quoteList, unknownEventLine, unknownPropertyLine } from './hint-lines.js';

const stat = (event: string, first: string, last: string) => ({ event, count: 1, users: 1, first, last });

describe('namedInControls', () => {
  it('finds every event filter with the properties it reads, and the traits user filters read', () => {
    const named = namedInControls({
      range: { start: '2025-01-01', end: '2025-02-01', period: 'day', tz: 'UTC' },
      eventFilters: [
        {
          event_name: 'Conversation Turn',
          with: [{ property_name: 'model', operator: 'eq', values: ['x'] }],
          groupBy: { property_name: 'plan', property_values: [] },
        },
        { event_name: 'Purchase' },
        { event_name: 'Conversation Turn', with: [{ property_name: 'cost', operator: 'gt', values: [1] }] },
      ],
      userFilters: [
        {
          with: [{ property_name: 'seats', operator: 'gte', values: [5] }],
          performed_events: [
            { event_name: 'Signed Up', with: [{ property_name: 'source', values: ['ad'] }] },
          ],
        },
      ],
      groupBy: { trait_name: 'country' },
    });
    expect(named.events).toEqual([
      { name: 'Conversation Turn', properties: ['model', 'plan', 'cost'] },
      { name: 'Purchase', properties: [] },
      { name: 'Signed Up', properties: ['source'] },
    ]);
    expect(named.traits.sort()).toEqual(['country', 'seats']);
    // Checked even when the chart has data: a misspelt group still draws one "(none)" group.
    expect(named.groupedBy).toEqual({
      properties: [{ event: 'Conversation Turn', property: 'plan' }],
      traits: ['country'],
    });
    expect(namedInControls({ selectedTrait: { trait_name: 'plan' } }).groupedBy.traits).toEqual(['plan']);
  });

  it('finds the starting and return events of retention', () => {
    const named = namedInControls({
      startingEvent: { event_name: 'A' },
      returnEvents: [{ event_name: 'B' }],
    });
    expect(named.events.map((e) => e.name)).toEqual(['A', 'B']);
  });
});

describe('allZero / emptyParts', () => {
  const series = (totals: number[]) => ({
    event_name: 'x',
    points: totals.map((total) => ({ start: 's', end: 'e', total, unique: total, average: total ? 1 : 0 })),
  });

  it('a chart is empty when no number in it differs from 0', () => {
    expect(allZero([series([0, 0])])).toBe(true);
    expect(allZero([series([0, 3])])).toBe(false);
    expect(allZero({ chart_name: 'x', slices: [] })).toBe(true);
    expect(allZero({ total_users: 2 })).toBe(false);
  });

  it('segmentation: names the empty series by index', () => {
    expect(emptyParts('segmentation', [series([1]), series([0, 0])])).toEqual({ chart: false, series: [1] });
    expect(emptyParts('segmentation', [series([0])])).toEqual({ chart: true, series: [0] });
    expect(emptyParts('retention', [{ total_users: 0, row_headers: [0] }])).toEqual({
      chart: true,
      series: [],
    });
  });
});

describe('emptyRangeLine', () => {
  it('says which range was asked and where the data lies, rounded out to whole months', () => {
    const line = emptyRangeLine(
      { start: '2026-10-26', end: '2026-11-26', tz: 'Europe/Paris' },
      { first: '2025-01-03T09:00:00.000Z', last: '2025-01-28T20:00:00.000Z' },
    );
    expect(line).toBe(
      'cas: no events between 2026-10-26 and 2026-11-25 (Europe/Paris); the data spans 2025-01-03 .. 2025-01-28: try --from 2025-01-01 --to 2025-01-31',
    );
  });

  it('reads days in the chart zone, across a year end, and asks for a coarser period over a long span', () => {
    const line = emptyRangeLine(
      { start: '2026-01-01T00:00:00Z', end: '2026-02-01T00:00:00Z', tz: 'America/New_York' },
      { first: '2021-06-01T02:00:00.000Z', last: '2025-02-28T12:00:00.000Z' },
      '"Purchase" events',
    );
    expect(line).toBe(
      'cas: no "Purchase" events between 2025-12-31 and 2026-01-31 (America/New_York); the data spans 2021-05-31 .. 2025-02-28: try --from 2021-05-01 --to 2025-02-28 --period week',
    );
  });

  it('without a span, says only the range', () => {
    expect(emptyRangeLine({ start: '2025-03-01', end: '2025-04-01', tz: 'UTC' }, undefined)).toBe(
      'cas: no events between 2025-03-01 and 2025-03-31 (UTC)',
    );
  });
});

describe('spanOf', () => {
  const stats = [
    stat('A', '2025-01-05T00:00:00Z', '2025-01-09T00:00:00Z'),
    stat('B', '2025-01-02T00:00:00Z', '2025-01-04T00:00:00Z'),
    stat('C', '2025-02-01T00:00:00Z', '2025-03-01T00:00:00Z'),
  ];
  it('spans the named events, else all', () => {
    expect(spanOf(stats, ['A', 'B'])).toEqual({
      first: '2025-01-02T00:00:00Z',
      last: '2025-01-09T00:00:00Z',
    });
    expect(spanOf(stats, ['Nope'])).toEqual({ first: '2025-01-02T00:00:00Z', last: '2025-03-01T00:00:00Z' });
    expect(spanOf([], [])).toBeUndefined();
  });
});

describe('messages', () => {
  it('suggest the nearest names, quoted', () => {
    expect(unknownEventLine('Conversation Trun', ['Conversation Turn', 'Purchase'])).toBe(
      'cas: no event named "Conversation Trun" in this project; did you mean "Conversation Turn"?',
    );
    expect(unknownEventLine('Zzz', ['Purchase'])).toBe('cas: no event named "Zzz" in this project');
    expect(unknownPropertyLine('Turn', 'modle', ['model', 'mode', 'cost'])).toContain(
      'did you mean "mode" or "model"?',
    );
    expect(quoteList(['a', 'b', 'c'])).toBe('"a", "b" or "c"');
  });

  it('exactRegex escapes RE2 metacharacters', () => {
    expect(exactRegex('a.b (c)+[d]')).toBe('^a\\.b \\(c\\)\\+\\[d\\]$');
    expect(new RegExp(exactRegex('a.b*')).test('a.b*')).toBe(true);
    expect(new RegExp(exactRegex('a.b*')).test('axb')).toBe(false);
  });
});

describe('readsIntents', () => {
  it('holds for the intent charts, the intent analyses and any intent filter, not for the rest', () => {
    for (const kind of ['intent-distribution', 'sentiment-analysis', 'intent-analysis'])
      expect(readsIntents(kind, {}), kind).toBe(true);
    expect(readsIntents('conversation-analysis', { analyse: 'firstIntentFriction' })).toBe(true);
    expect(readsIntents('conversation-analysis', { analyse: 'duration' })).toBe(false);
    expect(readsIntents('segmentation', { shownIntents: [{ intent: 'refund' }] })).toBe(true);
    expect(readsIntents('segmentation', { shownIntents: [] })).toBe(false);
    expect(readsIntents('funnel', { intentFilter: { intent: 'Any Intent' } })).toBe(true);
    expect(readsIntents('segmentation', { eventFilters: [{ event_name: 'Intent' }] })).toBe(false);
  });
});
