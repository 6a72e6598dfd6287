import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnTracked } from './processes.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/**
 * Another process holding `<dataDir>/cas.duckdb` open (DuckDB's lock is per process, so the holder
 * must be one), resolved once it does. The caller kills it.
 */
export async function holdDataDir(dataDir: string): Promise<ChildProcess> {
  mkdirSync(dataDir, { recursive: true });
  const holder = spawnTracked(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `import { DuckDBInstance } from '@duckdb/node-api';
       await DuckDBInstance.create(${JSON.stringify(join(dataDir, 'cas.duckdb'))});
       console.log('ready'); setInterval(() => {}, 1000);`,
    ],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  await once(holder.stdout, 'data');
  return holder;
}
