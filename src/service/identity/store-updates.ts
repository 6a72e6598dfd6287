import type { Queryable } from '../store/database.js';
import { bools, exec, execWhile, int, ints, type Param, text, texts } from '../store/statements.js';
import type { IdentityChanges, IdentityMaps } from './model.js';

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
  project: string,
  maps: IdentityMaps,
  ch: IdentityChanges,
  meanwhile: () => void = () => undefined,
): Promise<void> {
  const users = [...new Set([...ch.traitPatches.keys(), ...ch.primaryChanged, ...ch.createdAtLowered])];
  if (users.length === 0) return;
  const params: Param[] = [text(project), texts(users)];
  const sets: string[] = [];
  const columns = ['unnest($2) AS user_id'];
  const set = (assignment: string, column: string, values: Param) => {
    params.push(values);
    columns.push(`unnest($${params.length}) AS ${column}`);
    sets.push(assignment);
  };
  if (ch.traitPatches.size > 0) {
    set(
      'traits = json_merge_patch(t.traits, m.patch::JSON)',
      'patch',
      texts(users.map((u) => JSON.stringify(ch.traitPatches.get(u) ?? {}))),
    );
    // The times in memory are whole (loaded with the row): written as they are, not patched.
    set(
      'trait_times = coalesce(m.times::JSON, t.trait_times)',
      'times',
      texts(users.map((u) => (ch.traitPatches.has(u) ? JSON.stringify(maps.user(u).traitTimes) : null))),
    );
  }
  if (ch.primaryChanged.size > 0) {
    set(
      'primary_id = coalesce(m.primary_id, t.primary_id)',
      'primary_id',
      texts(users.map((u) => (ch.primaryChanged.has(u) ? maps.user(u).primaryId : null))),
    );
    set(
      'primary_at = coalesce(make_timestamptz(m.primary_at * 1000), t.primary_at)',
      'primary_at',
      ints(users.map((u) => (ch.primaryChanged.has(u) ? maps.user(u).primaryAt : null))),
    );
    // An anonymous user an alias gave a caller id is identified (rules.ts alias).
    set(
      'anonymous = coalesce(m.anonymous, t.anonymous)',
      'anonymous',
      bools(users.map((u) => (ch.primaryChanged.has(u) ? maps.user(u).anonymous : null))),
    );
  }
  if (ch.createdAtLowered.size > 0)
    set(
      'created_at = least(t.created_at, coalesce(make_timestamptz(m.created * 1000), t.created_at))',
      'created',
      ints(users.map((u) => (ch.createdAtLowered.has(u) ? maps.user(u).createdAt : null))),
    );
  await execWhile(
    q,
    `UPDATE users t SET ${sets.join(', ')}
      FROM (SELECT ${columns.join(', ')}) m
      WHERE t.project_id = $1 AND t.user_id = m.user_id`,
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
export async function mergeUsers(
  q: Queryable,
  project: string,
  maps: IdentityMaps,
  ch: IdentityChanges,
): Promise<void> {
  if (ch.mergedAnons.size === 0) return;
  const anons = [...ch.mergedAnons];
  const created = anons.map((anon) => maps.user(anon).createdAt);
  await exec(
    q,
    `UPDATE users u SET canonical_user_id = m.target FROM (SELECT unnest($2) AS anon, unnest($3) AS target) m
      WHERE u.project_id = $1 AND u.user_id = m.anon
        AND u.created_at BETWEEN make_timestamptz($4 * 1000) AND make_timestamptz($5 * 1000)`,
    [
      text(project),
      texts(anons),
      texts(anons.map((anon) => maps.canonical(anon))),
      int(Math.min(...created)),
      int(Math.max(...created)),
    ],
  );
}
