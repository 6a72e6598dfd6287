import type { Traits } from '../../shared/primitives.js';
import { anonymousId, newUserId } from './ids.js';
import type { IdentityChanges, IdentityMaps, TraitTimes } from './model.js';

/**
 * The identity rules of decisions §3 over in-memory maps, recording every change for the SQL writer.
 * Pure and synchronous, so the ingest planner can apply them event by event inside a batch and the
 * user routes can apply them to a few loaded rows: one implementation for both. Every function
 * returns the canonical service user id, the one a merged anonymous user now counts as.
 */

export interface IdentifyInput {
  id?: string | undefined;
  device_id?: string | undefined;
  traits?: Traits | undefined;
}

export type AliasOutcome =
  | { ok: true; userId: string }
  | { ok: false; reason: 'unknown_previous' | 'taken'; owner?: string };

/** The canonical user of a caller id, if any user has it. */
export function userOfCallerId(maps: IdentityMaps, id: string): string | undefined {
  const user = maps.userOfId(id);
  return user === undefined ? undefined : maps.canonical(user);
}

/** The canonical user of a device, if the device is known. */
export function userOfDevice(maps: IdentityMaps, device: string): string | undefined {
  const user = maps.userOfDevice(device);
  return user === undefined ? undefined : maps.canonical(user);
}

function createUser(
  maps: IdentityMaps,
  ch: IdentityChanges,
  callerId: string,
  anonymous: boolean,
  at: number,
) {
  const userId = newUserId(at);
  maps.users.set(userId, {
    canonical: userId,
    anonymous,
    primaryId: callerId,
    primaryAt: null,
    createdAt: at,
    traits: {},
    traitTimes: {},
  });
  maps.setId(callerId, userId, at);
  ch.newUsers.add(userId);
  ch.addNewId(callerId);
  return userId;
}

/**
 * Records that a record of time `at` named the caller id: its first use is the earliest such time,
 * whatever order records arrive in, and a user's aliases are listed in that order (decisions §3).
 */
function usedAt(maps: IdentityMaps, ch: IdentityChanges, id: string, at: number): void {
  const first = maps.idUses.get(id);
  if (first === undefined || first === null || at >= first) return;
  maps.idUses.set(id, at);
  if (!ch.isNewId(id)) ch.idUsesLowered.add(id);
}

/**
 * A record naming a caller id of a known user at `at`: the id's first use moves back to it if it is
 * earlier, as it does for a record that makes a session. A record joining a stored session did not,
 * so aliases were listed in another order after a split import (found by split-run fuzzing).
 */
export function idSeen(maps: IdentityMaps, ch: IdentityChanges, id: string, at: number): void {
  if (userOfCallerId(maps, id) !== undefined) usedAt(maps, ch, id, at);
}

/** Records that the user was seen at `at`: created_at is the earliest timestamp seen (imports go back). */
export function seenAt(maps: IdentityMaps, ch: IdentityChanges, userId: string, at: number): void {
  const info = maps.user(userId);
  if (at >= info.createdAt) return;
  info.createdAt = at;
  if (!ch.isNew(userId)) ch.createdAtLowered.add(userId);
}

/**
 * Whether a trait written at `at` replaces the one held (written at `heldAt`; undefined: unknown, older
 * than any). The later write wins, and at the same instant the greater value's JSON, so the outcome
 * is the same in whatever order writes arrive: an import of an older export after a newer one, or a
 * backfill split into runs, ends with the traits one pass in time order gives (decisions §3: last
 * write wins).
 */
function replaces(
  value: Traits[string],
  at: number | undefined,
  held: Traits[string] | undefined,
  heldAt: number | undefined,
): boolean {
  if (held === undefined) return true;
  const a = at ?? Number.NEGATIVE_INFINITY;
  const b = heldAt ?? Number.NEGATIVE_INFINITY;
  if (a !== b) return a > b;
  return value !== held && JSON.stringify(value) > JSON.stringify(held);
}

