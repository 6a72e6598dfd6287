import { z } from 'zod';
import type { Client } from '../client/http-client.js';
import { getChart } from '../client/routes.js';
import type { ChartView } from '../render/chart-output.js';
import type { ChartKind } from '../shared/chart-controls.js';
import { type ChartResponseByKind, chartResponseSchemas } from '../shared/chart-responses.js';
import {
  type BuiltControls,
  buildChartControls,
  type ChartEnv,
  type ChartFlags,
  type CliChart,
  originOf,
} from './chart-flags.js';
import { namingFlags } from './flag-refusals.js';
import { refuseWithout } from './service-features.js';

/**
 * `cas chart`: flags → validated chartControls → the chart route → a response checked against the
 * shared schema. Building is separate from fetching so the CLI can reject bad flags (and serve
 * `--print-controls`) before it starts or reaches any service.
 */

export interface ChartOptions {
  chart: CliChart;
  flags: ChartFlags;
  env: ChartEnv;
}

export type ChartResult = ChartView & { chart: CliChart; controls: Record<string, unknown> };

export function prepareChart(options: ChartOptions): BuiltControls {
  return buildChartControls(options.chart, options.flags, options.env);
}

/**
 * Validates like the response schema but keeps the body as received next to the parsed copy:
 * `--format json` promises the service's response unchanged, and zod drops unknown fields.
 */
function keepingRaw<T>(schema: z.ZodType<T>) {
  return z.unknown().transform((raw, ctx) => {
    const result = schema.safeParse(raw);
    if (result.success) return { raw, value: result.data };
    for (const issue of result.error.issues) {
      ctx.addIssue({ code: 'custom', path: issue.path, message: issue.message });
    }
    return z.NEVER;
  });
}

async function fetchKind<K extends ChartKind>(
  client: Client,
  kind: K,
  controls: Record<string, unknown>,
  schema: z.ZodType<ChartResponseByKind[K]>,
): Promise<{ raw: unknown; value: ChartResponseByKind[K] }> {
  return getChart(client, kind, controls, { schema: keepingRaw(schema) });
}

/** A 400 about a value from a flag (a `--where` regex only the service's RE2 judges) names the flag: exit 2. */
export async function fetchChart(built: BuiltControls, deps: { client: Client }): Promise<ChartResult> {
  await refuseUnsupported(built, deps.client);
  return namingFlags(
    () => fetchBuilt(built, deps),
    (path) => originOf(path, built.origins),
  );
}

/** Where `controls` use our chart extensions (`chart-extensions` in /healthz). */
function extensionPaths(controls: Record<string, unknown>): string[] {
  const paths = controls.conversionWindow === undefined ? [] : ['conversionWindow'];
  const filters = controls.eventFilters;
  if (Array.isArray(filters)) {
    filters.forEach((f: unknown, i) => {
      const measure = typeof f === 'object' && f !== null ? (f as { measure?: unknown }).measure : undefined;
      if (measure !== undefined && measure !== 'count') paths.push(`eventFilters[${i}].measure`);
    });
  }
  return paths;
}

/**
 * A service without our chart extensions (the hosted one) ignores them: `--measure sum:cost` drew
 * event counts under its title, and `cas report`'s cost chart likewise. Asked only when a chart uses one.
 */
async function refuseUnsupported(built: BuiltControls, client: Client): Promise<void> {
  const paths = extensionPaths(built.controls);
  if (paths.length === 0) return;
  await refuseWithout(client, 'chart-extensions', originOf(paths[0]!, built.origins) ?? paths[0]!);
}

async function fetchBuilt(built: BuiltControls, deps: { client: Client }): Promise<ChartResult> {
  const { chart, controls, parsed } = built;
  const base = { chart, controls, parsed };
  const { client } = deps;
  switch (built.kind) {
    case 'segmentation': {
      const r = await fetchKind(client, 'segmentation', controls, chartResponseSchemas.segmentation);
      return { ...base, kind: 'segmentation', response: r.value, raw: r.raw };
    }
    case 'retention': {
      const r = await fetchKind(client, 'retention', controls, chartResponseSchemas.retention);
      return { ...base, kind: 'retention', response: r.value, raw: r.raw };
    }
    case 'session': {
      const r = await fetchKind(client, 'session', controls, chartResponseSchemas.session);
      return { ...base, kind: 'session', response: r.value, raw: r.raw };
    }
    case 'user-composition': {
      const r = await fetchKind(
        client,
        'user-composition',
        controls,
        chartResponseSchemas['user-composition'],
      );
      return { ...base, kind: 'user-composition', response: r.value, raw: r.raw };
    }
    case 'funnel': {
      const r = await fetchKind(client, 'funnel', controls, chartResponseSchemas.funnel);
      return { ...base, kind: 'funnel', response: r.value, raw: r.raw };
    }
    case 'intent-distribution': {
      const schema = chartResponseSchemas['intent-distribution'];
      const r = await fetchKind(client, 'intent-distribution', controls, schema);
      return { ...base, kind: 'intent-distribution', response: r.value, raw: r.raw };
    }
    case 'sentiment-analysis': {
      const schema = chartResponseSchemas['sentiment-analysis'];
      const r = await fetchKind(client, 'sentiment-analysis', controls, schema);
      return { ...base, kind: 'sentiment-analysis', response: r.value, raw: r.raw };
    }
    case 'conversation-analysis': {
      const schema = chartResponseSchemas['conversation-analysis'];
      const r = await fetchKind(client, 'conversation-analysis', controls, schema);
      return { ...base, kind: 'conversation-analysis', response: r.value, raw: r.raw };
    }
    case 'intent-analysis': {
      const schema = chartResponseSchemas['intent-analysis'];
      const r = await fetchKind(client, 'intent-analysis', controls, schema);
      return { ...base, kind: 'intent-analysis', response: r.value, raw: r.raw };
    }
  }
}

export async function runChart(options: ChartOptions, deps: { client: Client }): Promise<ChartResult> {
  return fetchChart(prepareChart(options), deps);
}
