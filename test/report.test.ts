import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { type BrowserContext, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { splitWords } from '../src/cli/report-spec.js';
import { runCli } from './helpers/cli.js';
import { spawnTracked } from './helpers/processes.js';
import { tempDir } from './helpers/temp.js';

/**
 * Issue 20: `cas report` from the fixtures, opened in a real headless Chromium (Debian's package,
 * installed here where missing): it draws every chart with no console error and no network request,
 * its embedded JSON is what `cas chart ... --format json` prints for the command shown under each
 * chart, and a stored `</script>` value is shown as text and runs nothing.
 */
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const CHROMIUM = '/usr/bin/chromium';
const HOSTILE = '</script><script>window.__pwned=1</script>';
const RANGE = ['--from', '2025-01-06', '--to', '2025-02-02', '--period', 'week', '--tz', 'UTC'];

const dir = tempDir('cas-report-');
const env = { CAS_DATA_DIR: join(dir.path, 'data') };
const out = join(dir.path, 'report.html');
let context: BrowserContext | undefined;
let skipReason: string | undefined;

/** What the checks read inside the page (this project compiles without the DOM's types). */
interface PageNode {
  dataset: Record<string, string | undefined>;
  textContent: string | null;
  querySelector(selector: string): PageNode | null;
  querySelectorAll(selector: string): ArrayLike<PageNode> & Iterable<PageNode>;
}
interface InPage {
  document: PageNode & { getElementById(id: string): PageNode | null };
  __casReport?: { charts: Array<{ chart: { getOption(): unknown } }> };
  __pwned?: unknown;
}

afterAll(async () => {
  await context?.close();
  dir.cleanup();
});

function run(command: string, args: string[]): Promise<{ code: number | null; output: string }> {
  const child = spawnTracked(command, args, {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
  });
  let output = '';
  child.stdout.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr.on('data', (c: Buffer) => (output += c.toString()));
  return new Promise((resolve) => {
    child.on('error', (error) => resolve({ code: -1, output: String(error) }));
    child.on('close', (code) => resolve({ code, output }));
  });
}

/** Debian's chromium, installed when missing (as root, with the package lists refreshed if need be). */
async function ensureChromium(): Promise<string | undefined> {
  if (existsSync(CHROMIUM)) return undefined;
  if (process.getuid?.() !== 0) return `${CHROMIUM} is missing and installing it needs root`;
  if ((await run('apt-get', ['install', '-y', '--no-install-recommends', 'chromium'])).code !== 0) {
    await run('apt-get', ['update']);
    const second = await run('apt-get', ['install', '-y', '--no-install-recommends', 'chromium']);
    if (second.code !== 0)
      return `apt-get install chromium failed: ${second.output.trim().split('\n').pop()}`;
  }
  return existsSync(CHROMIUM) ? undefined : `${CHROMIUM} is still missing after apt-get install`;
}

beforeAll(async () => {
  skipReason = await ensureChromium();
  // A user in range whose plan (the users chart's slices) is a script tag.
  const hostile = join(dir.path, 'hostile.jsonl');
  writeFileSync(
    hostile,
    [
      { kind: 'identify', timestamp: '2025-01-07T00:00:00.000Z', id: 'u-hostile', traits: { plan: HOSTILE } },
      {
        kind: 'turn',
        timestamp: '2025-01-08T10:00:00.000Z',
        user_id: 'u-hostile',
        user: 'hi',
        assistant: 'hello',
      },
    ]
      .map((r) => JSON.stringify(r))
      .join('\n'),
  );
  const fixtures = ['turns.csv', 'events.jsonl', 'turns-more.csv.gz'].map((f) => join(ROOT, 'fixtures', f));
  const imported = await runCli(['import', ...fixtures, hostile, '--json'], { env });
  expect(imported.code, imported.stderr).toBe(0);
  const made = await runCli(['report', ...RANGE, '--out', out], { env });
  expect(made.code, made.stderr).toBe(0);
  expect(made.stdout.trim()).toBe(out);
}, 240_000);

describe('cas report in headless Chromium', () => {
  it('draws every chart offline, without errors; its JSON is cas chart --format json; hostile text stays text', async (ctx) => {
    if (skipReason !== undefined) {
      console.warn(`skipping the browser checks: ${skipReason}`);
      ctx.skip();
    }
    const html = readFileSync(out, 'utf8');
    expect(html).not.toContain(HOSTILE);
    expect(html).not.toMatch(/<script[^>]+src=|<link[^>]+href=|https?:\/\/cdn/i);

    const profile = join(dir.path, 'profile');
    mkdirSync(profile);
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      viewport: { width: 1280, height: 900 },
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
    const network: string[] = [];
    await context.route('**/*', (route) => {
      const url = route.request().url();
      if (url.startsWith('file:')) return route.continue();
      network.push(url);
      return route.abort();
    });
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(m.text());
    });
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(pathToFileURL(out).href);
    await page.waitForFunction(() => (globalThis as unknown as InPage).__casReport !== undefined);

    const charts = await page.evaluate(() => {
      const { document, __casReport } = globalThis as unknown as InPage;
      const drawn = __casReport?.charts ?? [];
      return [...document.querySelectorAll('section.chart')].map((section, i) => {
        const option = drawn[i]?.chart.getOption() as { series?: Array<{ data?: unknown[] }> } | undefined;
        return {
          kind: section.dataset.kind ?? '',
          command: section.querySelector('.command')?.textContent ?? '',
          data: JSON.parse(document.getElementById(`chart-data-${i}`)?.textContent ?? 'null') as unknown,
          svgs: section.querySelectorAll('.plot svg').length,
          marks: section.querySelectorAll('.plot svg path').length,
          seriesData: (option?.series ?? []).map((s) => s.data?.length ?? 0),
        };
      });
    });
    expect(charts.map((c) => c.kind)).toEqual([
      'segmentation',
      'session',
      'retention',
      'user-composition',
      'funnel',
      'intent-distribution',
      'sentiment-analysis',
      'conversation-analysis',
      'segmentation',
    ]);
    for (const c of charts) {
      expect(c.svgs, c.command).toBe(1);
      expect(c.marks, c.command).toBeGreaterThan(3);
      expect(c.seriesData.length, c.command).toBeGreaterThan(0);
      expect(Math.min(...c.seriesData), c.command).toBeGreaterThan(0);
    }

    // The hostile plan: in the users chart's table as text, in the pie as a label, and never run.
    await page.click('section[data-kind="user-composition"] button.toggle');
    const cells = await page.locator('section[data-kind="user-composition"] td').allTextContents();
    expect(cells).toContain(HOSTILE);
    await page.hover('section[data-kind="user-composition"] .plot');
    expect(await page.evaluate(() => (globalThis as unknown as InPage).__pwned)).toBeUndefined();

    const shot = join(dir.path, 'report.png');
    await page.screenshot({ path: shot, fullPage: true });
    expect(statSync(shot).size).toBeGreaterThan(60_000);
    expect(errors).toEqual([]);
    expect(network).toEqual([]);

    // Each chart's embedded JSON is what the command shown under it prints with --format json (a
    // few of them: each is a CLI start); the hostile one also as a one-chart --format html page.
    for (const c of [charts[0], charts[2], charts[3], charts[8]]) {
      if (!c) throw new Error('a chart is missing');
      const words = splitWords(c.command);
      expect(words.slice(0, 2)).toEqual(['cas', 'chart']);
      const printed = await runCli([...words.slice(1), '--format', 'json'], { env });
      expect(printed.code, printed.stderr).toBe(0);
      expect(c.data, c.command).toEqual(JSON.parse(printed.stdout));
    }
    const users = splitWords(charts[3]?.command ?? '').slice(1);
    const page1 = await runCli([...users, '--format', 'html'], { env });
    expect(page1.code, page1.stderr).toBe(0);
    expect(page1.stdout).not.toContain(HOSTILE);
    const block = /<script type="application\/json" id="chart-data-0">(.*?)<\/script>/s.exec(page1.stdout);
    expect(JSON.parse(block?.[1] ?? 'null')).toEqual(charts[3]?.data);
  }, 180_000);
});
