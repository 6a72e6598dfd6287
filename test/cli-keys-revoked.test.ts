import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli, startServe, stopChild } from './helpers/cli.js';
import { tempDir } from './helpers/temp.js';

/**
 * A revoked key stays revoked. The data directory's own key (credentials.json) was provisioned again
 * at every start, and `cas serve --api-key` provisioned its key again: either way the revoked secret
 * worked again (found by probing). Now the local key is replaced by a new one, said on stderr, and
 * `cas serve --api-key` with a revoked key is a usage error.
 */
const dir = tempDir('cas-keys-revoked-');
afterAll(() => dir.cleanup());

const secretIn = (dataDir: string) =>
  (JSON.parse(readFileSync(join(dataDir, 'credentials.json'), 'utf8')) as { api_key: string }).api_key;
const keyIds = (stdout: string) => (JSON.parse(stdout) as Array<{ key_id: string }>).map((k) => k.key_id);

async function status(url: string, key: string, project: string): Promise<number> {
  const res = await fetch(`${url}/bc/v1/orgkeys`, {
    headers: { authorization: `Bearer ${key}`, 'x-app-id': project },
  });
  await res.arrayBuffer();
  return res.status;
}

describe('a revoked key', () => {
  it("the data directory's own: the next command makes a new one, and the old secret stays refused", async () => {
    const data = join(dir.path, 'local');
    const listed = await runCli(['keys', 'list', '--json', '--data-dir', data]);
    expect(listed.code, listed.stderr).toBe(0);
    const [current] = keyIds(listed.stdout);
    const old = secretIn(data);
    expect((await runCli(['keys', 'revoke', current!, '--json', '--data-dir', data])).code).toBe(0);

    const after = await runCli(['keys', 'list', '--json', '--data-dir', data]);
    expect(after.code, after.stderr).toBe(0);
    expect(after.stderr).toMatch(/local key in credentials\.json was revoked: a new one was made/);
    expect(keyIds(after.stdout)).not.toContain(current);
    expect(secretIn(data)).not.toBe(old);

    const { child, info } = await startServe(['--data-dir', data]);
    try {
      expect(info.api_key).not.toBe(old);
      expect(await status(info.url, old, info.project_id)).toBe(403);
      expect(await status(info.url, info.api_key, info.project_id)).toBe(200);
    } finally {
      await stopChild(child);
    }
  });

  it('given to cas serve --api-key: refused (exit 2), not made valid again', async () => {
    const data = join(dir.path, 'served');
    const given = ['--api-key', 'served-key', '--project', 'served-project'];
    const { child, info } = await startServe(['--data-dir', data, ...given]);
    try {
      const remote = ['--endpoint', info.url, ...given];
      const revoked = await runCli([...remote, 'keys', 'revoke', 'served-key', '--json']);
      expect(revoked.code, revoked.stderr).toBe(0);
      expect(await status(info.url, 'served-key', 'served-project')).toBe(403);
    } finally {
      await stopChild(child);
    }
    const again = await runCli(['serve', '--port', '0', '--data-dir', data, ...given], { timeoutMs: 30_000 });
    expect(again.code, again.stderr).toBe(2);
    expect(again.stderr).toMatch(/--api-key: this key was revoked/);
  });

  // Found by probing: provisioned, such a key was added to the organization and never signed in.
  it('one no request could sign in with is refused too (exit 2), naming the flag', async () => {
    const data = join(dir.path, 'unusable');
    const run = await runCli(
      ['serve', '--port', '0', '--data-dir', data, '--api-key', '  spaced-key  ', '--project', 'p'],
      {
        timeoutMs: 30_000,
      },
    );
    expect(run.code, run.stderr).toBe(2);
    expect(run.stderr).toMatch(/--api-key: must not begin or end with a space/);
  });
});
