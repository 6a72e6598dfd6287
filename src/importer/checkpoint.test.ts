import { readdirSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir } from '../../test/helpers/temp.js';
import {
  type Checkpoint,
  checkpointLineage,
  checkpointPath,
  fingerprint,
  identifyFile,
  readCheckpoint,
  removeSuperseded,
  writeCheckpoint,
} from './checkpoint.js';
import { Frontier } from './frontier.js';

const dirs: Array<{ cleanup: () => void }> = [];
afterEach(() => {
  for (const d of dirs.splice(0)) d.cleanup();
});
function dir() {
  const d = tempDir('cas-ckpt-');
  dirs.push(d);
  return d.path;
}

const checkpoint = (print: string, position: number): Checkpoint => ({
  version: 2,
  fingerprint: print,
  updated_at: new Date().toISOString(),
  position,
  complete: false,
  rejected: 0,
});

describe('checkpoint files', () => {
  it("of an input's earlier versions are removed; those of other inputs, options or older formats stay", async () => {
    const data = dir();
    const mine = checkpointLineage(['/exports/daily.csv'], { tz: 'UTC' }, 'embedded');
    expect(checkpointLineage(['/exports/daily.csv'], { tz: 'UTC' }, 'embedded')).toBe(mine);
    const others = [
      checkpointLineage(['/exports/other.csv'], { tz: 'UTC' }, 'embedded'),
      checkpointLineage(['/exports/daily.csv'], { tz: 'Europe/Paris' }, 'embedded'),
      checkpointLineage(['/exports/daily.csv'], { tz: 'UTC' }, 'http://elsewhere'),
    ];
    expect(new Set([mine, ...others]).size).toBe(4);
    const write = (print: string, lineage?: string) =>
      writeCheckpoint(checkpointPath(data, print), {
        ...checkpoint(print, 1),
        ...(lineage === undefined ? {} : { lineage }),
      });
    await write('v1', mine);
    await write('v2', mine);
    for (const [i, lineage] of others.entries()) await write(`other${i}`, lineage);
    await write('older-format');
    writeFileSync(join(data, 'imports', 'torn.json'), '{"version":2,');
    await new Promise((r) => setTimeout(r, 5));
    const startedAt = Date.now();
    await new Promise((r) => setTimeout(r, 5));
    await write('v3', mine);
    // Saved after v3's run started: a later version's (the file grew while v3 was read), kept.
    await write('v4', mine);
    const of = { lineage: mine, fingerprint: 'v3', startedAt };
    expect(await removeSuperseded(checkpointPath(data, 'v3'), of)).toBe(2);
    expect(readdirSync(join(data, 'imports')).sort()).toEqual(
      ['older-format', 'other0', 'other1', 'other2', 'torn', 'v3', 'v4'].map((n) => `${n}.json`),
    );
    // No imports folder yet: nothing to do, no error.
    expect(await removeSuperseded(checkpointPath(dir(), 'v1'), { ...of, fingerprint: 'v1' })).toBe(0);
  });

  it('are written atomically (no temp file left) and read back only under their own fingerprint', async () => {
    const data = dir();
    const path = checkpointPath(data, 'abc');
    await writeCheckpoint(path, checkpoint('abc', 10));
    await writeCheckpoint(path, checkpoint('abc', 20));
    expect(readdirSync(join(data, 'imports'))).toEqual(['abc.json']);
    expect((await readCheckpoint(path, 'abc'))?.position).toBe(20);
    expect(await readCheckpoint(path, 'other')).toBeUndefined();
    writeFileSync(path, '{"version":2,"fingerp');
    expect(await readCheckpoint(path, 'abc')).toBeUndefined();
    // A checkpoint of the previous format (file positions, not sorted-run positions) is not resumed.
    writeFileSync(path, JSON.stringify({ ...checkpoint('abc', 5), version: 1 }));
    expect(await readCheckpoint(path, 'abc')).toBeUndefined();
  });

  it('change fingerprint when the file, its options or the target change', async () => {
    const data = dir();
    const file = join(data, 'in.csv');
    writeFileSync(file, 'a,b\n1,2\n');
    utimesSync(file, 1_700_000_000, 1_700_000_000);
    const id = await identifyFile(file);
    const base = fingerprint([id], { tz: 'UTC' }, 'embedded');
    expect(fingerprint([await identifyFile(file)], { tz: 'UTC' }, 'embedded')).toBe(base);
    expect(fingerprint([id], { tz: 'Europe/Paris' }, 'embedded')).not.toBe(base);
    expect(fingerprint([id], { tz: 'UTC' }, 'http://elsewhere')).not.toBe(base);
    utimesSync(file, new Date(), new Date(Date.now() + 5000));
    expect(fingerprint([await identifyFile(file)], { tz: 'UTC' }, 'embedded')).not.toBe(base);
    // Same size, same mtime, other content: the hash of the first bytes still tells them apart.
    writeFileSync(file, 'a,b\n1,3\n');
    utimesSync(file, 1_700_000_000, 1_700_000_000);
    const changed = await identifyFile(file);
    expect([changed.size, changed.mtimeMs]).toEqual([id.size, id.mtimeMs]);
    expect(fingerprint([changed], { tz: 'UTC' }, 'embedded')).not.toBe(base);
  });
});

describe('Frontier', () => {
  it('is the first seq with an event outstanding, whatever order acknowledgements come in', () => {
    const f = new Frontier();
    for (const seq of [0, 0, 1, 3, 3, 7]) f.emitted(seq);
    expect(f.position(9)).toBe(0);
    f.settled(3);
    f.settled(0);
    expect(f.position(9)).toBe(0);
    f.settled(0);
    expect(f.position(9)).toBe(1);
    f.settled(1);
    expect(f.position(9)).toBe(3);
    f.settled(3);
    f.settled(7);
    expect(f.position(9)).toBe(9);
    expect(() => f.settled(7)).toThrow();
  });
});
