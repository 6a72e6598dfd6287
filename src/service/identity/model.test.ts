import { describe, expect, it } from 'vitest';
import { IdentityMaps, type UserInfo } from './model.js';

const user = (canonical: string, anonymous = false): UserInfo => ({
  canonical,
  anonymous,
  primaryId: canonical,
  primaryAt: null,
  createdAt: 0,
  traits: {},
  traitTimes: {},
});

/**
 * Ids a, b, c of users A, B, C; the device's anonymous user N merged into B (its id anon_d); device
 * da of A. `a` was named last.
 */
function maps(): IdentityMaps {
  const m = new IdentityMaps();
  for (const [id, u] of [
    ['a', 'A'],
    ['b', 'B'],
    ['c', 'C'],
    ['anon_d', 'N'],
  ] as const) {
    m.setId(id, u, 1);
    m.users.set(u, user(u));
  }
  m.users.set('N', user('B', true));
  m.setDevice('da', 'A', 2);
  m.absent.ids.add('z');
  m.touch('ids', 'a');
  return m;
}

describe('IdentityMaps.letGo', () => {
  it('forgets the least recently named ids and devices, and only the users nothing left leads to', () => {
    const m = maps();
    expect(m.held).toBe(5);
    m.letGo(2);
    // Ids in order of use: b, c, anon_d, a; two of the four go, and the one device.
    expect([...m.ids.keys()]).toEqual(['anon_d', 'a']);
    expect([...m.idUses.keys()].sort()).toEqual(['a', 'anon_d']);
    expect(m.devices.size).toBe(0);
    expect(m.deviceLinks.size).toBe(0);
    // B stays: N, which anon_d names, was merged into it. C goes with its only id.
    expect([...m.users.keys()].sort()).toEqual(['A', 'B', 'N']);
    expect(m.canonical(m.userOfId('anon_d')!)).toBe('B');
    expect(m.absent.ids.size).toBe(0);
  });

  it('keeps everything when asked to forget nothing, and forgets everything when asked for all', () => {
    const none = maps();
    none.letGo(0);
    expect(none.held).toBe(5);
    expect(none.users.size).toBe(4);
    const all = maps();
    all.letGo(all.held);
    expect(all.held).toBe(0);
    expect(all.users.size).toBe(0);
  });

  it('touching a key it does not hold adds nothing', () => {
    const m = maps();
    m.touch('devices', 'nope');
    expect(m.devices.has('nope')).toBe(false);
    expect(m.held).toBe(5);
  });
});
