import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from './database.js';
import { hashKey, RevokedKeyError, Tenants } from './tenants.js';

const dir = mkdtempSync(join(tmpdir(), 'cas-tenants-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('Tenants', () => {
  // An older build, which knows nothing of revoked_keys, provisioned the key again on the same store
  // (`cas serve --api-key`): its api_keys row came back, and the key worked again (found by probing).
  it('keeps a revoked key refused when its row is back in api_keys', async () => {
    const db = await openDatabase(join(dir, 'cas.duckdb'));
    try {
      const tenants = await Tenants.load(db);
      const { orgId } = await tenants.provision({ apiKey: 'key-kept', projectId: 'p1' });
      await tenants.provision({ apiKey: 'key-revoked', projectId: 'p1' });
      expect(tenants.authenticate('key-revoked', 'p1')).toEqual({ orgId, projectId: 'p1' });
      await tenants.revokeKeys(orgId, [hashKey('key-revoked')]);
      await db.write((tx) =>
        tx.run('INSERT INTO api_keys VALUES ($1, $2, NULL, now())', [hashKey('key-revoked'), orgId]),
      );
      const reloaded = await Tenants.load(db);
      expect(reloaded.authenticate('key-revoked', 'p1')).toBe('forbidden');
      expect(reloaded.authenticate('key-kept', 'p1')).toEqual({ orgId, projectId: 'p1' });
      expect(reloaded.isRevoked('key-revoked')).toBe(true);
      await expect(reloaded.provision({ apiKey: 'key-revoked', projectId: 'p1' })).rejects.toBeInstanceOf(
        RevokedKeyError,
      );
      expect((await reloaded.listKeys(orgId)).map((k) => k.keyHash)).toEqual([hashKey('key-kept')]);
    } finally {
      await db.close();
    }
  });
});