/** Merges traits written at `times` (one instant, or each trait's own); only what changes is written. */
function addTraits(
  maps: IdentityMaps,
  ch: IdentityChanges,
  userId: string,
  traits: Traits | undefined,
  times: number | TraitTimes,
): void {
  if (!traits) return;
  const info = maps.user(userId);
  const patch: Traits = {};
  let changed = false;
  for (const [key, value] of Object.entries(traits)) {
    const at = typeof times === 'number' ? times : times[key];
    // Whatever replaces changes the value or the time (a tie of both is no replacement).
    if (!replaces(value, at, info.traits[key], info.traitTimes[key])) continue;
    changed = true;
    // A repeated value still takes the later time, or an older write arriving next would win.
    if (info.traits[key] !== value) patch[key] = value;
    info.traits[key] = value;
    if (at === undefined) delete info.traitTimes[key];
    else info.traitTimes[key] = at;
  }
  if (changed && !ch.isNew(userId)) ch.traitPatches.set(userId, { ...ch.traitPatches.get(userId), ...patch });
}

/** The caller id's user, created (identified, created_at = at) when nobody has the id yet. */
export function ensureIdentified(maps: IdentityMaps, ch: IdentityChanges, id: string, at: number): string {
  const existing = userOfCallerId(maps, id);
  if (existing !== undefined) {
    usedAt(maps, ch, id, at);
    seenAt(maps, ch, existing, at);
    return existing;
  }
  return createUser(maps, ch, id, false, at);
}

/** A device's anonymous user (decisions §3: its id derives from the device, so re-imports converge). */
function ensureAnonymous(maps: IdentityMaps, ch: IdentityChanges, device: string, at: number): string {
  const anonId = anonymousId(device);
  const existing = userOfCallerId(maps, anonId);
  if (existing !== undefined) {
    usedAt(maps, ch, anonId, at);
    seenAt(maps, ch, existing, at);
    return existing;
  }
  return createUser(maps, ch, anonId, true, at);
}

/**
 * The anonymous user's history becomes the target's: one pointer. Events, sessions, ids and the device
 * keep naming the anonymous user, and every reader resolves them through canonical_user_id, so a
 * merge is one row update however much history the anonymous user has.
 */
function mergeAnonymous(maps: IdentityMaps, ch: IdentityChanges, anon: string, target: string): void {
  const anonInfo = maps.user(anon);
  anonInfo.canonical = target;
  if (!ch.isNew(anon)) ch.mergedAnons.add(anon);
  seenAt(maps, ch, target, anonInfo.createdAt);
  // What was learnt while anonymous merges like any write, each trait at its own time: the identified
  // user's own traits do not simply win, as which of them exist yet depends on the order of arrival.
  addTraits(maps, ch, target, anonInfo.traits, anonInfo.traitTimes);
}

/** Links the device to the user (its row's user_id) as of `at`. */
function linkDevice(
  maps: IdentityMaps,
  ch: IdentityChanges,
  device: string,
  userId: string,
  at: number,
): void {
  const known = maps.devices.has(device);
  maps.setDevice(device, userId, at);
  if (!known) ch.newDevices.add(device);
  else if (!ch.newDevices.has(device)) ch.relinkedDevices.add(device);
}

/**
 * Whether a claim of the device at `at` by `userId` is later than the link it has: the latest
 * claim keeps the device, whatever order claims arrive in (at the same instant, the greater primary
 * id, a fixed tie-break). A link of unknown time (stored before link times were) is older than any.
 */
function laterClaim(maps: IdentityMaps, device: string, holder: string, userId: string, at: number): boolean {
  const linkedAt = maps.deviceLinks.get(device) ?? null;
  if (linkedAt === null || at > linkedAt) return true;
  return at === linkedAt && maps.user(userId).primaryId > maps.user(holder).primaryId;
}

/**
 * The device part of identify, for a user known by its service id, as of `at`: a device not yet
 * known is linked to the user; a device of an anonymous user merges that user in; a device of
 * another identified user moves to this one if this claim is the later (`laterClaim`), so two
 * people identifying on one device end with the same owner whatever order their identifies arrive in.
 */
