import type { UserRecord } from '../../shared/users.js';
import { notFound } from '../errors.js';
import { ALIAS_ORDER, type Scope } from '../identity/identity.js';
import type { Queryable } from '../store/database.js';
import type { StoreValue } from '../store/statements.js';

/**
 * User records in bulk, as identify returns one (decisions §3): persons only (merged anonymous users
 * count through their canonical user, their ids among its aliases). `where` and `order` are fixed
 * SQL written by callers in this service, over alias `b` (a `users` row); values travel as params.
 */
export interface RecordsQuery {
  where?: string;
  params?: StoreValue[];
  order?: string;
  limit?: number;
  offset?: number;
}

type Row = {
  user_id: string;
  primary_id: string;
  traits: string;
  created_at: Date;
  aliases: string[] | null;
  total: bigint | number;
};

export async function userRecords(
  q: Queryable,
  scope: Scope,
  query: RecordsQuery = {},
): Promise<{ users: UserRecord[]; total: number }> {
  const params = [scope.projectId, ...(query.params ?? [])];
  const limit = query.limit === undefined ? '' : `LIMIT ${Math.trunc(query.limit)}`;
  const offset = query.offset === undefined ? '' : `OFFSET ${Math.trunc(query.offset)}`;
  const order = query.order ?? 'b.created_at, b.user_id';
  // The page first, then the aliases of its users only: gathered for every user of the project
  // before the page was cut, a page of 100 of 60k users cost a sizeable share of listing them all
  // (found by probing).
  const rows = await q.all<Row>(
    `WITH page AS (
       SELECT b.user_id, b.primary_id, b.traits::VARCHAR AS traits, b.created_at,
              count(*) OVER () AS total, row_number() OVER (ORDER BY ${order}) AS place
         FROM users b
        WHERE b.project_id = $1 AND b.user_id = b.canonical_user_id AND (${query.where ?? 'TRUE'})
        ORDER BY ${order} ${limit} ${offset}),
     ids AS (
       SELECT u.canonical_user_id AS owner, list(i.id ORDER BY ${ALIAS_ORDER}) AS aliases
         FROM user_ids i JOIN users u ON u.project_id = i.project_id AND u.user_id = i.user_id
        WHERE i.project_id = $1 AND u.canonical_user_id IN (SELECT user_id FROM page) GROUP BY ALL)
     SELECT page.*, ids.aliases FROM page LEFT JOIN ids ON ids.owner = page.user_id ORDER BY page.place`,
    params,
  );
  const total = rows.length > 0 ? Number(rows[0]!.total) : await countOnly(q, scope, query);
  return {
    total,
    users: rows.map((r) => ({
      organization_id: scope.orgId,
      app_id: scope.projectId,
      user_id: r.user_id,
      id: r.primary_id,
      aliases: r.aliases ?? [],
      created_at: r.created_at.toISOString(),
      traits: JSON.parse(r.traits) as UserRecord['traits'],
    })),
  };
}

/** An offset past the end, or limit 0, returns no rows, so the total is counted apart. */
async function countOnly(q: Queryable, scope: Scope, query: RecordsQuery): Promise<number> {
  if ((query.offset === undefined || query.offset === 0) && query.limit !== 0) return 0;
  const row = await q.one<{ n: bigint }>(
    `SELECT count(*) AS n FROM users b WHERE b.project_id = $1 AND b.user_id = b.canonical_user_id AND (${query.where ?? 'TRUE'})`,
    [scope.projectId, ...(query.params ?? [])],
  );
  return Number(row?.n ?? 0);
}

/**
 * The person a route's `user_id` names: the service id (`u_…`, resolved to the user it was merged
 * into) or any caller id the user has had. 404 when none.
 */
export async function resolvePerson(q: Queryable, scope: Scope, userId: string): Promise<string> {
  const row = await q.one<{ person: string }>(
    `SELECT u.canonical_user_id AS person FROM users u
      WHERE u.project_id = $1 AND (u.user_id = $2
        OR u.user_id = (SELECT i.user_id FROM user_ids i WHERE i.project_id = $1 AND i.id = $2 LIMIT 1))
      LIMIT 1`,
    [scope.projectId, userId],
  );
  if (!row) throw notFound(`no user "${userId}" in this project`);
  return row.person;
}
