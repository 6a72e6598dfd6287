import type { UserRecord } from '../../shared/users.js';
import { conflict, notFound } from '../errors.js';
import type { Queryable } from '../store/database.js';
import { anonymousId } from './ids.js';
import { IdentityChanges, IdentityMaps } from './model.js';
import { alias, type IdentifyInput, identify } from './rules.js';
import { loadIdentity, writeIdentity } from './store.js';

export type { IdentifyInput } from './rules.js';

/**
 * The user routes' entry points: load the few rows a request names, apply the rules of rules.ts (the
 * same ones the ingest path applies in memory), write the changes. Every function returns the
 * canonical service user id: the one a merged anonymous user now counts as.
 */
export interface Scope {
  orgId: string;
  projectId: string;
}

/**
 * Identity rows changed outside the ingest path (the user routes) must not be contradicted by the
 * ingest path's in-memory copy. The user routes report the keys they looked at or changed; the
 * ingest cache of that database (keyed by its writer connection) forgets those keys and reloads them
 * on next use. Reported before the route's commit, and applied at the next ingest batch, which the
 * database's single writer runs after that commit or rollback: either way the reload sees the truth.
 */
export interface IdentityTouch {
  ids: readonly string[];
  devices: readonly string[];
  users: readonly string[];
}

type Listener = (projectId: string, touch: IdentityTouch) => void;

const listeners = new WeakMap<object, Listener>();

/**
 * A user's ids (`user_ids i`) in order of first use (decisions §3); ids used at the same instant (a
 * batch of events without timestamps, stamped on arrival) and those stored before first uses were
 * kept (migration 9, listed first) in the order they were stored.
 */
export const ALIAS_ORDER = 'i.used_at NULLS FIRST, i.seq';

export function onIdentityTouched(writer: object, listener: Listener): () => void {
  listeners.set(writer, listener);
  return () => {
    if (listeners.get(writer) === listener) listeners.delete(writer);
  };
}

export function reportIdentityTouched(writer: object, projectId: string, touch: IdentityTouch): void {
  listeners.get(writer)?.(projectId, touch);
}

async function applied<T>(
  tx: Queryable,
  scope: Scope,
  keys: { ids: string[]; devices: string[] },
  rule: (maps: IdentityMaps, ch: IdentityChanges) => T,
): Promise<T> {
  const maps = new IdentityMaps();
  await loadIdentity(tx, scope.projectId, maps, keys);
  const ch = new IdentityChanges();
  const result = rule(maps, ch);
  await writeIdentity(tx, scope.projectId, maps, ch);
  reportIdentityTouched(tx.connection, scope.projectId, {
    ids: [...maps.ids.keys()],
    devices: [...maps.devices.keys()],
    users: [...maps.users.keys()],
  });
  return result;
}

export async function identifyUser(
  tx: Queryable,
  scope: Scope,
  input: IdentifyInput,
  at: Date,
): Promise<string> {
  const ids = input.id === undefined ? [] : [input.id];
  const devices = input.device_id === undefined ? [] : [input.device_id];
  if (input.device_id !== undefined) ids.push(anonymousId(input.device_id));
  return applied(tx, scope, { ids, devices }, (maps, ch) => identify(maps, ch, input, at.getTime()));
}

export async function aliasUser(
  tx: Queryable,
  scope: Scope,
  input: { id: string; previous_id: string },
  at: Date,
): Promise<string> {
  const outcome = await applied(tx, scope, { ids: [input.id, input.previous_id], devices: [] }, (maps, ch) =>
    alias(maps, ch, input, at.getTime()),
  );
  if (outcome.ok) return outcome.userId;
  if (outcome.reason === 'unknown_previous') throw notFound(`no user has the id "${input.previous_id}"`);
  throw conflict('conflict', `the id "${input.id}" already belongs to another user`, [
    { path: 'id', message: 'already belongs to another user' },
  ]);
}

export async function userRecord(q: Queryable, scope: Scope, userId: string): Promise<UserRecord> {
  const row = await q.one<{ primary_id: string; traits: string; created_at: Date }>(
    'SELECT primary_id, traits::VARCHAR AS traits, created_at FROM users WHERE project_id = $1 AND user_id = $2',
    [scope.projectId, userId],
  );
  if (!row) throw notFound(`no user ${userId}`);
  // Ids of merged anonymous users still name them; they count as this user's through the pointer.
  const ids = await q.all<{ id: string }>(
    `SELECT i.id FROM user_ids i JOIN users u ON u.project_id = i.project_id AND u.user_id = i.user_id
      WHERE i.project_id = $1 AND u.canonical_user_id = $2 ORDER BY ${ALIAS_ORDER}`,
    [scope.projectId, userId],
  );
  return {
    organization_id: scope.orgId,
    app_id: scope.projectId,
    user_id: userId,
    id: row.primary_id,
    aliases: ids.map((r) => r.id),
    created_at: row.created_at.toISOString(),
    traits: JSON.parse(row.traits) as UserRecord['traits'],
  };
}