export function claimDevice(
  maps: IdentityMaps,
  ch: IdentityChanges,
  userId: string,
  device: string,
  at: number,
): void {
  const deviceUser = userOfDevice(maps, device);
  if (deviceUser === undefined) {
    linkDevice(maps, ch, device, userId, at);
    return;
  }
  const holder = maps.devices.get(device)!;
  if (deviceUser === userId) {
    // Its own device claimed again later: the link's time moves, so an earlier claim arriving next loses.
    const linkedAt = maps.deviceLinks.get(device) ?? null;
    if (linkedAt !== null && at > linkedAt) linkDevice(maps, ch, device, holder, at);
    return;
  }
  const previous = maps.user(deviceUser);
  // Merging only into identified users keeps every merge chain one hop long. The device keeps naming
  // the anonymous user, who now resolves to this one, from `at` on.
  if (previous.anonymous && !maps.user(userId).anonymous) {
    mergeAnonymous(maps, ch, deviceUser, userId);
    linkDevice(maps, ch, device, holder, at);
  }
  // A device that moves to another identified user is re-linked; the earlier user's data stays theirs.
  else if (laterClaim(maps, device, deviceUser, userId, at)) linkDevice(maps, ch, device, userId, at);
}

/**
 * Identify: the id's user (created if new); a device not yet known is linked to it; a device of
 * another user moves to it, and if that user was anonymous its data merges in (its anonymous id
 * becomes one of the user's aliases). A device alone resolves to its user, or its anonymous one.
 */
export function identify(maps: IdentityMaps, ch: IdentityChanges, input: IdentifyInput, at: number): string {
  if (input.id !== undefined)
    return identifyUser(maps, ch, ensureIdentified(maps, ch, input.id, at), input, at);
  if (input.device_id === undefined) throw new Error('identify needs an id or a device_id');
  let userId = userOfDevice(maps, input.device_id);
  if (userId === undefined) {
    userId = ensureAnonymous(maps, ch, input.device_id, at);
    linkDevice(maps, ch, input.device_id, userId, at);
  } else {
    // A record of the device alone names its anonymous id, if it has one: the id was in use from
    // the device's earliest record, whatever order they come in (aliases are listed by first use).
    usedAt(maps, ch, anonymousId(input.device_id), at);
  }
  // The device is the user's already: only its traits are written.
  return identifyUser(maps, ch, userId, input.traits === undefined ? {} : { traits: input.traits }, at);
}

/** An identify of a known user (a caller id's, or an identified session's): its device claimed, its traits written. */
export function identifyUser(
  maps: IdentityMaps,
  ch: IdentityChanges,
  userId: string,
  input: Omit<IdentifyInput, 'id'>,
  at: number,
): string {
  if (input.device_id !== undefined) claimDevice(maps, ch, userId, input.device_id, at);
  seenAt(maps, ch, userId, at);
  addTraits(maps, ch, userId, input.traits, at);
  return userId;
}

/**
 * Alias: `previous` finds the user among all ids; `id` becomes primary unless another user owns it,
 * or an alias with a later time (same instant: the greater id) already made another id primary: the
 * primary id is then the same whatever order aliases arrive in, as for traits.
 */
export function alias(
  maps: IdentityMaps,
  ch: IdentityChanges,
  input: { id: string; previous_id: string },
  at: number,
): AliasOutcome {
  const userId = userOfCallerId(maps, input.previous_id);
  if (userId === undefined) return { ok: false, reason: 'unknown_previous' };
  const owner = userOfCallerId(maps, input.id);
  if (owner !== undefined && owner !== userId) return { ok: false, reason: 'taken', owner };
  usedAt(maps, ch, input.previous_id, at);
  if (owner === undefined) {
    maps.setId(input.id, userId, at);
    ch.addNewId(input.id);
  } else usedAt(maps, ch, input.id, at);
  const info = maps.user(userId);
  // A device's anonymous user given a caller id is identified from then on: a later identify of its
  // device with another id moves the device, and no longer merges this user (with its id) away.
  if (info.anonymous) {
    info.anonymous = false;
    if (!ch.isNew(userId)) ch.primaryChanged.add(userId);
  }
  const later =
    info.primaryAt === null || at > info.primaryAt || (at === info.primaryAt && input.id > info.primaryId);
  if (later) {
    info.primaryId = input.id;
    info.primaryAt = at;
    if (!ch.isNew(userId)) ch.primaryChanged.add(userId);
  }
  seenAt(maps, ch, userId, at);
  return { ok: true, userId };
}
