import type { ChartControlsByKind, ChartKind } from '../../shared/chart-controls.js';
import type { Scalar } from '../../shared/primitives.js';
import { READ_LIMITS } from '../../shared/read-limits.js';
import { ServiceError } from '../errors.js';

/**
 * How big one chart response may get. A retention chart from 2007 by week has 499,500 cells, and
 * every point carries a drilldown id (and a session-chart point up to 1,000 session ids): without a
 * bound, one GET built hundreds of megabytes and twenty of them ran the heap out. The cell count is
 * checked from the controls before any query runs; bytes are counted as points are built, so an
 * oversized answer stops at the budget instead of after it is built.
 */
export interface ChartBudget {
  /** Points (retention cells, composition slices) one response may hold. */
  maxCells: number;
  /** Approximate bytes of one response's JSON. */
  maxBytes: number;
}

export const CHART_BUDGET_DEFAULTS: ChartBudget = {
  maxCells: READ_LIMITS.chartCells,
  maxBytes: READ_LIMITS.responseBytes,
};

/** JSON bytes of a point besides its drilldown id and lists: ISO times, numbers, key names. */
export const POINT_BYTES = 160;

const HINT = 'narrow the range, use a longer period, or ask for fewer filters and groups';

function tooLarge(what: string): ServiceError {
  return new ServiceError(400, 'invalid_input', `chart too large: ${what}; ${HINT}`);
}

const listed = (values: ReadonlyArray<Scalar> | undefined) =>
  values !== undefined && values.length > 0 ? values.length : 1;

/** The points a chart will have at least (observed groups count as one), from its controls alone. */
export function cellsAtLeast<K extends ChartKind>(kind: K, c: ChartControlsByKind[K], bins: number): number {
  switch (kind) {
    case 'segmentation': {
      const s = c as ChartControlsByKind['segmentation'];
      return s.eventFilters.reduce((n, f) => n + bins * listed(f.groupBy?.property_values), 0);
    }
    case 'retention': {
      const r = c as ChartControlsByKind['retention'];
      return ((bins * (bins + 1)) / 2) * listed(r.groupBy?.trait_values);
    }
    case 'session':
      return bins * listed((c as ChartControlsByKind['session']).groupBy?.trait_values);
    case 'conversation-analysis':
    case 'intent-analysis':
      return bins * listed((c as ChartControlsByKind['intent-analysis']).groupBy?.trait_values);
    case 'funnel': {
      const f = c as ChartControlsByKind['funnel'];
      return f.eventFilters.length * listed(f.groupBy?.trait_values);
    }
    default:
      return 1;
  }
}

/** Refuses, before any query, a chart whose points alone exceed the budget. */
export function assertCells(cells: number, budget: ChartBudget): void {
  if (cells > budget.maxCells) {
    throw tooLarge(
      `it would have ${cells.toLocaleString('en-US')} points, more than the ${budget.maxCells.toLocaleString('en-US')} one response may hold (cas serve --max-chart-points)`,
    );
  }
}

/** Counts the points and bytes of one response as it is built. */
export class ResponseBudget {
  private cells = 0;
  private bytes = 0;

  constructor(readonly limits: ChartBudget = CHART_BUDGET_DEFAULTS) {}

  /** One more point of about `bytes` bytes; throws the 400 once the response would exceed the budget. */
  point(bytes: number): void {
    this.cells += 1;
    this.bytes += bytes;
    if (this.cells > this.limits.maxCells) assertCells(this.cells, this.limits);
    if (this.bytes > this.limits.maxBytes) {
      throw tooLarge(
        `the response would exceed ${Math.round(this.limits.maxBytes / 1024 / 1024)} MiB (drilldown ids and session ids included; cas serve --max-response)`,
      );
    }
  }
}
