import {
  type DbQuery,
  dbBracketTypes,
  dbParamsSchema,
  dbQuerySchema,
  dbResultSchema,
  importDemoDataSchema,
} from '../../shared/db-api.js';
import type { Limits } from '../../shared/limits.js';
import { invalidInput } from '../errors.js';
import { route } from '../http/route.js';
import type { Scope } from '../identity/identity.js';
import type { Ingestor } from '../ingest/ingestor.js';
import { re2Problem } from '../re2-check.js';
import { leaseRead } from '../read/lease.js';
import type { Database, Queryable } from '../store/database.js';
import { list } from '../store/statements.js';
import { eventDocs } from '../users/events.js';
import { userRecords } from '../users/records.js';
import { COLLECTIONS, collectionOf, compileFilter, compileSort, Params, project } from './collections.js';
import { importDemo } from './import-demo.js';

type Doc = Record<string, unknown>;

/** A projection keeps or drops top-level fields: `properties.n` answered `{}` for every document (found by probing). */
function projectionIssues(projection: DbQuery['projection']): Array<{ path: string; message: string }> {
  return Object.keys(projection ?? {})
    .filter((field) => field.includes('.'))
    .map((field) => ({
      path: `projection.${field}`,
      message: `projection takes top-level fields: ${field.slice(0, field.indexOf('.'))}`,
    }));
}

async function find(q: Queryable, scope: Scope, name: string, query: DbQuery, limit: number): Promise<Doc[]> {
  const collection = collectionOf(name);
  const spec = COLLECTIONS[collection];
  const p = new Params();
  const base = spec.base.replace('$project', p.bind(scope.projectId)); // always $1
  const filter = compileFilter(p, spec, query.filter ?? {});
  const sort = compileSort(spec, query.sort);
  const issues = [...filter.issues, ...sort.issues, ...projectionIssues(query.projection)];
  for (const r of filter.regexes) {
    const problem = await re2Problem(q, r.pattern);
    if (problem) issues.push({ path: r.path, message: problem });
  }
  if (issues.length > 0) throw invalidInput(issues);
  const where = `${base} AND (${filter.sql})`;
  const page = { order: sort.sql, limit, offset: query.skip };
  if (collection === 'events') {
    return eventDocs(q, scope, where.replace(base, 'TRUE'), p.values.slice(1), page);
  }
  const key = { users: 'user_id', sessions: 'session_id', conversations: 'conversation_id' }[collection];
  const rows = await q.all<Doc>(
    `SELECT ${spec.select ?? `${spec.alias}.* EXCLUDE (project_id)`} FROM ${spec.table} ${spec.alias} WHERE ${where}
      ORDER BY ${page.order} LIMIT ${Math.trunc(limit)} OFFSET ${Math.trunc(query.skip)}`,
    p.values,
  );
  if (collection === 'users') {
    const ids = rows.map((r) => String(r[key]));
    if (ids.length === 0) return [];
    const { users } = await userRecords(q, scope, {
      where: 'b.user_id IN (SELECT unnest($2))',
      params: [list(ids)],
    });
    const byId = new Map(users.map((u) => [u.user_id, u]));
    return ids.flatMap((id) => (byId.has(id) ? [byId.get(id) as Doc] : []));
  }
  return rows.map((r) => {
    const doc: Doc = { organization_id: scope.orgId, app_id: scope.projectId };
    for (const [k, v] of Object.entries(r)) {
      if (v instanceof Date) doc[k] = v.toISOString();
      else if (typeof v === 'string' && (k === 'attributes' || k === 'properties'))
        doc[k] = JSON.parse(v) as unknown;
      else doc[k] = v;
    }
    return doc;
  });
}

export function dbApiRoutes(db: Database, ingestor: Ingestor, limits: Limits) {
  return [
    route({
      method: 'GET',
      url: '/bc/v1/db/:collection/:op',
      tag: 'Database',
      summary: 'Find documents of a collection (users, events, sessions, conversations)',
      description:
        "A whitelist, never a raw query: filter fields are the collection's own (users: user_id, id, created_at, traits.<key>; events: event_id, event, user_id (the person's current caller id, as the documents show it), session_id, conversation_id, origin_event_id, timestamp, properties.<key>; sessions: session_id, user_id, device_id, started_at, ended_at, attributes.<key>; conversations: conversation_id, session_id, started_at, ended_at, properties.<key>), each a value (equality) or {$op: value} with $eq $ne $in $nin $gt $gte $lt $lte $regex (RE2, in DuckDB) $exists; the time fields compare with ISO 8601 times or dates only. sort: {field: 1|-1} over the scalar fields. projection: {field: 1} keeps, {field: 0} drops top-level fields (a nested one is 400). limit 100 by default, at most 1000. findOne answers the first document or null. messages, orgkeys, organizations and apps: 400. include is ignored.",
      params: dbParamsSchema,
      query: dbQuerySchema,
      bracketQuery: dbBracketTypes,
      response: dbResultSchema,
      rate: 'chart',
      handler: ({ tenant, params, query, signal }) =>
        leaseRead(
          db,
          tenant,
          async (q) => {
            const docs = await find(
              q,
              tenant,
              params.collection,
              query,
              params.op === 'findOne' ? 1 : query.limit,
            );
            const shown = docs.map((d) => project(d, query.projection));
            return params.op === 'findOne' ? (shown[0] ?? null) : shown;
          },
          signal,
        ),
    }),
    route({
      method: 'GET',
      url: '/bc/v1/db/import_demo_data',
      tag: 'Database',
      summary: 'Load the demo data (a month of a support bot, January 2025) into this project',
      description:
        "Deterministic: 40 users with plan/country/beta traits, their sessions, conversations with labelled intents, models and token counts, sent through the ingest core like any client's events. Importing again stores nothing new (accepted 0, all duplicates).",
      response: importDemoDataSchema,
      rate: 'ingest',
      handler: async ({ tenant }) => ({ status: 'ok', ...(await importDemo(ingestor, tenant, limits)) }),
    }),
  ];
}
