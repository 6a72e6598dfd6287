import { listUserTraits } from '../client/api-routes.js';
import { ClientError } from '../client/errors.js';
import type { Client } from '../client/http-client.js';
import type { PageChart, PageInput } from '../render/html/page.js';
import { fetchChart } from './chart.js';
import type { BuiltControls } from './chart-flags.js';
import { UnsupportedFlagError } from './errors.js';
import {
  defaultPlans,
  describeFilters,
  pickTrait,
  type ReportPlan,
  type SharedFlags,
  shellLine,
  withShared,
} from './report-charts.js';

/**
 * `cas report`: the planned charts fetched one after another (they share the service's reader pool
 * with whoever else asks) and gathered into one page's input. A chart the service refuses does not
 * sink the page: it shows the error in its place, and the failure is returned for the exit code.
 */

export interface ReportOptions {
  /** `--chart` specs, as `cas chart` words; none: the default page. */
  specs: ReadonlyArray<readonly string[]>;
  shared: SharedFlags;
  /** `--trait` for the default user-composition chart; otherwise one is picked from the data. */
  trait?: string | undefined;
  /**
   * `cas chart` words → validated controls (the CLI's own parser, so flags mean the same); `label`
   * names the `--chart` spec in errors, or the report itself for a default chart.
   */
  parse: (argv: readonly string[], label: string) => BuiltControls;
  /** Where the data comes from, for the header. */
  source: string;
  now: Date;
}

export interface ReportResult {
  page: PageInput;
  failures: ClientError[];
  /** Notes for stderr (a chart left out, and why). */
  notes: string[];
}

export interface ReportPlanned {
  plan: ReportPlan;
  argv: string[];
  built: BuiltControls;
}

/**
 * Every chart's flags checked before any connection: a typo must not first start the embedded
 * service. The default user-composition chart waits for its trait when none was given.
 */
export function planReport(options: Omit<ReportOptions, 'source' | 'now'>): ReportPlanned[] {
  const fromSpecs = options.specs.length > 0;
  const plans = fromSpecs
    ? options.specs.map((argv) => ({ title: shellLine(argv), argv: [...argv] }))
    : defaultPlans(options.trait ?? '').filter((p) => options.trait !== undefined || p.argv[0] !== 'users');
  return plans.flatMap((plan) =>
    perIntent(plan, options.shared).map(({ plan: one, shared }) => {
      const argv = withShared(one.argv, shared);
      return {
        plan: one,
        argv,
        built: options.parse(argv, fromSpecs ? `--chart "${one.title}"` : 'cas report'),
      };
    }),
  );
}

/**
 * The sentiment chart's `--intent` is the intent whose conversations it splits, one per chart: a
 * report given several (a filter of every other chart) failed whole, "the sentiment chart takes one
 * --intent" (found by probing). It draws one sentiment chart per intent, each with the `--where`
 * that followed it; `--performed` filters stay on each.
 */
function perIntent(plan: ReportPlan, shared: SharedFlags): Array<{ plan: ReportPlan; shared: SharedFlags }> {
  const groups: Array<Array<{ flag: string; value: string }>> = [];
  const rest: Array<{ flag: string; value: string }> = [];
  let current: Array<{ flag: string; value: string }> | undefined;
  for (const s of shared.sequence) {
    if (s.flag === 'intent') {
      current = [s];
      groups.push(current);
    } else if (s.flag === 'where' && current !== undefined) current.push(s);
    else {
      current = undefined;
      rest.push(s);
    }
  }
  if (plan.argv[0] !== 'sentiment' || plan.argv.includes('--intent') || groups.length < 2)
    return [{ plan, shared }];
  return groups.map((group) => ({
    plan: { title: `${plan.title}: ${group[0]?.value}`, argv: plan.argv },
    shared: { ...shared, sequence: [...rest, ...group] },
  }));
}

async function discoverTrait(client: Client): Promise<string | undefined> {
  try {
    return pickTrait(await listUserTraits(client));
  } catch (error) {
    // A service without the discovery routes (or a refusal there) leaves the chart out, not the page.
    if (error instanceof ClientError) return undefined;
    throw error;
  }
}

function csvName(index: number, argv: readonly string[]): string {
  return `${String(index + 1).padStart(2, '0')}-${argv[0] ?? 'chart'}.csv`;
}

export async function runReport(options: ReportOptions, deps: { client: Client }): Promise<ReportResult> {
  const notes: string[] = [];
  let planned = planReport(options);
  if (options.specs.length === 0 && options.trait === undefined) {
    const trait = await discoverTrait(deps.client);
    if (trait === undefined) notes.push('no user trait found: the user-composition chart is left out');
    else planned = planReport({ ...options, trait });
  }
  const charts: PageChart[] = [];
  const failures: ClientError[] = [];
  for (const [index, { plan, argv, built }] of planned.entries()) {
    const base = {
      title: plan.title,
      command: `cas chart ${shellLine(argv)}`,
      csvName: csvName(index, argv),
    };
    try {
      charts.push({ ...base, view: await fetchChart(built, deps) });
    } catch (error) {
      // A chart of our extensions (the cost chart's sum) is left out of the hosted service's page.
      if (error instanceof UnsupportedFlagError) {
        notes.push(`${plan.title}: left out: ${error.message}`);
        continue;
      }
      if (!(error instanceof ClientError)) throw error;
      failures.push(error);
      notes.push(`${plan.title}: ${error.message}`);
      charts.push({ ...base, error: error.message });
    }
  }
  return {
    page: { title: 'Conversational analytics report', facts: facts(options, planned), charts },
    failures,
    notes,
  };
}

function facts(options: ReportOptions, planned: readonly ReportPlanned[]): Array<[string, string]> {
  const range = planned[0]?.built.parsed.range;
  const out: Array<[string, string]> = [];
  if (range) {
    out.push(['Range', `${range.start} to ${range.end} (end excluded), by ${range.period}`]);
    out.push(['Time zone', range.tz]);
  }
  out.push(['Filters', describeFilters(options.shared)]);
  out.push(['Data source', options.source]);
  out.push(['Made', options.now.toISOString()]);
  return out;
}
