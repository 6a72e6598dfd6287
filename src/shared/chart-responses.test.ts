import { describe, expect, it } from 'vitest';
import { CHART_KINDS } from './chart-controls.js';
import {
  chartResponseSchemas,
  retentionResponseSchema,
  retrieveDataQuerySchema,
  retrieveDataResponseSchema,
  segmentationResponseSchema,
  sessionChartResponseSchema,
  userCompositionResponseSchema,
} from './chart-responses.js';

const bin = { start: '2025-03-09T00:00:00-05:00', end: '2025-03-10T00:00:00-04:00' };

describe('segmentation response', () => {
  it('accepts plain and grouped results', () => {
    const body = [
      {
        event_name: 'buy',
        points: [{ ...bin, total: 4, unique: 2, average: 2, drilldown_id: 'abc' }],
        highlights: { average_events: 4, average_unique_users: 2 },
      },
      {
        event_name: 'Any Event',
        groups: [{ group: 'true', points: [{ ...bin, total: 0, unique: 0, average: 0 }] }],
      },
    ];
    expect(segmentationResponseSchema.parse(body)).toEqual(body);
  });

  it('requires the SegPoint numbers and highlight fields', () => {
    const missing = segmentationResponseSchema.safeParse([
      { event_name: 'x', points: [{ ...bin, total: 1 }] },
    ]);
    expect(missing.error?.issues.map((i) => i.path.join('.'))).toEqual([
      '0.points.0.unique',
      '0.points.0.average',
    ]);
    const highlights = segmentationResponseSchema.safeParse([
      { event_name: 'x', highlights: { average_events: 1 } },
    ]);
    expect(highlights.success).toBe(false);
  });
});

describe('retention response', () => {
  it('accepts triangular rows with headers', () => {
    const cell = (count: number, percent: number) => ({ ...bin, count, percent });
    const body = [
      {
        chart_name: 'plan = pro',
        rows: [[cell(10, 100), cell(4, 40)], [cell(5, 100)]],
        column_headers: [
          { count: 15, average: 100 },
          { count: 4, average: 40 },
        ],
        row_headers: [10, 5],
        total_users: 15,
      },
    ];
    expect(retentionResponseSchema.parse(body)).toEqual(body);
    expect(retentionResponseSchema.safeParse([{ ...body[0], total_users: undefined }]).success).toBe(false);
    expect(retentionResponseSchema.safeParse([{ ...body[0], rows: [[{ ...bin, count: 1 }]] }]).success).toBe(
      false,
    );
  });
});

describe('session and user-composition responses', () => {
  it('accept the OpenAPI field names', () => {
    const point = { ...bin, sessions: 2, session_ids: ['s1', 's2'], conversations: 3, average_length: 90.5 };
    expect(sessionChartResponseSchema.parse({ chart_name: 'Sessions', points: [point] }).points).toHaveLength(
      1,
    );
    expect(
      sessionChartResponseSchema.safeParse({ chart_name: 'S', points: [{ ...point, session_ids: 2 }] })
        .success,
    ).toBe(false);
    const slice = { label: 'pro', value: 3, percent: 75 };
    const body = {
      chart_name: 'plan',
      slices: [slice, { label: '(none)', value: 1, percent: 25, drilldown_id: 't' }],
      highlights: { max_percent: 75, min_percent: 25, max_count: 3, min_count: 1 },
    };
    expect(userCompositionResponseSchema.parse(body)).toEqual(body);
    expect(
      userCompositionResponseSchema.safeParse({ chart_name: 'x', groups: [{ group: 'a' }] }).success,
    ).toBe(false);
  });

  it('has one response schema per chart kind', () => {
    expect(Object.keys(chartResponseSchemas).sort()).toEqual([...CHART_KINDS].sort());
  });
});

describe('retrieve_data', () => {
  it('answers users or sessions, told apart by kind', () => {
    const users = {
      kind: 'users',
      total: 1,
      truncated: false,
      rows: [{ user_id: 'u_1', id: 'ann', traits: { plan: 'pro' } }],
    };
    expect(retrieveDataResponseSchema.parse(users)).toEqual(users);
    const sessions = {
      kind: 'sessions',
      total: 2000,
      truncated: true,
      rows: [
        {
          session_id: 's1',
          user_id: 'u_1',
          id: 'ann',
          started_at: '2025-01-01T00:00:00.000Z',
          ended_at: null,
          conversations: 1,
        },
      ],
    };
    expect(retrieveDataResponseSchema.parse(sessions)).toEqual(sessions);
    // A session row under kind users is the wrong shape.
    expect(retrieveDataResponseSchema.safeParse({ ...sessions, kind: 'users' }).success).toBe(false);
    expect(retrieveDataQuerySchema.safeParse({ id: '' }).success).toBe(false);
  });
});
