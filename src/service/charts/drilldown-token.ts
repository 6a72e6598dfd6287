import { z } from 'zod';
import {
  CHART_KINDS,
  type ChartControlsByKind,
  type ChartKind,
  parseChartControls,
} from '../../shared/chart-controls.js';
import type { Issue } from '../../shared/errors.js';
import { LIMITS } from '../../shared/limits.js';
import type { ChartScope } from './context.js';
import { type DrilldownStore, HASH_PATTERN } from './drilldown-store.js';

/**
 * Drilldown ids (decisions §6, ARCHITECTURE "Charts"). Version 2, what charts hand out: base64url of
 * `{"v":2,"q":<hash of the chart's query>,"p":[<the point's coordinates>]}`, some 60 characters
 * whatever the query; the query itself is kept once by the DrilldownStore. Version 1, still read:
 * base64url of the whole query and point, self-contained (ids handed out before version 2).
 * Neither names organization or project; an id is always answered from the caller's own project.
 */

const index = z.number().int().nonnegative();
// group: a listed index or observed text; null is the `(none)` group of rows lacking the value.
const group = { group: z.string().max(1000).nullable().optional() };

export const drillPointSchema = z.discriminatedUnion('chart', [
  z.strictObject({ chart: z.literal('segmentation'), series: index, bin: index, ...group }),
  z.strictObject({ chart: z.literal('retention'), row: index, col: index, ...group }),
  z.strictObject({ chart: z.literal('session'), bin: index, ...group }),
  // slice: a listed index or observed label; null is the "(none)" slice of users without the trait.
  z.strictObject({ chart: z.literal('user-composition'), slice: z.string().max(1000).nullable(), ...group }),
  z.strictObject({ chart: z.literal('funnel'), step: index, ...group }),
  z.strictObject({ chart: z.literal('intent-distribution'), slice: z.string().max(1000), ...group }),
  z.strictObject({ chart: z.literal('sentiment-analysis'), slice: z.string().max(1000), ...group }),
  z.strictObject({ chart: z.literal('conversation-analysis'), bin: index, ...group }),
  z.strictObject({ chart: z.literal('intent-analysis'), bin: index, ...group }),
]);
export type DrillPoint = z.infer<typeof drillPointSchema>;

const kindSchema = z.enum(CHART_KINDS);
const scopeSchema = z.strictObject({
  session_id: z.string().max(LIMITS.idLength).optional(),
  conversation_id: z.string().max(LIMITS.idLength).optional(),
});

const v1Schema = z.strictObject({
  v: z.literal(1),
  kind: kindSchema,
  scope: scopeSchema,
  controls: z.unknown(),
  point: drillPointSchema,
});

const coordinate = z.union([index, z.string().max(1000), z.null()]);
const v2Schema = z.strictObject({
  v: z.literal(2),
  q: z.string().regex(HASH_PATTERN),
  p: z.array(coordinate).min(1).max(3),
});

const storedSchema = z.object({ kind: kindSchema, scope: scopeSchema, controls: z.unknown() });

/** Big enough for any version-1 id a query string can carry, small enough to refuse junk early. */
const MAX_TOKEN = 64 * 1024;

/** A point as the coordinates a version-2 id carries; the chart kind comes from the stored query. */
function coordinates(point: DrillPoint): Array<string | number | null> {
  const g = point.group === undefined ? [] : [point.group];
  switch (point.chart) {
    case 'segmentation':
      return [point.series, point.bin, ...g];
    case 'retention':
      return [point.row, point.col, ...g];
    case 'session':
    case 'conversation-analysis':
    case 'intent-analysis':
      return [point.bin, ...g];
    case 'funnel':
      return [point.step, ...g];
    default:
      return [point.slice, ...g];
  }
}

function pointOf(kind: ChartKind, p: ReadonlyArray<unknown>): unknown {
  const [a, b, c] = p;
  switch (kind) {
    case 'segmentation':
      return { chart: kind, series: a, bin: b, ...(c === undefined ? {} : { group: c }) };
    case 'retention':
      return { chart: kind, row: a, col: b, ...(c === undefined ? {} : { group: c }) };
    case 'session':
    case 'conversation-analysis':
    case 'intent-analysis':
      return p.length > 2 ? undefined : { chart: kind, bin: a, ...(b === undefined ? {} : { group: b }) };
    case 'funnel':
      return p.length > 2 ? undefined : { chart: kind, step: a, ...(b === undefined ? {} : { group: b }) };
    default:
      return p.length > 2 ? undefined : { chart: kind, slice: a, ...(b === undefined ? {} : { group: b }) };
  }
}

/**
 * The id maker for the points of one chart response: the query is registered once, and each point
 * only encodes its coordinates.
 */
export function tokenEncoder(
  where: { drilldowns: DrilldownStore; project: string; scope: ChartScope },
  kind: ChartKind,
  controls: unknown,
): (point: DrillPoint) => string {
  const q = where.drilldowns.register(where.project, { kind, scope: where.scope, controls });
  return (point) => Buffer.from(JSON.stringify({ v: 2, q, p: coordinates(point) })).toString('base64url');
}

export type Decoded = {
  [K in ChartKind]: { kind: K; controls: ChartControlsByKind[K]; scope: ChartScope; point: DrillPoint };
}[ChartKind];

export type DecodeResult =
  | { ok: true; value: Decoded }
  | { ok: false; issues: Issue[] }
  | { ok: false; unknown: true };

function bad(message: string): { ok: false; issues: Issue[] } {
  return { ok: false, issues: [{ path: 'id', message }] };
}

/** The query and point an id names in `project`, from the id itself (v1) or the store (v2). */
export async function decodeToken(id: string, project: string, store: DrilldownStore): Promise<DecodeResult> {
  if (id.length > MAX_TOKEN || !/^[A-Za-z0-9_-]+$/.test(id)) return bad('not a drilldown id');
  let raw: unknown;
  try {
    raw = JSON.parse(Buffer.from(id, 'base64url').toString('utf8'));
  } catch {
    return bad('not a drilldown id');
  }
  let kind: ChartKind;
  let scopeIn: z.infer<typeof scopeSchema>;
  let controlsIn: unknown;
  let pointIn: unknown;
  const v2 = v2Schema.safeParse(raw);
  if (v2.success) {
    const stored = await store.lookup(project, v2.data.q);
    if (stored === undefined) return { ok: false, unknown: true };
    const query = storedSchema.safeParse(stored);
    if (!query.success) return bad('names a query that cannot be read');
    ({ kind, scope: scopeIn, controls: controlsIn } = query.data);
    pointIn = pointOf(kind, v2.data.p);
  } else {
    const v1 = v1Schema.safeParse(raw);
    if (!v1.success) return bad('not a drilldown id');
    ({ kind, scope: scopeIn, controls: controlsIn, point: pointIn } = v1.data);
  }
  const point = drillPointSchema.safeParse(pointIn);
  if (!point.success || point.data.chart !== kind) return bad('not a drilldown id');
  const scope: ChartScope = {};
  if (scopeIn.session_id !== undefined) scope.session_id = scopeIn.session_id;
  if (scopeIn.conversation_id !== undefined) scope.conversation_id = scopeIn.conversation_id;
  const controls = parseChartControls(kind, controlsIn);
  if (!controls.ok) {
    return {
      ok: false,
      issues: controls.issues.map((i) => ({
        path: 'id',
        message: `holds bad chart controls: ${i.path}: ${i.message}`,
      })),
    };
  }
  // Safe: parseChartControls(kind, …) returned the controls of that same kind.
  return { ok: true, value: { kind, controls: controls.value, scope, point: point.data } as Decoded };
}
