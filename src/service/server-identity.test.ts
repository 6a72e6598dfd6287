import { describe, expect, it } from 'vitest';
import { isLoopbackUrl } from '../shared/loopback-url.js';
import { isToken, loopbackUrlFor, proofMatches, randomToken, serverProof } from './server-identity.js';

describe('server identity proof', () => {
  const secret = randomToken();
  const challenge = randomToken();

  it('accepts only the HMAC of this challenge under this secret, for this data directory', () => {
    const dir = '/data/cas';
    expect(isToken(secret)).toBe(true);
    expect(proofMatches(secret, challenge, dir, serverProof(secret, challenge, dir))).toBe(true);
    expect(proofMatches(secret, challenge, dir, serverProof(randomToken(), challenge, dir))).toBe(false);
    expect(proofMatches(secret, challenge, dir, serverProof(secret, randomToken(), dir))).toBe(false);
    // The server of another directory (its server.json copied or linked here) proves nothing here.
    expect(proofMatches(secret, challenge, dir, serverProof(secret, challenge, '/data/cas-copy'))).toBe(
      false,
    );
    // Echoing the challenge, or the secret itself, proves nothing.
    expect(proofMatches(secret, challenge, dir, challenge)).toBe(false);
    expect(proofMatches(secret, challenge, dir, secret)).toBe(false);
    const upper = serverProof(secret, challenge, dir).toUpperCase();
    for (const junk of [undefined, null, 42, '', 'zz', upper]) {
      expect(proofMatches(secret, challenge, dir, junk)).toBe(false);
    }
  });

  it.each([
    ['http://127.0.0.1:8787', true],
    ['http://127.3.4.5:1', true],
    ['http://localhost:8787', true],
    ['http://[::1]:8787', true],
    ['http://0.0.0.0:8787', false],
    ['http://10.0.0.1:8787', false],
    ['http://127.0.0.1.nip.io:8787', false],
    ['http://localhost.example.com:8787', false],
    ['https://127.0.0.1:8787', false],
    ['not a url', false],
  ])('%s is loopback: %s', (url, loopback) => {
    expect(isLoopbackUrl(url)).toBe(loopback);
  });

  it('maps listening hosts to the loopback URL other CLI processes use', () => {
    expect(loopbackUrlFor('127.0.0.1', 9)).toBe('http://127.0.0.1:9');
    expect(loopbackUrlFor('0.0.0.0', 9)).toBe('http://127.0.0.1:9');
    expect(loopbackUrlFor('::', 9)).toBe('http://[::1]:9');
    expect(loopbackUrlFor('::1', 9)).toBe('http://[::1]:9');
    expect(loopbackUrlFor('192.168.1.5', 9)).toBeUndefined();
  });
});
