import type { Traits } from '../../shared/primitives.js';
import { appendColumns } from '../store/append.js';
import type { Queryable } from '../store/database.js';
import { exec, int, ints, rows, rowsByKeys, text, texts, tsFromMs } from '../store/statements.js';
import type { IdentityChanges, IdentityMaps, IdentityWrite, TraitTimes } from './model.js';
import { mergeUsers, updateUsers } from './store-updates.js';

type UserRow = {
  user_id: string;
  canonical_user_id: string;
  anonymous: boolean;
  primary_id: string;
  primary_at: number | null;
  created: number;
  traits: string;
  trait_times: string | null;
};

/** Users on the merge chains of `wanted` that are not loaded yet. */
function missingUsers(maps: IdentityMaps, wanted: Iterable<string>): string[] {
  const missing = new Set<string>();
  for (const start of wanted) {
    let current = start;
    for (let hops = 0; hops < 16; hops++) {
      const info = maps.users.get(current);
      if (!info) {
        missing.add(current);
        break;
      }
      if (info.canonical === current) break;
      current = info.canonical;
    }
  }
  return [...missing];
}

async function loadUsers(q: Queryable, project: string, maps: IdentityMaps, wanted: Iterable<string>) {
  const starts = [...new Set(wanted)];
  // Stored pointers are flat, so two rounds suffice; a pointer at a missing row ends the walk.
  for (let round = 0, pending = missingUsers(maps, starts); round < 3 && pending.length > 0; round++) {
    const found = await rowsByKeys<UserRow>(q, pending, (chunk) => ({
      sql: `SELECT user_id, canonical_user_id, anonymous, primary_id, epoch_ms(primary_at)::DOUBLE AS primary_at,
                   epoch_ms(created_at)::DOUBLE AS created,
                   traits::VARCHAR AS traits, trait_times::VARCHAR AS trait_times
              FROM users WHERE project_id = $1 AND user_id IN (SELECT unnest($2))`,
      params: [text(project), texts(chunk)],
    }));
    if (found.length === 0) return;
    for (const r of found) {
      maps.users.set(r.user_id, {
        canonical: r.canonical_user_id,
        anonymous: r.anonymous,
        primaryId: r.primary_id,
        primaryAt: r.primary_at,
        createdAt: r.created,
        traits: JSON.parse(r.traits) as Traits,
        traitTimes: r.trait_times === null ? {} : (JSON.parse(r.trait_times) as TraitTimes),
      });
    }
    pending = missingUsers(maps, starts);
  }
}

/**
 * Loads the given caller ids and devices (and the users behind them, and `users` as such) into
 * `maps`, skipping what is already there; keys the database does not hold are recorded as absent.
 */
export async function loadIdentity(
  q: Queryable,
  project: string,
  maps: IdentityMaps,
  keys: { ids?: Iterable<string>; devices?: Iterable<string>; users?: Iterable<string> },
): Promise<void> {
  const named = { ids: [...new Set(keys.ids ?? [])], devices: [...new Set(keys.devices ?? [])] };
  const ids = named.ids.filter((k) => maps.needsLoad('ids', k));
  const devices = named.devices.filter((k) => maps.needsLoad('devices', k));
  const users = new Set(keys.users ?? []);
  // A key loaded earlier keeps its user only while that user is loaded: the user routes make the
  // ingest cache drop a user they changed, not the ids and devices that name it (project-cache.ts
  // `identityTouched`), and an identify on a device an alias had touched the user of was a 500 (probe).
  // Named now, it is the most recently used (IdentityMaps.letGo).
  for (const k of named.ids) {
    const user = maps.ids.get(k);
    if (user === undefined) continue;
    users.add(user);
    maps.touch('ids', k);
  }
  for (const k of named.devices) {
    const user = maps.devices.get(k);
    if (user === undefined) continue;
    users.add(user);
    maps.touch('devices', k);
  }
  // Each key's user and the time kept with it (an id's first use, a device's link).
  const keyed = (
    table: 'user_ids' | 'devices',
    key: 'id' | 'device_id',
    time: 'used_at' | 'linked_at',
    keys: string[],
  ) =>
    rowsByKeys<{ key: string; user_id: string; at: number | null }>(q, keys, (chunk) => ({
      sql: `SELECT ${key} AS key, user_id, epoch_ms(${time})::DOUBLE AS at
              FROM ${table} WHERE project_id = $1 AND ${key} IN (SELECT unnest($2))`,
      params: [text(project), texts(chunk)],
    }));
  const at = (r: { at: number | null }) => (r.at === null ? null : Number(r.at));
  for (const r of await keyed('user_ids', 'id', 'used_at', ids)) {
    maps.ids.set(r.key, r.user_id);
    maps.idUses.set(r.key, at(r));
    users.add(r.user_id);
  }
  for (const id of ids) if (!maps.ids.has(id)) maps.absent.ids.add(id);
  for (const r of await keyed('devices', 'device_id', 'linked_at', devices)) {
    maps.devices.set(r.key, r.user_id);
    maps.deviceLinks.set(r.key, at(r));
    users.add(r.user_id);
  }
  for (const d of devices) if (!maps.devices.has(d)) maps.absent.devices.add(d);
  await loadUsers(q, project, maps, users);
}

