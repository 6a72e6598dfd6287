import type { Traits } from '../../shared/primitives.js';
import type { UserRecord } from '../../shared/users.js';
import { conflict, notFound } from '../errors.js';
import type { Queryable } from '../store/database.js';
import { anonymousId, newUserId } from './ids.js';

/**
 * Identity rules of decisions §3, written against a transaction so the ingest path (session user
 * identify) and the user routes share one implementation. Every function returns the canonical
 * service user id: the one a merged anonymous user now counts as.
 */
export interface Scope {
  orgId: string;
  projectId: string;
}

type UserRow = {
  user_id: string;
  anonymous: boolean;
  traits: string;
  created_at: Date;
};

async function canonicalOf(tx: Queryable, project: string, callerId: string): Promise<string | undefined> {
  const row = await tx.one<{ user_id: string }>(
    `SELECT u.canonical_user_id AS user_id FROM user_ids i
       JOIN users u ON u.project_id = i.project_id AND u.user_id = i.user_id
      WHERE i.project_id = $1 AND i.id = $2`,
    [project, callerId],
  );
  return row?.user_id;
}

async function loadUser(tx: Queryable, project: string, userId: string): Promise<UserRow> {
  const row = await tx.one<UserRow>(
    'SELECT user_id, anonymous, traits::VARCHAR AS traits, created_at FROM users WHERE project_id = $1 AND user_id = $2',
    [project, userId],
  );
  if (!row) throw new Error(`user ${userId} vanished inside its transaction`);
  return row;
}

async function createUser(tx: Queryable, project: string, callerId: string, anonymous: boolean, at: Date) {
  const userId = newUserId(at.getTime());
  await tx.run('INSERT INTO users VALUES ($1, $2, $2, $3, $4, $5, $6)', [
    project,
    userId,
    callerId,
    anonymous,
    '{}',
    at.toISOString(),
  ]);
  await tx.run("INSERT INTO user_ids VALUES ($1, $2, $3, nextval('user_id_seq'))", [
    project,
    callerId,
    userId,
  ]);
  return userId;
}

/** Writes merged traits and moves created_at back to the earliest time seen (imports carry past dates). */
async function updateUser(
  tx: Queryable,
  project: string,
  user: UserRow,
  traits: Traits,
  at: Date,
): Promise<void> {
  const merged = { ...(JSON.parse(user.traits) as Traits), ...traits };
  await tx.run(
    'UPDATE users SET traits = $1, created_at = least(created_at, $2::TIMESTAMPTZ) WHERE project_id = $3 AND user_id = $4',
    [JSON.stringify(merged), at.toISOString(), project, user.user_id],
  );
}

/** The anonymous user's history becomes the identified user's: one pointer update, events stay put. */
async function mergeAnonymous(tx: Queryable, project: string, anon: UserRow, target: UserRow): Promise<void> {
  await tx.run('UPDATE users SET canonical_user_id = $1 WHERE project_id = $2 AND canonical_user_id = $3', [
    target.user_id,
    project,
    anon.user_id,
  ]);
  await tx.run('UPDATE user_ids SET user_id = $1 WHERE project_id = $2 AND user_id = $3', [
    target.user_id,
    project,
    anon.user_id,
  ]);
  await tx.run('UPDATE sessions SET user_id = $1 WHERE project_id = $2 AND user_id = $3', [
    target.user_id,
    project,
    anon.user_id,
  ]);
  // The identified user's own traits win over what was learnt while anonymous.
  const anonTraits = JSON.parse(anon.traits) as Traits;
  const targetTraits = JSON.parse(target.traits) as Traits;
  await tx.run(
    'UPDATE users SET traits = $1, created_at = least(created_at, $2::TIMESTAMPTZ) WHERE project_id = $3 AND user_id = $4',
    [
      JSON.stringify({ ...anonTraits, ...targetTraits }),
      anon.created_at.toISOString(),
      project,
      target.user_id,
    ],
  );
}

export interface IdentifyInput {
  id?: string | undefined;
  device_id?: string | undefined;
  traits?: Traits | undefined;
}

export async function identifyUser(
  tx: Queryable,
  scope: Scope,
  input: IdentifyInput,
  at: Date,
): Promise<string> {
  const project = scope.projectId;
  let userId: string | undefined;
  if (input.id !== undefined) {
    userId =
      (await canonicalOf(tx, project, input.id)) ?? (await createUser(tx, project, input.id, false, at));
  }
  if (input.device_id !== undefined) {
    const device = await tx.one<{ user_id: string }>(
      `SELECT u.canonical_user_id AS user_id FROM devices d
         JOIN users u ON u.project_id = d.project_id AND u.user_id = d.user_id
        WHERE d.project_id = $1 AND d.device_id = $2`,
      [project, input.device_id],
    );
    if (!device) {
      if (userId === undefined) {
        const anonId = anonymousId(input.device_id);
        userId =
          (await canonicalOf(tx, project, anonId)) ?? (await createUser(tx, project, anonId, true, at));
      }
      await tx.run('INSERT INTO devices VALUES ($1, $2, $3, NULL)', [project, input.device_id, userId]);
    } else if (userId === undefined) {
      userId = device.user_id;
    } else if (device.user_id !== userId) {
      const previous = await loadUser(tx, project, device.user_id);
      if (previous.anonymous)
        await mergeAnonymous(tx, project, previous, await loadUser(tx, project, userId));
      // A device that moves to another identified user is re-linked; the earlier user's data stays theirs.
      await tx.run('UPDATE devices SET user_id = $1 WHERE project_id = $2 AND device_id = $3', [
        userId,
        project,
        input.device_id,
      ]);
    }
  }
  if (userId === undefined) throw new Error('identify needs an id or a device_id');
  await updateUser(tx, project, await loadUser(tx, project, userId), input.traits ?? {}, at);
  return userId;
}

export async function aliasUser(
  tx: Queryable,
  scope: Scope,
  input: { id: string; previous_id: string },
  at: Date,
): Promise<string> {
  const project = scope.projectId;
  const userId = await canonicalOf(tx, project, input.previous_id);
  if (userId === undefined) throw notFound(`no user has the id "${input.previous_id}"`);
  const owner = await canonicalOf(tx, project, input.id);
  if (owner !== undefined && owner !== userId) {
    throw conflict('conflict', `the id "${input.id}" already belongs to another user`, [
      { path: 'id', message: 'already belongs to another user' },
    ]);
  }
  if (owner === undefined) {
    await tx.run("INSERT INTO user_ids VALUES ($1, $2, $3, nextval('user_id_seq'))", [
      project,
      input.id,
      userId,
    ]);
  }
  await tx.run('UPDATE users SET primary_id = $1 WHERE project_id = $2 AND user_id = $3', [
    input.id,
    project,
    userId,
  ]);
  await updateUser(tx, project, await loadUser(tx, project, userId), {}, at);
  return userId;
}

export async function userRecord(q: Queryable, scope: Scope, userId: string): Promise<UserRecord> {
  const row = await q.one<{ primary_id: string; traits: string; created_at: Date }>(
    'SELECT primary_id, traits::VARCHAR AS traits, created_at FROM users WHERE project_id = $1 AND user_id = $2',
    [scope.projectId, userId],
  );
  if (!row) throw notFound(`no user ${userId}`);
  const ids = await q.all<{ id: string }>(
    'SELECT id FROM user_ids WHERE project_id = $1 AND user_id = $2 ORDER BY seq',
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
