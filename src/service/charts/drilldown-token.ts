import { z } from 'zod';
import { type ChartControlsByKind, type ChartKind, parseChartControls } from '../../shared/chart-controls.js';
import type { Issue } from '../../shared/errors.js';
import { LIMITS } from '../../shared/limits.js';
import type { ChartScope } from './context.js';

/**
 * Drilldown ids (decisions §6): base64url of the query that produced a point, so retrieve_data can
 * re-run it with no server-side state. The id names neither organization nor project; it is always
 * answered from the caller's own project, so an id carried to another project reveals nothing.
 */

const index = z.number().int().nonnegative();
const group = { group: z.string().max(1000).optional() };

export const drillPointSchema = z.discriminatedUnion('chart', [
  z.strictObject({ chart: z.literal('segmentation'), series: index, bin: index, ...group }),
  z.strictObject({ chart: z.literal('retention'), row: index, col: index, ...group }),
  z.strictObject({ chart: z.literal('session'), bin: index, ...group }),
  // slice: a listed index or observed label; null is the "(none)" slice of users without the trait.
  z.strictObject({ chart: z.literal('user-composition'), slice: z.string().max(1000).nullable(), ...group }),
]);
export type DrillPoint = z.infer<typeof drillPointSchema>;

const tokenSchema = z.strictObject({
  v: z.literal(1),
  kind: z.enum(['segmentation', 'retention', 'session', 'user-composition']),
  scope: z.strictObject({
    session_id: z.string().max(LIMITS.idLength).optional(),
    conversation_id: z.string().max(LIMITS.idLength).optional(),
  }),
  controls: z.unknown(),
  point: drillPointSchema,
});

/** Big enough for any controls a query string can carry, small enough to refuse junk early. */
const MAX_TOKEN = 64 * 1024;

/**
 * Encodes many points of one chart cheaply: the shared head (kind, scope, controls) is padded with
 * JSON whitespace to a multiple of 3 bytes, so its base64 is computed once and each point only
 * encodes its own tail.
 */
export function tokenEncoder(kind: ChartKind, controls: unknown, scope: ChartScope) {
  let head = `{"v":1,"kind":${JSON.stringify(kind)},"scope":${JSON.stringify(scope)},"controls":${JSON.stringify(controls)},"point":`;
  while (Buffer.byteLength(head, 'utf8') % 3 !== 0) head += ' ';
  const headB64 = Buffer.from(head, 'utf8').toString('base64url');
  return (point: DrillPoint): string =>
    headB64 + Buffer.from(`${JSON.stringify(point)}}`, 'utf8').toString('base64url');
}

export type Decoded = {
  [K in ChartKind]: { kind: K; controls: ChartControlsByKind[K]; scope: ChartScope; point: DrillPoint };
}[ChartKind];

function bad(message: string): { ok: false; issues: Issue[] } {
  return { ok: false, issues: [{ path: 'id', message }] };
}

export function decodeToken(id: string): { ok: true; value: Decoded } | { ok: false; issues: Issue[] } {
  if (id.length > MAX_TOKEN || !/^[A-Za-z0-9_-]+$/.test(id)) return bad('not a drilldown id');
  let raw: unknown;
  try {
    raw = JSON.parse(Buffer.from(id, 'base64url').toString('utf8'));
  } catch {
    return bad('not a drilldown id');
  }
  const token = tokenSchema.safeParse(raw);
  if (!token.success || token.data.point.chart !== token.data.kind) return bad('not a drilldown id');
  const { kind, point } = token.data;
  const scope: ChartScope = {};
  if (token.data.scope.session_id !== undefined) scope.session_id = token.data.scope.session_id;
  if (token.data.scope.conversation_id !== undefined)
    scope.conversation_id = token.data.scope.conversation_id;
  const controls = parseChartControls(kind, token.data.controls);
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
  return { ok: true, value: { kind, controls: controls.value, scope, point } as Decoded };
}
