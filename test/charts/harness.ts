import { type ChartScope, makeContext } from '../../src/service/charts/context.js';
import { conversationAnalysisChart } from '../../src/service/charts/conversation-analysis.js';
import { funnelChart } from '../../src/service/charts/funnel.js';
import { intentAnalysisChart } from '../../src/service/charts/intent-analysis.js';
import { intentDistributionChart } from '../../src/service/charts/intent-distribution.js';
import { retentionChart } from '../../src/service/charts/retention.js';
import { retrieveData } from '../../src/service/charts/retrieve.js';
import { segmentationChart } from '../../src/service/charts/segmentation.js';
import { sentimentChart } from '../../src/service/charts/sentiment.js';
import { sessionChart } from '../../src/service/charts/session-chart.js';
import { userCompositionChart } from '../../src/service/charts/user-composition.js';
import { assertChartValid } from '../../src/service/charts/validate.js';
import { type Database, openDatabase } from '../../src/service/store/database.js';
import {
  type ChartControlsByKind,
  type ChartKind,
  parseChartControls,
} from '../../src/shared/chart-controls.js';
import type { ChartResponseByKind } from '../../src/shared/chart-responses.js';
import { LIMITS } from '../../src/shared/limits.js';

/**
 * Runs chart modules directly on a DuckDB of their own (no HTTP), the way property tests need:
 * one in-memory database per test file, a fresh project per case.
 */

export function openChartDb(): Promise<Database> {
  return openDatabase(':memory:');
}

let projects = 0;
/** A project id no earlier case used, so cases never see each other's rows. */
export function freshProject(): string {
  projects += 1;
  return `p${projects}`;
}

/** Parses controls exactly as the route does; throws on what the route would answer 400 to. */
export function controlsOf<K extends ChartKind>(kind: K, input: unknown): ChartControlsByKind[K] {
  const parsed = parseChartControls(kind, input);
  if (!parsed.ok) throw new Error(`bad controls: ${JSON.stringify(parsed.issues)}`);
  return parsed.value;
}

export async function runChart<K extends ChartKind>(
  db: Database,
  project: string,
  kind: K,
  input: unknown,
  scope: ChartScope = {},
): Promise<ChartResponseByKind[K]> {
  const controls = controlsOf(kind, input);
  await assertChartValid(db.read, controls);
  const ctx = makeContext(db.read, project, controls.range, scope, LIMITS.sessionIdsPerPoint);
  // Each branch calls the chart of `kind`; the casts only restate that correlation for TypeScript.
  switch (kind) {
    case 'segmentation':
      return (await segmentationChart(
        ctx,
        controls as ChartControlsByKind['segmentation'],
      )) as ChartResponseByKind[K];
    case 'retention':
      return (await retentionChart(
        ctx,
        controls as ChartControlsByKind['retention'],
      )) as ChartResponseByKind[K];
    case 'session':
      return (await sessionChart(ctx, controls as ChartControlsByKind['session'])) as ChartResponseByKind[K];
    case 'funnel':
      return (await funnelChart(ctx, controls as ChartControlsByKind['funnel'])) as ChartResponseByKind[K];
    case 'intent-distribution':
      return (await intentDistributionChart(
        ctx,
        controls as ChartControlsByKind['intent-distribution'],
      )) as ChartResponseByKind[K];
    case 'sentiment-analysis':
      return (await sentimentChart(
        ctx,
        controls as ChartControlsByKind['sentiment-analysis'],
      )) as ChartResponseByKind[K];
    case 'conversation-analysis':
      return (await conversationAnalysisChart(
        ctx,
        controls as ChartControlsByKind['conversation-analysis'],
      )) as ChartResponseByKind[K];
    case 'intent-analysis':
      return (await intentAnalysisChart(
        ctx,
        controls as ChartControlsByKind['intent-analysis'],
      )) as ChartResponseByKind[K];
    default:
      return (await userCompositionChart(
        ctx,
        controls as ChartControlsByKind['user-composition'],
      )) as ChartResponseByKind[K];
  }
}

export function retrieve(db: Database, project: string, id: string) {
  return retrieveData(db.read, project, id, {
    maxRows: LIMITS.drilldownRows,
    sessionIdsPerPoint: LIMITS.sessionIdsPerPoint,
  });
}

/** A response without its drilldown ids: what a reference implementation can be compared with. */
export function withoutDrilldowns<T>(value: T): T {
  return JSON.parse(
    JSON.stringify(value, (key, v: unknown) => (key === 'drilldown_id' ? undefined : v)),
  ) as T;
}
