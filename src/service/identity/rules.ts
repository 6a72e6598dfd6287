import type { Traits } from '../../shared/primitives.js';
import { anonymousId, newUserId } from './ids.js';
import type { IdentityChanges, IdentityMaps } from './model.js';

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
    createdAt: at,
    traits: {},
  });
  maps.setId(callerId, userId);
  ch.newUsers.add(userId);
  ch.newIds.push(callerId);
  return userId;
}

/** Records that the user was seen at `at`: created_at is the earliest timestamp seen (imports go back). */
export function seenAt(maps: IdentityMaps, ch: IdentityChanges, userId: string, at: number): void {
  const info = maps.user(userId);
  if (at >= info.createdAt) return;
  info.createdAt = at;
  if (!ch.isNew(userId)) ch.createdAtLowered.add(userId);
}

/** Merges traits (last write wins); only keys whose value changes are written. */
function addTraits(
  maps: IdentityMaps,
  ch: IdentityChanges,
  userId: string,
  traits: Traits | undefined,
): void {
  if (!traits) return;
  const info = maps.user(userId);
  const changed = Object.entries(traits).filter(([key, value]) => info.traits[key] !== value);
  if (changed.length === 0) return;
  info.traits = { ...info.traits, ...Object.fromEntries(changed) };
  if (!ch.isNew(userId))
    ch.traitPatches.set(userId, { ...ch.traitPatches.get(userId), ...Object.fromEntries(changed) });
}

/** The caller id's user, created (identified, created_at = at) when nobody has the id yet. */
export function ensureIdentified(maps: IdentityMaps, ch: IdentityChanges, id: string, at: number): string {
  const existing = userOfCallerId(maps, id);
  if (existing !== undefined) {
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
  // The identified user's own traits win over what was learnt while anonymous.
  const inherited = Object.fromEntries(
    Object.entries(anonInfo.traits).filter(([key]) => maps.user(target).traits[key] === undefined),
  );
  addTraits(maps, ch, target, inherited);
}

function linkDevice(maps: IdentityMaps, ch: IdentityChanges, device: string, userId: string): void {
  const known = maps.devices.has(device);
  maps.setDevice(device, userId);
  if (!known) ch.newDevices.add(device);
  else if (!ch.newDevices.has(device)) ch.relinkedDevices.add(device);
}

/**
 * The device part of identify, for a user known by its service id: a device not yet known is linked
 * to the user; a device of another user moves to it, and if that user was anonymous its data merges in.
 */
export function claimDevice(maps: IdentityMaps, ch: IdentityChanges, userId: string, device: string): void {
  const deviceUser = userOfDevice(maps, device);
  if (deviceUser === undefined) linkDevice(maps, ch, device, userId);
  else if (deviceUser !== userId) {
    const previous = maps.user(deviceUser);
    // Merging only into identified users keeps every merge chain one hop long.
    if (previous.anonymous && !maps.user(userId).anonymous) mergeAnonymous(maps, ch, deviceUser, userId);
    // A device that moves to another identified user is re-linked; the earlier user's data stays theirs.
    else linkDevice(maps, ch, device, userId);
  }
}

/**
 * Identify: the id's user (created if new); a device not yet known is linked to it; a device of
 * another user moves to it, and if that user was anonymous its data merges in (its anonymous id
 * becomes one of the user's aliases). A device alone resolves to its user, or its anonymous one.
 */
export function identify(maps: IdentityMaps, ch: IdentityChanges, input: IdentifyInput, at: number): string {
  let userId = input.id === undefined ? undefined : ensureIdentified(maps, ch, input.id, at);
  if (input.device_id !== undefined) {
    if (userId !== undefined) claimDevice(maps, ch, userId, input.device_id);
    else {
      userId = userOfDevice(maps, input.device_id);
      if (userId === undefined) {
        userId = ensureAnonymous(maps, ch, input.device_id, at);
        linkDevice(maps, ch, input.device_id, userId);
      }
    }
  }
  if (userId === undefined) throw new Error('identify needs an id or a device_id');
  seenAt(maps, ch, userId, at);
  addTraits(maps, ch, userId, input.traits);
  return userId;
}

/** Alias: `previous` finds the user among all ids; `id` becomes primary unless another user owns it. */
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
  if (owner === undefined) {
    maps.setId(input.id, userId);
    ch.newIds.push(input.id);
  }
  const info = maps.user(userId);
  info.primaryId = input.id;
  if (!ch.isNew(userId)) ch.primaryChanged.add(userId);
  seenAt(maps, ch, userId, at);
  return { ok: true, userId };
}
