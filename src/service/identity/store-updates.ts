import type { Queryable } from '../store/database.js';
import { exec, execWhile, int, ints, text, texts } from '../store/statements.js';
import type { IdentityChanges, IdentityMaps } from './model.js';

/**
 * Existing users whose traits, primary id or created_at changed: one UPDATE for all of them, with
 * `meanwhile` (synchronous work) done while DuckDB runs it.
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
  await execWhile(
    q,
    `UPDATE users t SET
        traits = json_merge_patch(t.traits, m.patch::JSON),
        primary_id = coalesce(m.primary_id, t.primary_id),
        created_at = least(t.created_at, coalesce(make_timestamptz(m.created * 1000), t.created_at))
      FROM (SELECT unnest($2) AS user_id, unnest($3) AS patch, unnest($4) AS primary_id, unnest($5) AS created) m
      WHERE t.project_id = $1 AND t.user_id = m.user_id`,
    [
      text(project),
      texts(users),
      texts(users.map((u) => JSON.stringify(ch.traitPatches.get(u) ?? {}))),
      texts(users.map((u) => (ch.primaryChanged.has(u) ? maps.user(u).primaryId : null))),
      ints(users.map((u) => (ch.createdAtLowered.has(u) ? maps.user(u).createdAt : null))),
    ],
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
