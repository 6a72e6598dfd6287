import { describe, expect, it } from 'vitest';
import { anonymousId } from './ids.js';
import { IdentityChanges, IdentityMaps } from './model.js';
import { alias, identify, userOfCallerId, userOfDevice } from './rules.js';

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

  it('merges a device’s anonymous user into the identified one; traits of the identified user win', () => {
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
    maps.users.set('u_anon', {
      canonical: 'u_anon',
      anonymous: true,
      primaryId: 'anon_x',
      createdAt: 5,
      traits: { os: 'ios' },
    });
    maps.users.set('u_carol', {
      canonical: 'u_carol',
      anonymous: false,
      primaryId: 'carol',
      createdAt: 50,
      traits: { vip: true },
    });
    maps.users.set('u_dan', {
      canonical: 'u_dan',
      anonymous: false,
      primaryId: 'dan',
      createdAt: 1,
      traits: {},
    });
    maps.ids.set('carol', 'u_carol').set('dan', 'u_dan');
    maps.devices.set('dev', 'u_anon').set('shared', 'u_dan');
    const ch = new IdentityChanges();
    identify(maps, ch, { id: 'carol', device_id: 'dev', traits: { vip: true } }, 60);
    expect([...ch.mergedAnons]).toEqual(['u_anon']);
    expect([...ch.createdAtLowered]).toEqual(['u_carol']);
    // Traits already stored are not written again; the anonymous user's new ones are.
    expect(ch.traitPatches.get('u_carol')).toEqual({ os: 'ios' });
    expect(maps.user('u_carol').traits).toEqual({ vip: true, os: 'ios' });
    identify(maps, ch, { id: 'carol', device_id: 'shared' }, 70);
    expect([...ch.relinkedDevices]).toEqual(['shared']);
    expect(maps.canonical('u_dan')).toBe('u_dan');
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

  it('refuses to guess about a key a filter says may exist but nobody loaded', () => {
    const maybe = { has: (k: string) => k === 'stored', add: () => undefined };
    const maps = new IdentityMaps({ ids: maybe, devices: maybe });
    expect(() => identify(maps, new IdentityChanges(), { id: 'stored' }, 1)).toThrow(/before it was loaded/);
    maps.absent.ids.add('stored');
    expect(() => identify(maps, new IdentityChanges(), { id: 'stored' }, 1)).not.toThrow();
  });
});