/** A user's trait times as stored: null while it has none (most users never get traits). */
const timesJson = (times: TraitTimes): string | null =>
  Object.keys(times).length === 0 ? null : JSON.stringify(times);

/** Sequence values handed out in blocks: one query per few thousand new ids instead of one per batch. */
const reserved = new WeakMap<object, { next: number; end: number }>();

async function sequenceValues(q: Queryable, count: number): Promise<number[]> {
  let block = reserved.get(q.connection);
  if (!block || block.end - block.next < count) {
    const size = Math.max(count, 4096);
    const [range] = await rows<{ first: number; last: number }>(
      q,
      "SELECT min(v)::DOUBLE AS first, max(v)::DOUBLE AS last FROM (SELECT nextval('user_id_seq') AS v FROM range($1))",
      [int(size)],
    );
    // Only the writer connection draws from the sequence, so a block is contiguous.
    block = { next: range!.first, end: range!.last + 1 };
    reserved.set(q.connection, block);
  }
  const values = Array.from({ length: count }, (_, i) => block.next + i);
  block.next += count;
  return values;
}

/**
 * Writes what the rules changed: rows new in this work are appended once with their final values;
 * existing rows get one statement per table, and only when something changed. A merge moves one
 * pointer (users.canonical_user_id): ids, devices, sessions and events keep naming the anonymous
 * user and readers resolve them through it. `meanwhile`: synchronous work to do while DuckDB runs
 * the users UPDATE (see `execWhile`).
 */
export function writeIdentity(
  q: Queryable,
  project: string,
  maps: IdentityMaps,
  ch: IdentityChanges,
  meanwhile: () => void = () => undefined,
): Promise<void> {
  return writeIdentities(q, [{ project, maps, ch }], meanwhile);
}

/**
 * `writeIdentity` for several projects at once (an ingest group's): each append and statement takes
 * the rows of all of them, matched by project and key, as a statement costs about the same for a
 * few rows as for one (by hand: 16 projects' identity writes, ~0.4 ms each, were 6.4 ms of a group
 * of 3-event requests).
 */
export async function writeIdentities(
  q: Queryable,
  all: readonly IdentityWrite[],
  meanwhile: () => void = () => undefined,
): Promise<void> {
  const writes = all.filter((w) => !w.ch.empty);
  if (writes.length === 0) return;
  const users = writes.flatMap((w) => [...w.ch.newUsers].map((u) => ({ w, u, info: w.maps.user(u) })));
  await appendColumns(q, 'users', [
    users.map((r) => r.w.project),
    users.map((r) => r.u),
    users.map((r) => r.w.maps.canonical(r.u)),
    users.map((r) => r.info.primaryId),
    users.map((r) => r.info.anonymous),
    users.map((r) => JSON.stringify(r.info.traits)),
    users.map((r) => r.info.createdAt),
    users.map((r) => timesJson(r.info.traitTimes)),
    users.map((r) => r.info.primaryAt),
  ]);
  const ids = writes.flatMap((w) => w.ch.newIds.map((id) => ({ w, id })));
  const seqs = ids.length > 0 ? await sequenceValues(q, ids.length) : [];
  await appendColumns(q, 'user_ids', [
    ids.map((r) => r.w.project),
    ids.map((r) => r.id),
    ids.map((r) => r.w.maps.ids.get(r.id)!),
    seqs,
    ids.map((r) => r.w.maps.idUses.get(r.id) ?? null),
  ]);
  const lowered = writes.flatMap((w) => [...w.ch.idUsesLowered].map((id) => ({ w, id })));
  if (lowered.length > 0)
    await exec(
      q,
      `UPDATE user_ids i SET used_at = ${tsFromMs('m.at')}
         FROM (SELECT unnest($1) AS p, unnest($2) AS id, unnest($3) AS at) m
        WHERE i.project_id = m.p AND i.id = m.id`,
      [
        texts(lowered.map((r) => r.w.project)),
        texts(lowered.map((r) => r.id)),
        ints(lowered.map((r) => r.w.maps.idUses.get(r.id) ?? null)),
      ],
    );
  const devices = writes.flatMap((w) => [...w.ch.newDevices].map((d) => ({ w, d })));
  await appendColumns(q, 'devices', [
    devices.map((r) => r.w.project),
    devices.map((r) => r.d),
    devices.map((r) => r.w.maps.devices.get(r.d)!),
    devices.map(() => null),
    devices.map((r) => r.w.maps.deviceLinks.get(r.d) ?? null),
  ]);
  await updateUsers(q, writes, meanwhile);
  await mergeUsers(q, writes);
  const relinked = writes.flatMap((w) => [...w.ch.relinkedDevices].map((d) => ({ w, d })));
  if (relinked.length > 0)
    await exec(
      q,
      `UPDATE devices d SET user_id = m.u, linked_at = ${tsFromMs('m.at')}
         FROM (SELECT unnest($1) AS p, unnest($2) AS dev, unnest($3) AS u, unnest($4) AS at) m
        WHERE d.project_id = m.p AND d.device_id = m.dev`,
      [
        texts(relinked.map((r) => r.w.project)),
        texts(relinked.map((r) => r.d)),
        texts(relinked.map((r) => r.w.maps.devices.get(r.d)!)),
        ints(relinked.map((r) => r.w.maps.deviceLinks.get(r.d) ?? null)),
      ],
    );
}
