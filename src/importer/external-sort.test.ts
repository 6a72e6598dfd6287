import { existsSync, mkdirSync, readdirSync, readlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '../../test/helpers/temp.js';
import { ExternalSorter, removeStaleSpills } from './external-sort.js';
import { compareStaged, type Staged } from './staging.js';

const dir = tempDir('cas-sort-');
afterAll(() => dir.cleanup());

function item(i: number): Staged {
  // A pseudo-random order of groups and times, with ties broken only by the hash.
  const x = (i * 7919) % 1009;
  return {
    g: `2user${x % 13}`,
    ms: x % 5 === 0 ? null : (x * 37) % 101,
    r: 2,
    opens: false,
    h: `h${(i * 104729) % 1013}`,
    kind: 'turn',
    event: {
      type: 'track',
      event: 'Conversation Turn',
      properties: { user: `q${i}`, assistant: 'a'.repeat(i % 50) },
    },
    key: `user${x % 13}`,
    source: { file: 'f.csv', line: i + 2 },
    raw: null,
    bytes: 0,
  };
}

async function sortAll(n: number, budgetBytes: number, make: (i: number) => Staged = item) {
  const sorter = new ExternalSorter({ parent: dir.path, budgetBytes });
  try {
    for (let i = 0; i < n; i++) {
      sorter.add(make(i));
      if (sorter.full) await sorter.spill();
    }
    const out: Staged[] = [];
    for await (const batch of sorter.sorted()) out.push(...batch);
    return { out, spilled: sorter.spilled };
  } finally {
    await sorter.dispose();
  }
}

describe('ExternalSorter', () => {
  // An import whose data directory's `imports` was not writable stopped once it spilled (found by probing).
  it('spills to the system temp folder when its folder cannot be written, and says so', async () => {
    let parent = '/sys/kernel'; // sysfs takes no new files, even from root
    if (process.getuid?.() !== 0) {
      parent = join(dir.path, 'read-only');
      mkdirSync(parent, { mode: 0o555 });
    }
    const told: string[] = [];
    const sorter = new ExternalSorter({ parent, budgetBytes: 1, onFallback: (r) => told.push(r) });
    try {
      for (let i = 0; i < 50; i++) {
        sorter.add(item(i));
        if (sorter.full) await sorter.spill();
      }
      expect(sorter.spilled).toBeGreaterThan(1);
      expect((await sorter.directory()).startsWith(join(tmpdir(), 'sort-'))).toBe(true);
      expect(told).toEqual([`permission denied in ${parent}`]);
      let n = 0;
      for await (const batch of sorter.sorted()) n += batch.length;
      expect(n).toBe(50);
    } finally {
      await sorter.dispose();
    }
  });

  it('yields the same order from spilled runs as from memory, and removes its files', async () => {
    const n = 5000;
    const memory = await sortAll(n, Number.POSITIVE_INFINITY);
    const spilled = await sortAll(n, 64 * 1024);
    expect(memory.spilled).toBe(0);
    expect(spilled.spilled).toBeGreaterThan(10);
    expect(spilled.out).toEqual(memory.out);
    expect(memory.out).toHaveLength(n);
    for (let i = 1; i < n; i++)
      expect(compareStaged(memory.out[i - 1]!, memory.out[i]!)).toBeLessThanOrEqual(0);
    expect(existsSync(dir.path) ? readdirSync(dir.path) : []).toEqual([]);
  });

  it('reads back records longer than a read of a run, with characters of several bytes cut between reads', async () => {
    // 1 to 4 bytes a character, lengths up to 3x a read (32 KB): every kind of cut is met.
    const long = (i: number): Staged => {
      const base = item(i);
      const text = 'aé€😀'.repeat(1 + ((i * 4099) % 25_000));
      return { ...base, event: { ...base.event, properties: { user: text, n: i } } };
    };
    const memory = await sortAll(120, Number.POSITIVE_INFINITY, long);
    const spilled = await sortAll(120, 256 * 1024, long);
    expect(spilled.spilled).toBeGreaterThan(5);
    expect(spilled.out).toEqual(memory.out);
  });

  it('closes its run files when the merge is left early', async () => {
    const openUnder = (path: string) =>
      readdirSync('/proc/self/fd').filter((fd) => {
        try {
          return readlinkSync(`/proc/self/fd/${fd}`).startsWith(path);
        } catch {
          return false;
        }
      }).length;
    const sorter = new ExternalSorter({ parent: dir.path, budgetBytes: 64 * 1024 });
    try {
      for (let i = 0; i < 3000; i++) {
        sorter.add(item(i));
        if (sorter.full) await sorter.spill();
      }
      let seen = 0;
      for await (const batch of sorter.sorted()) {
        seen += batch.length;
        if (seen >= 10) break;
      }
      expect(sorter.spilled).toBeGreaterThan(5);
      expect(openUnder(dir.path)).toBe(0);
    } finally {
      await sorter.dispose();
    }
  });
});

describe('removeStaleSpills', () => {
  it("removes the folders of sorts whose process is gone, and an earlier version's older than a day", async () => {
    const parent = join(dir.path, 'stale');
    const names = ['sort-41-AbC123', 'sort-42-xyZ789', 'sort-Old123', 'sort-New456', 'other', 'sort-41-ab'];
    for (const name of names) mkdirSync(join(parent, name), { recursive: true });
    writeFileSync(join(parent, 'sort-41-AbC123', 'run-0'), 'x');
    const dayAgo = new Date(Date.now() - 25 * 3_600_000);
    utimesSync(join(parent, 'sort-Old123'), dayAgo, dayAgo);
    const removed = await removeStaleSpills(parent, (pid) => pid === 42);
    expect(removed.sort()).toEqual(['sort-41-AbC123', 'sort-Old123']);
    expect(readdirSync(parent).sort()).toEqual(['other', 'sort-41-ab', 'sort-42-xyZ789', 'sort-New456']);
    expect(await removeStaleSpills(join(parent, 'missing'), () => false)).toEqual([]);
  });

  it('names its own folder after its owner', async () => {
    const parent = join(dir.path, 'owned');
    const sorter = new ExternalSorter({ parent, owner: 4321 });
    expect(basename(await sorter.directory())).toMatch(/^sort-4321-[A-Za-z0-9]{6}$/);
    await sorter.dispose();
  });
});
