import type { Queryable } from '../store/database.js';
import { bools, exec, execWhile, int, ints, type Param, texts } from '../store/statements.js';
import type { IdentityWrite } from './model.js';

/**
 * Existing users whose traits (or their times), primary id or created_at changed: one UPDATE for all
 * of them, setting only the columns some of them changed, with `meanwhile` (synchronous work) done
 * while DuckDB runs it.
 * An import's usual change is an earlier created_at alone (a user's earlier session sorted later):
 * setting that one column took 2.0-2.6 ms against 3.1-4.6 ms for all three (40 users of a 5,000-user
 * table, medians of 15), whose traits DuckDB merged and rewrote unchanged.
 */
export async function updateUsers(
  q: Queryable,
  writes: readonly IdentityWrite[],
  meanwhile: () => void = () => undefined,
): Promise<void> {
  const users = writes.flatMap(({ project, maps, ch }) =>
    [...new Set([...ch.traitPatches.keys(), ...ch.primaryChanged, ...ch.createdAtLowered])].map((u) => ({
      project,
      u,
      info: maps.user(u),
      ch,
    })),
  );
  if (users.length === 0) return;
  const params: Param[] = [texts(users.map((r) => r.project)), texts(users.map((r) => r.u))];
  const sets: string[] = [];
  const columns = ['unnest($1) AS project_id', 'unnest($2) AS user_id'];
  const set = (assignment: string, column: string, values: Param) => {
    params.push(values);
    columns.push(`unnest($${params.length}) AS ${column}`);
    sets.push(assignment);
  };
  if (writes.some((w) => w.ch.traitPatches.size > 0)) {
    set(
      'traits = json_merge_patch(t.traits, m.patch::JSON)',
      'patch',
      texts(users.map((r) => JSON.stringify(r.ch.traitPatches.get(r.u) ?? {}))),
    );
    // The times in memory are whole (loaded with the row): written as they are, not patched.
    set(
      'trait_times = coalesce(m.times::JSON, t.trait_times)',
      'times',
      texts(users.map((r) => (r.ch.traitPatches.has(r.u) ? JSON.stringify(r.info.traitTimes) : null))),
    );
  }
  if (writes.some((w) => w.ch.primaryChanged.size > 0)) {
    const changed = (r: (typeof users)[number]) => r.ch.primaryChanged.has(r.u);
    set(
      'primary_id = coalesce(m.primary_id, t.primary_id)',
      'primary_id',
      texts(users.map((r) => (changed(r) ? r.info.primaryId : null))),
    );
    set(
      'primary_at = coalesce(make_timestamptz(m.primary_at * 1000), t.primary_at)',
      'primary_at',
      ints(users.map((r) => (changed(r) ? r.info.primaryAt : null))),
    );
    // An anonymous user an alias gave a caller id is identified (rules.ts alias).
    set(
      'anonymous = coalesce(m.anonymous, t.anonymous)',
      'anonymous',
      bools(users.map((r) => (changed(r) ? r.info.anonymous : null))),
    );
  }
  if (writes.some((w) => w.ch.createdAtLowered.size > 0))
    set(
      'created_at = least(t.created_at, coalesce(make_timestamptz(m.created * 1000), t.created_at))',
      'created',
      ints(users.map((r) => (r.ch.createdAtLowered.has(r.u) ? r.info.createdAt : null))),
    );
  await execWhile(
    q,
    `UPDATE users t SET ${sets.join(', ')}
      FROM (SELECT ${columns.join(', ')}) m
      WHERE t.project_id = m.project_id AND t.user_id = m.user_id`,
    params,
    meanwhile,
  );
}

/**
 * Existing anonymous users merged into an identified one: only the canonical pointer moves (the rules
 * already folded their traits into the target's). Merges only ever target identified users, so
 * updating the anonymous rows themselves keeps every pointer one hop; their created_at (known
 * exactly in memory) bounds the scan to the row groups that can hold them.
 */
export async function mergeUsers(q: Queryable, writes: readonly IdentityWrite[]): Promise<void> {
  const anons = writes.flatMap(({ project, maps, ch }) =>
    [...ch.mergedAnons].map((anon) => ({
      project,
      anon,
      target: maps.canonical(anon),
      created: maps.user(anon).createdAt,
    })),
  );
  if (anons.length === 0) return;
  const created = anons.map((r) => r.created);
  await exec(
    q,
    `UPDATE users u SET canonical_user_id = m.target
       FROM (SELECT unnest($1) AS p, unnest($2) AS anon, unnest($3) AS target) m
      WHERE u.project_id = m.p AND u.user_id = m.anon
        AND u.created_at BETWEEN make_timestamptz($4 * 1000) AND make_timestamptz($5 * 1000)`,
    [
      texts(anons.map((r) => r.project)),
      texts(anons.map((r) => r.anon)),
      texts(anons.map((r) => r.target)),
      int(Math.min(...created)),
      int(Math.max(...created)),
    ],
  );
}
