import { describe, expect, it } from 'vitest';
import { apiKeyProblem } from './orgkeys.js';

describe('apiKeyProblem (a key a request could never sign in with)', () => {
  it('refuses surrounding spaces, a Bearer prefix and what is not printable ASCII', () => {
    expect(apiKeyProblem(' padded-key-0001 ')).toMatch(/space/);
    expect(apiKeyProblem('Bearer bearerkey0000001')).toMatch(/Bearer/);
    expect(apiKeyProblem('bearer\tx')).toMatch(/printable ASCII/);
    expect(apiKeyProblem('ключ-ключ-ключ-ключ')).toMatch(/printable ASCII/);
  });

  it('takes inner spaces and any printable ASCII', () => {
    for (const key of ['a key with spaces 01', 'K', 'bearer-less-key', '~!@#$%^&*()_+{}|:"<>?']) {
      expect(apiKeyProblem(key), key).toBeUndefined();
    }
  });
});
