import { describe, expect, it } from 'vitest';
import { anonymousId } from './ids.js';
import { IdentityChanges, IdentityMaps, type UserInfo } from './model.js';
import { alias, identify, userOfCallerId, userOfDevice } from './rules.js';

/** A user as loaded from the store: not merged, its creation id primary. */
function storedUser(
  maps: IdentityMaps,
  userId: string,
  info: Pick<UserInfo, 'primaryId' | 'createdAt' | 'traits' | 'traitTimes'> & { anonymous?: boolean },
): void {
  maps.users.set(userId, { canonical: userId, primaryAt: null, ...info, anonymous: info.anonymous ?? false });
}

describe('identity rules (decisions §3)', () => {
  it('creates a user per new id and an anonymous user per unknown device, dated by their first event', () => {
    const maps = new IdentityMaps();
    const ch = new IdentityChanges();
    const alice = identify(maps, ch, { id: 'alice' }, 100);
    const anon = identify(maps, ch, { device_id: 'd1' }, 50);
    expect(maps.user(alice)).toMatchObject({ anonymous: false, primaryId: 'alice', createdAt: 100 });
    expect(maps.user(anon)).toMatchObject({ anonymous: true, primaryId: anonymousId('d1'), createdAt: 50 });
    expect(ch.newIds).toEqual(['alice', anonymousId('d1')]);
    expect([...ch.newDevices]).toEqual(['d1']);
    expect(identify(maps, ch, { device_id: 'd1' }, 200)).toBe(anon);
  });

  it('merges a device’s anonymous user into the identified one; the later write of a trait wins', () => {
    const maps = new IdentityMaps();
    const ch = new IdentityChanges();
    const anon = identify(maps, ch, { device_id: 'd1', traits: { os: 'ios', plan: 'free' } }, 10);
    const bob = identify(maps, ch, { id: 'bob', device_id: 'd1', traits: { plan: 'pro' } }, 20);
    expect(bob).not.toBe(anon);
    expect(maps.canonical(anon)).toBe(bob);
    expect(userOfDevice(maps, 'd1')).toBe(bob);
    expect(userOfCallerId(maps, anonymousId('d1'))).toBe(bob);
    expect(maps.user(bob).traits).toEqual({ os: 'ios', plan: 'pro' });
    expect(ch.newUsers.has(bob)).toBe(true);
    expect(maps.user(bob).createdAt).toBe(10);
    // Both were new in this work: nothing to update, only rows to insert.
    expect(ch.mergedAnons.size + ch.relinkedDevices.size + ch.traitPatches.size).toBe(0);
  });

  it('records changes to stored rows as updates, and moves a device between identified users', () => {
    const maps = new IdentityMaps();
    storedUser(maps, 'u_anon', {
      anonymous: true,
      primaryId: 'anon_x',
      createdAt: 5,
      traits: { os: 'ios' },
      traitTimes: { os: 5 },
    });
    storedUser(maps, 'u_carol', {
      primaryId: 'carol',
      createdAt: 50,
      traits: { vip: true },
      traitTimes: { vip: 50 },
    });
    storedUser(maps, 'u_dan', {
      primaryId: 'dan',
      createdAt: 1,
      traits: {},
      traitTimes: {},
    });
    maps.ids.set('carol', 'u_carol').set('dan', 'u_dan');
    maps.devices.set('dev', 'u_anon').set('shared', 'u_dan');
    const ch = new IdentityChanges();
    identify(maps, ch, { id: 'carol', device_id: 'dev', traits: { vip: true } }, 60);
    expect([...ch.mergedAnons]).toEqual(['u_anon']);
    expect([...ch.createdAtLowered]).toEqual(['u_carol']);
    // A value already stored is not written again, only its later time; the anonymous user's new ones are.
    expect(ch.traitPatches.get('u_carol')).toEqual({ os: 'ios' });
    expect(maps.user('u_carol').traits).toEqual({ vip: true, os: 'ios' });
    expect(maps.user('u_carol').traitTimes).toEqual({ vip: 60, os: 5 });
    identify(maps, ch, { id: 'carol', device_id: 'shared' }, 70);
    // The merged device keeps naming its anonymous user, from 60 on; the other moves to carol.
    expect([...ch.relinkedDevices]).toEqual(['dev', 'shared']);
    expect(maps.deviceLinks.get('dev')).toBe(60);
    expect(maps.devices.get('shared')).toBe('u_carol');
    expect(maps.canonical('u_dan')).toBe('u_dan');
  });

  it('gives a device to the latest of the people identifying on it, whatever order they arrive in', () => {
    const claims: Array<[string, number]> = [
      ['a', 10],
      ['b', 20],
      ['a', 30],
      ['c', 30],
    ];
    const orders = [
      [0, 1, 2, 3],
      [3, 2, 1, 0],
      [1, 3, 0, 2],
      [2, 0, 3, 1],
    ];
    const owners = orders.map((order) => {
      const maps = new IdentityMaps();
      const ch = new IdentityChanges();
      for (const i of order) {
        const [id, at] = claims[i]!;
        identify(maps, ch, { id, device_id: 'd' }, at);
      }
      return [maps.user(maps.devices.get('d')!).primaryId, maps.deviceLinks.get('d')];
    });
    // a and c both claim at 30: the greater id, c, keeps it.
    expect(owners).toEqual(orders.map(() => ['c', 30]));
    // Without c, a's later claim wins over b's, in any order.
    for (const order of [
      [0, 1, 2],
      [2, 1, 0],
      [1, 2, 0],
    ]) {
      const maps = new IdentityMaps();
      const ch = new IdentityChanges();
      for (const i of order) identify(maps, ch, { id: claims[i]![0], device_id: 'd' }, claims[i]![1]);
      expect(maps.user(maps.devices.get('d')!).primaryId).toBe('a');
    }
  });

  it("keeps a device's anonymous id's first use, the device's earliest record, whatever order they come in", () => {
    const anon = anonymousId('D');
    for (const times of [
      [10, 9],
      [9, 10],
    ]) {
      const maps = new IdentityMaps();
      const ch = new IdentityChanges();
      for (const t of times) identify(maps, ch, { device_id: 'D' }, t);
      identify(maps, ch, { id: 'U', device_id: 'D' }, 9.5);
      expect(maps.idUses.get(anon), times.join()).toBe(9);
      expect(maps.idUses.get('U')).toBe(9.5);
    }
  });

  it("keeps each id's first use, the earliest record naming it, whatever order the records come in", () => {
    type Step = (maps: IdentityMaps, ch: IdentityChanges) => unknown;
    const steps: Step[] = [
      (m, c) => identify(m, c, { id: 'a' }, 10),
      (m, c) => alias(m, c, { id: 'b', previous_id: 'a' }, 40),
      (m, c) => alias(m, c, { id: 'c', previous_id: 'a' }, 20),
      // An older record naming b: b was in use from 30.
      (m, c) => identify(m, c, { id: 'b' }, 30),
    ];
    // Every order in which a exists before it is aliased, and b before it is named again.
    for (const order of [
      [0, 1, 2, 3],
      [0, 2, 1, 3],
      [0, 1, 3, 2],
    ]) {
      const maps = new IdentityMaps();
      const ch = new IdentityChanges();
      for (const i of order) steps[i]!(maps, ch);
      const byFirstUse = [...maps.idUses].sort(([x, s], [y, t]) => (s ?? 0) - (t ?? 0) || (x < y ? -1 : 1));
      expect(byFirstUse, order.join()).toEqual([
        ['a', 10],
        ['c', 20],
        ['b', 30],
      ]);
    }
    // A stored id named by an earlier record is written back with its earlier time.
    const maps = new IdentityMaps();
    storedUser(maps, 'u_a', { primaryId: 'a', createdAt: 10, traits: {}, traitTimes: {} });
    maps.setId('a', 'u_a', 50);
    const ch = new IdentityChanges();
    identify(maps, ch, { id: 'a' }, 40);
    identify(maps, ch, { id: 'a' }, 45);
    expect([...ch.idUsesLowered]).toEqual(['a']);
    expect(maps.idUses.get('a')).toBe(40);
  });

  it('keeps the later write of each trait, whatever order the writes come in', () => {
    const writes: Array<[number, Record<string, string | number>]> = [
      [10, { plan: 'free', seats: 1 }],
      [30, { plan: 'pro' }],
      [20, { plan: 'team', seats: 5 }],
      [30, { seats: 9 }],
      // The same instant as the write of 'pro': the greater value wins, in either order.
      [30, { plan: 'basic' }],
    ];
    const orders = [
      [0, 1, 2, 3, 4],
      [4, 3, 2, 1, 0],
      [2, 4, 0, 3, 1],
    ];
    for (const order of orders) {
      const maps = new IdentityMaps();
      const ch = new IdentityChanges();
      for (const i of order) {
        const [at, traits] = writes[i]!;
        identify(maps, ch, { id: 'gina', traits }, at);
      }
      const gina = userOfCallerId(maps, 'gina')!;
      expect(maps.user(gina).traits, String(order)).toEqual({ plan: 'pro', seats: 9 });
      expect(maps.user(gina).traitTimes, String(order)).toEqual({ plan: 30, seats: 30 });
    }
  });

  it('merges what an anonymous user learnt by time too, and a repeated value takes the later time', () => {
    const maps = new IdentityMaps();
    storedUser(maps, 'u_hal', {
      primaryId: 'hal',
      createdAt: 1,
      traits: { plan: 'free', legacy: 'x' },
      // `legacy` was stored before trait times were kept: any write with a time replaces it.
      traitTimes: { plan: 40 },
    });
    maps.ids.set('hal', 'u_hal');
    const ch = new IdentityChanges();
    // Learnt on a device before hal logged in there, but later than hal's own plan: it wins.
    const anon = identify(maps, ch, { device_id: 'd9', traits: { plan: 'pro', legacy: 'y' } }, 50);
    identify(maps, ch, { id: 'hal', device_id: 'd9' }, 60);
    expect(maps.canonical(anon)).toBe('u_hal');
    expect(maps.user('u_hal').traits).toEqual({ plan: 'pro', legacy: 'y' });
    // An older write arriving now changes nothing; the same value again moves only its time.
    identify(maps, ch, { id: 'hal', traits: { plan: 'team' } }, 45);
    identify(maps, ch, { id: 'hal', traits: { plan: 'pro' } }, 70);
    expect(maps.user('u_hal').traits).toEqual({ plan: 'pro', legacy: 'y' });
    expect(maps.user('u_hal').traitTimes).toEqual({ plan: 70, legacy: 50 });
    expect(ch.traitPatches.get('u_hal')).toEqual({ plan: 'pro', legacy: 'y' });
  });

  it('aliases: previous id finds the user, the new id becomes primary, a taken id is refused', () => {
    const maps = new IdentityMaps();
    const ch = new IdentityChanges();
    const erin = identify(maps, ch, { id: 'erin' }, 1);
    identify(maps, ch, { id: 'frank' }, 1);
    expect(alias(maps, ch, { id: 'erin@x', previous_id: 'erin' }, 2)).toEqual({ ok: true, userId: erin });
    expect(maps.user(erin).primaryId).toBe('erin@x');
    expect(alias(maps, ch, { id: 'frank', previous_id: 'erin' }, 3)).toMatchObject({
      ok: false,
      reason: 'taken',
    });
    expect(alias(maps, ch, { id: 'y', previous_id: 'nobody' }, 3)).toEqual({
      ok: false,
      reason: 'unknown_previous',
    });
  });

  it('makes the id of the later alias primary, whatever order aliases come in', () => {
    const aliases: Array<[number, string]> = [
      [20, 'ivy@a'],
      [40, 'ivy@c'],
      [30, 'ivy@b'],
      // The same instant as ivy@c: the greater id wins, in either order.
      [40, 'ivy@0'],
    ];
    for (const order of [
      [0, 1, 2, 3],
      [3, 2, 1, 0],
      [1, 3, 0, 2],
    ]) {
      const maps = new IdentityMaps();
      const ch = new IdentityChanges();
      const ivy = identify(maps, ch, { id: 'ivy' }, 10);
      for (const i of order) {
        const [at, id] = aliases[i]!;
        expect(alias(maps, ch, { id, previous_id: 'ivy' }, at)).toEqual({ ok: true, userId: ivy });
      }
      expect(maps.user(ivy).primaryId, String(order)).toBe('ivy@c');
      expect(maps.user(ivy).primaryAt, String(order)).toBe(40);
    }
  });

  it('refuses to guess about a key a filter says may exist but nobody loaded', () => {
    const maybe = { has: (k: string) => k === 'stored', add: () => undefined };
    const maps = new IdentityMaps({ ids: maybe, devices: maybe });
    expect(() => identify(maps, new IdentityChanges(), { id: 'stored' }, 1)).toThrow(/before it was loaded/);
    maps.absent.ids.add('stored');
    expect(() => identify(maps, new IdentityChanges(), { id: 'stored' }, 1)).not.toThrow();
  });
});
