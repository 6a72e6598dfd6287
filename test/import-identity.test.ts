import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from './helpers/cli.js';
import { tempDir } from './helpers/temp.js';

/** Identify and alias records of one `cas import` run, at the default --concurrency (the real CLI). */
const dir = tempDir('cas-import-identity-');
afterAll(() => dir.cleanup());

const at = (day: number) => `2025-01-0${day}T10:00:00Z`;

describe('cas import: identity records', () => {
  it('stores an alias chain a → b → c → d of one run whole (aliases went in lanes by id, so c ← b could come before b ← a)', async () => {
    const file = join(dir.path, 'chain.jsonl');
    const records = [
      { type: 'identify', id: 'a', timestamp: at(1), traits: { plan: 'free' } },
      { type: 'alias', id: 'b', previous_id: 'a', timestamp: at(2) },
      { type: 'alias', id: 'c', previous_id: 'b', timestamp: at(3) },
      { type: 'alias', id: 'd', previous_id: 'c', timestamp: at(4) },
    ];
    writeFileSync(file, records.map((r) => `${JSON.stringify(r)}\n`).join(''));
    const data = join(dir.path, 'data');
    const run = await runCli(['import', file, '--data-dir', data, '--json']);
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ records: 4, rejected: 0 });
    const shown = await runCli(['users', 'show', 'a', '--json', '--data-dir', data]);
    expect(shown.code, shown.stderr).toBe(0);
    expect(JSON.parse(shown.stdout)).toMatchObject({ id: 'd', aliases: ['a', 'b', 'c', 'd'] });
  });
});
