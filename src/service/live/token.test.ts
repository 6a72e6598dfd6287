import { describe, expect, it } from 'vitest';
import { LiveTokens } from './token.js';

describe('LiveTokens', () => {
  const scope = { orgId: 'o1', projectId: 'p1' };

  it('gives back the scope it signed, session included', () => {
    const tokens = new LiveTokens();
    expect(tokens.verify(tokens.issue(scope))).toEqual(scope);
    expect(tokens.verify(tokens.issue({ ...scope, sessionId: 's 1' }))).toEqual({
      ...scope,
      sessionId: 's 1',
    });
  });

  it('refuses expired keys, keys of another service, and altered keys', () => {
    let now = 1_000;
    const tokens = new LiveTokens(100, () => now);
    const key = tokens.issue(scope);
    now = 1_099;
    expect(tokens.verify(key)).toBeDefined();
    now = 1_100;
    expect(tokens.verify(key)).toBeUndefined();

    const fresh = new LiveTokens();
    const other = new LiveTokens().issue(scope);
    expect(fresh.verify(other)).toBeUndefined();

    const good = fresh.issue(scope);
    const [prefix, body, signature] = good.split('.');
    const forged = Buffer.from(JSON.stringify({ v: 1, o: 'o1', p: 'p2', e: Date.now() + 1e6 })).toString(
      'base64url',
    );
    expect(fresh.verify(`${prefix}.${forged}.${signature}`)).toBeUndefined();
    expect(fresh.verify(`${prefix}.${body}.`)).toBeUndefined();
    for (const junk of ['', 'lv1', 'lv1..', 'x.y.z', `${good}.x`, 'Bearer', '\u0000'.repeat(40)]) {
      expect(fresh.verify(junk)).toBeUndefined();
    }
  });

  // Found by probing: the key carried 16 hex digits of the API key's unsalted SHA-256, and tokens
  // travel in browser URLs: a short or guessable API key was found again from one offline.
  it("names the API key by a mark under the service's secret, never by a hash of the key alone", () => {
    const tokens = new LiveTokens();
    const keyId = 'key_86be9a55762d316a';
    const token = tokens.issue({ ...scope, keyId });
    const payload = Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8');
    expect(payload).not.toContain('86be9a55762d316a');
    const verified = tokens.verify(token);
    expect(verified?.keyTag).toBe(tokens.keyTag(keyId));
    expect(verified?.keyId).toBeUndefined();
    expect(new LiveTokens().keyTag(keyId)).not.toBe(tokens.keyTag(keyId));
  });
});
