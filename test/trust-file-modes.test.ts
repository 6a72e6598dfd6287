import { chmodSync, existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli, startServe, stopChild } from './helpers/cli.js';
import { startServiceOn } from './helpers/service.js';
import { tempDir } from './helpers/temp.js';

/**
 * Issue 15 item 6 (files): the store holds every event and the key hashes. A data directory that
 * already exists with 0755, in a process whose umask lets others read new files, must end up 0700
 * with every file 0600: after the embedded service, under `cas serve`, and when DuckDB deletes and
 * re-creates its WAL at a checkpoint.
 */

const root = tempDir();
afterAll(() => root.cleanup());

const mode = (path: string) => statSync(path).mode & 0o777;

/** A data directory as a careless earlier setup left it: 0755, with a world-readable credentials file. */
function openDataDir(name: string, credentials = false): string {
  const dir = join(root.path, name);
  mkdirSync(dir);
  chmodSync(dir, 0o755);
  if (credentials) {
    writeFileSync(join(dir, 'credentials.json'), JSON.stringify({ api_key: 'k_old', project_id: 'p_old' }));
    chmodSync(join(dir, 'credentials.json'), 0o644);
  }
  return dir;
}

/** The store's files that exist, with their modes. */
function modes(dir: string): Record<string, string> {
  const names = ['cas.duckdb', 'cas.duckdb.wal', 'credentials.json', 'server.json'];
  const out: Record<string, string> = { '.': mode(dir).toString(8) };
  for (const name of names) {
    if (existsSync(join(dir, name))) out[name] = mode(join(dir, name)).toString(8);
  }
  return out;
}

describe('data directory and file modes (issue 15 item 6)', () => {
  it('this process would create world-readable files (else the checks below prove nothing)', () => {
    expect(process.umask() & 0o044).toBe(0);
  });

  it('after an embedded command: directory 0700, database and credentials 0600', async () => {
    const dir = openDataDir('embedded', true);
    const result = await runCli(['identify', '--id', 'u1', '--data-dir', dir, '--json']);
    expect(result.code, result.stderr).toBe(0);
    expect(modes(dir)).toMatchObject({ '.': '700', 'cas.duckdb': '600', 'credentials.json': '600' });
    // The existing credentials were kept, only their mode changed.
    expect(JSON.parse(result.stdout)).toMatchObject({ app_id: 'p_old' });
  });

  it('takes permissions away only: a directory its owner made read-only (0500) stays so (chmod 0700 made it writable)', async () => {
    const dir = openDataDir('read-only');
    chmodSync(dir, 0o550);
    // As root the command may still write; what is checked is that no permission was added.
    await runCli(['identify', '--id', 'u1', '--data-dir', dir, '--json']);
    expect(mode(dir).toString(8)).toBe('500');
  });

  it('under cas serve: directory 0700, database, WAL, credentials and server.json 0600', async () => {
    const dir = openDataDir('serve');
    const serve = await startServe(['--data-dir', dir]);
    try {
      // A write through the server leaves a WAL until the next checkpoint.
      const result = await runCli(['identify', '--id', 'u1', '--data-dir', dir, '--json']);
      expect(result.code, result.stderr).toBe(0);
      expect(modes(dir)).toEqual({
        '.': '700',
        'cas.duckdb': '600',
        'cas.duckdb.wal': '600',
        'credentials.json': '600',
        'server.json': '600',
      });
    } finally {
      await stopChild(serve.child);
    }
    expect(modes(dir)).toEqual({ '.': '700', 'cas.duckdb': '600', 'credentials.json': '600' });
  });

  it('a WAL that DuckDB re-creates after a checkpoint is 0600 again (the service on this thread)', async () => {
    const dir = openDataDir('checkpoint');
    const t = await startServiceOn(dir);
    try {
      const identify = (id: string) => t.post('/bc/v1/user/identify', { id, traits: { plan: 'pro' } });
      const wal = join(dir, 'cas.duckdb.wal');
      // The watcher restricts the WAL as soon as it appears; allow for a loaded machine.
      const walMode = async () => {
        const deadline = Date.now() + 5_000;
        while (mode(wal) !== 0o600 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
        return mode(wal);
      };
      expect((await identify('u1')).status).toBe(200);
      expect(await walMode()).toBe(0o600);
      await t.service.db.writer.run('CHECKPOINT');
      expect(existsSync(wal)).toBe(false);
      expect((await identify('u2')).status).toBe(200);
      expect(await walMode()).toBe(0o600);
    } finally {
      await t.stop();
    }
  });
});
