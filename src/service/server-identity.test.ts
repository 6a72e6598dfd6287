import { describe, expect, it } from 'vitest';
import {
  isLoopbackUrl,
  isToken,
  loopbackUrlFor,
  proofMatches,
  randomToken,
  serverProof,
} from './server-identity.js';

describe('server identity proof', () => {
  const secret = randomToken();
  const challenge = randomToken();

  it('accepts only the HMAC of this challenge under this secret', () => {
    expect(isToken(secret)).toBe(true);
    expect(proofMatches(secret, challenge, serverProof(secret, challenge))).toBe(true);
    expect(proofMatches(secret, challenge, serverProof(randomToken(), challenge))).toBe(false);
    expect(proofMatches(secret, challenge, serverProof(secret, randomToken()))).toBe(false);
    // Echoing the challenge, or the secret itself, proves nothing.
    expect(proofMatches(secret, challenge, challenge)).toBe(false);
    expect(proofMatches(secret, challenge, secret)).toBe(false);
    for (const junk of [undefined, null, 42, '', 'zz', serverProof(secret, challenge).toUpperCase()]) {
      expect(proofMatches(secret, challenge, junk)).toBe(false);
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
