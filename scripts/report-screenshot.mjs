// `node scripts/report-screenshot.mjs`: docs/report.png, the README's picture of `cas report`, made
// again from the fixtures (after `npm run build`; needs Debian's chromium, which test/report.test.ts
// installs). Plain JS so it runs with nothing else compiled.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const root = fileURLToPath(new URL('..', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'cas-screenshot-'));
const env = { ...process.env, CAS_DATA_DIR: join(work, 'data') };
for (const key of ['CAS_ENDPOINT', 'MLSDK_SERVER_BASE', 'CAS_PROFILE']) delete env[key];

function cas(args) {
  const r = spawnSync(process.execPath, [join(root, 'bin', 'cas.js'), ...args], { env, encoding: 'utf8' });
  if (r.status !== 0 && r.status !== 6) throw new Error(`cas ${args[0]} exited ${r.status}: ${r.stderr}`);
}

try {
  const fixtures = readdirSync(join(root, 'fixtures'))
    .filter((f) => /\.(csv|jsonl)(\.gz)?$/.test(f))
    .map((f) => join(root, 'fixtures', f));
  cas(['import', ...fixtures]);
  const page = join(work, 'report.html');
  cas([
    'report',
    '--from',
    '2025-01-06',
    '--to',
    '2025-02-02',
    '--period',
    'week',
    '--tz',
    'UTC',
    '--out',
    page,
  ]);
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update'],
  });
  try {
    const tab = await browser.newPage({ viewport: { width: 1280, height: 900 }, colorScheme: 'light' });
    await tab.goto(`file://${page}`);
    await tab.waitForTimeout(1500);
    await tab.screenshot({ path: join(root, 'docs', 'report.png'), fullPage: true });
  } finally {
    await browser.close();
  }
  console.log('wrote docs/report.png');
} finally {
  rmSync(work, { recursive: true, force: true });
}
