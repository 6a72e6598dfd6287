// `npm run demo`: imports fixtures/ into a fresh embedded data directory and prints all four charts.
// Plain JS so it runs right after `npm run build` with nothing else compiled.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const cas = join(root, 'bin', 'cas.js');
const dataDir = mkdtempSync(join(tmpdir(), 'cas-demo-'));
const env = { ...process.env, CAS_DATA_DIR: dataDir };
for (const key of ['CAS_ENDPOINT', 'MLSDK_SERVER_BASE', 'CAS_PROFILE']) delete env[key];

/** A word as a POSIX shell reads it back: bare when safe, else single-quoted. */
function shellWord(word) {
  return /^[\w./:=@%+,-]+$/.test(word) ? word : `'${word.replaceAll("'", "'\\''")}'`;
}

// Printed so that each line can be pasted into a shell as is (after the export).
function cas_(args) {
  process.stderr.write(`\n$ cas ${args.map(shellWord).join(' ')}\n`);
  const result = spawnSync(process.execPath, [cas, ...args], { env, stdio: 'inherit' });
  if (result.status !== 0 && result.status !== 6) {
    process.stderr.write(`demo step failed with exit ${result.status}\n`);
    process.exit(result.status ?? 1);
  }
}

const fixtures = readdirSync(join(root, 'fixtures'))
  .filter((f) => /\.(csv|jsonl)(\.gz)?$/.test(f))
  .map((f) => join(root, 'fixtures', f));
process.stderr.write(`demo data directory: ${dataDir}\n$ export CAS_DATA_DIR=${shellWord(dataDir)}\n`);
cas_(['import', ...fixtures]);
// The fixtures span a fixed past window, so every chart names it instead of "the last 30 days".
const window = ['--from', '2025-01-06', '--to', '2025-02-02', '--tz', 'UTC', '--format', 'table'];
cas_([
  'chart',
  'segmentation',
  '--event',
  'Conversation Turn',
  '--event',
  'Conversation Ended',
  '--period',
  'week',
  ...window,
]);
cas_(['chart', 'retention', '--start-event', 'Conversation Turn', '--period', 'week', ...window]);
cas_(['chart', 'sessions', '--period', 'week', ...window]);
cas_(['chart', 'users', '--trait', 'plan', ...window]);
