import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createReadStream, createWriteStream, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parse } from 'csv-parse';

/**
 * `npm run bench -- import [--records=N] [--sink | --endpoint=URL] [--formats=csv,jsonl] [--keep]
 * [--order-records=N] [--only-orders]`: generates
 * N turns (default 1,000,000) as CSV and as JSONL, measures the raw parse rate (csv-parse with
 * `columns: false`; readline + JSON.parse) and `cas import` end to end into the embedded service (the
 * built CLI as a child process), then the same import of a 10x smaller file for peak RSS. Targets
 * (issue 4): import/raw >= 0.5 for CSV and >= 0.4 for JSONL; peak RSS < 250 MB and within 20% between
 * the two sizes. `--sink` sends to a minimal HTTP server in this process that only acknowledges,
 * which measures the importer alone (reading, mapping, sessionizing, hashing, HTTP) without the service.
 * Then (issue 14) the same --order-records turns (default 200,000; 0 skips) with explicit session ids,
 * as a file sorted by time, shuffled and grouped by session: time and peak RSS of each import, since
 * an import reads and sorts the whole input (spilling past a budget) before it sends.
 */
const CAS_BIN = fileURLToPath(new URL('../../bin/cas.js', import.meta.url));
const MODELS = ['gpt-4o', 'gpt-4o-mini', 'claude-3-5-sonnet', 'llama-3.1-70b'];
const INTENTS = ['reset_password', 'billing_question', 'track_order', 'product_info', 'complaint'];
const HEADER = [
  'timestamp',
  'user_id',
  'user',
  'assistant',
  'model',
  'prompt_tokens',
  'completion_tokens',
  'intent',
];

/**
 * Turns sorted by time; ~200 sessions active at once (a turn every ~20 s each, 1-9 turns per
 * session) and users coming back hours later, so sessionizing does real work as in real exports.
 */
function* turns(n: number): Generator<Record<string, string | number>> {
  let seed = 42;
  const rand = (): number => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed / 0x80000000;
  };
  const users = Math.max(10, Math.floor(n / 50));
  const fresh = () => ({
    user: `user${Math.floor(rand() * users)}`,
    left: 1 + Math.floor(rand() * 9),
    intent: INTENTS[Math.floor(rand() * INTENTS.length)] ?? '',
    model: MODELS[Math.floor(rand() * MODELS.length)] ?? '',
  });
  const active = Array.from({ length: 200 }, fresh);
  let t = Date.UTC(2024, 0, 1);
  for (let i = 0; i < n; i++) {
    t += 50 + Math.floor(rand() * 100);
    const slot = Math.floor(rand() * active.length);
    const s = active[slot]!;
    yield {
      timestamp: new Date(t).toISOString(),
      user_id: s.user,
      user: `How do I fix problem ${i % 997} with my account, order ${i}?`,
      assistant: `Sure: open Settings, choose "Account", then follow step ${i % 13}. Anything else?`,
      model: s.model,
      prompt_tokens: 20 + (i % 500),
      completion_tokens: 10 + (i % 300),
      intent: s.intent,
    };
    if (--s.left === 0) active[slot] = fresh();
  }
}

const csvField = (v: string | number): string => {
  const s = String(v);
  return /[",\n\r]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
};

export async function writeInputs(base: string, n: number): Promise<{ csv: string; jsonl: string }> {
  const csv = createWriteStream(`${base}.csv`);
  const jsonl = createWriteStream(`${base}.jsonl`);
  let c = `${HEADER.join(',')}\n`;
  let j = '';
  for (const turn of turns(n)) {
    c += `${HEADER.map((h) => csvField(turn[h] ?? '')).join(',')}\n`;
    j += `${JSON.stringify(turn)}\n`;
    if (c.length > 1 << 20) {
      if (!csv.write(c)) await once(csv, 'drain');
      if (!jsonl.write(j)) await once(jsonl, 'drain');
      c = '';
      j = '';
    }
  }
  csv.end(c);
  jsonl.end(j);
  await Promise.all([once(csv, 'close'), once(jsonl, 'close')]);
  return { csv: `${base}.csv`, jsonl: `${base}.jsonl` };
}

async function rawCsv(path: string): Promise<number> {
  let n = -1; // the header row
  for await (const _ of createReadStream(path).pipe(parse({ columns: false }))) n++;
  return n;
}

async function rawJsonl(path: string): Promise<number> {
  let n = 0;
  for await (const line of createInterface({
    input: createReadStream(path),
    crlfDelay: Number.POSITIVE_INFINITY,
  })) {
    if (line !== '') {
      JSON.parse(line);
      n++;
    }
  }
  return n;
}

async function timed(fn: () => Promise<number>): Promise<{ records: number; seconds: number }> {
  const start = process.hrtime.bigint();
  const records = await fn();
  return { records, seconds: Number(process.hrtime.bigint() - start) / 1e9 };
}

interface ImportRun {
  seconds: number;
  peakRssMb: number;
  summary: Record<string, unknown>;
}

/** Runs the built CLI; peak RSS is the kernel's high-water mark (VmHWM), polled until exit. */
async function casImport(file: string, dataDir: string, extra: string[]): Promise<ImportRun> {
  const start = process.hrtime.bigint();
  const child = spawn(
    process.execPath,
    [CAS_BIN, 'import', file, '--kind', 'turn', '--json', '--data-dir', dataDir, ...extra],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, NO_COLOR: '1' },
    },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  let peakKb = 0;
  const poll = setInterval(() => {
    try {
      const m = /VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
      if (m) peakKb = Math.max(peakKb, Number(m[1]));
    } catch {
      // The process has just exited.
    }
  }, 50);
  const [code] = (await once(child, 'close')) as [number | null];
  clearInterval(poll);
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  if (code !== 0) throw new Error(`cas import exited ${code}: ${stderr.slice(-2000)}`);
  return { seconds, peakRssMb: peakKb / 1024, summary: JSON.parse(stdout) as Record<string, unknown> };
}

/** Acknowledges every batch (counting repeated ids as duplicates), as cheaply as a server can. */
async function startSink(): Promise<{ url: string; close: () => Promise<void> }> {
  const seen = new Set<string>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const events = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Array<{ event_id: string }>;
      let accepted = 0;
      for (const e of events) {
        if (!seen.has(e.event_id)) accepted++;
        seen.add(e.event_id);
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ status: 'ok', accepted, duplicates: events.length - accepted }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

const ORDER_HEADER = 'kind,timestamp,session_id,user_id,user,assistant,model,prompt_tokens,completion_tokens';

/** `n` turns in sessions of 8 with explicit ids (~13 open at once), in three orders of the same rows. */
async function writeOrders(
  base: string,
  n: number,
): Promise<Record<'sorted' | 'shuffled' | 'grouped', string>> {
  const sessions = Math.max(1, Math.floor(n / 8));
  const rows: Array<{ s: number; line: string }> = [];
  for (let i = 0; i < n; i++) {
    const s = i % sessions;
    const at = new Date(Date.UTC(2025, 0, 1) + s * 37_000 + Math.floor(i / sessions) * 60_000).toISOString();
    rows.push({
      s,
      line: `turn,${at},s${s},u${s % 3000},question ${i},answer ${i},gpt-4o-mini,${100 + (i % 50)},200`,
    });
  }
  let seed = 14;
  const rand = (): number => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed / 0x80000000;
  };
  const write = async (name: string, ordered: Array<{ line: string }>): Promise<string> => {
    const path = `${base}-${name}.csv`;
    const out = createWriteStream(path);
    let chunk = `${ORDER_HEADER}\n`;
    for (const r of ordered) {
      chunk += `${r.line}\n`;
      if (chunk.length > 1 << 20) {
        if (!out.write(chunk)) await once(out, 'drain');
        chunk = '';
      }
    }
    out.end(chunk);
    await once(out, 'close');
    return path;
  };
  const sorted = await write('sorted', rows);
  const shuffled = [...rows];
  for (let i = shuffled.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [shuffled[i], shuffled[j]] = [shuffled[j]!, shuffled[i]!];
  }
  const grouped = [...rows].sort((a, b) => a.s - b.s);
  return { sorted, shuffled: await write('shuffled', shuffled), grouped: await write('grouped', grouped) };
}

/** The three orders of the same records, each into a fresh data directory: time, peak RSS, all stored. */
async function runOrders(dir: string, n: number, target: string[]): Promise<void> {
  console.log(`\n${fmt(n)} turns with explicit session ids in three orders (issue 14)`);
  const files = await writeOrders(join(dir, 'order'), n);
  for (const [order, file] of Object.entries(files)) {
    const run = await casImport(file, join(dir, `data-order-${order}`), target);
    const s = run.summary;
    const complete = Number(s.records) === n && Number(s.rejected) === 0 && s.stopped === false;
    console.log(
      `  ${order.padEnd(8)} ${run.seconds.toFixed(1)} s (${fmt(n / run.seconds)} records/s), ` +
        `${fmt(Number(s.accepted))} events accepted, peak RSS ${run.peakRssMb.toFixed(0)} MB ` +
        `${run.peakRssMb < 250 ? 'ok' : 'MISSED'} (< 250 MB)${complete ? '' : `; INCOMPLETE: ${JSON.stringify(s)}`}`,
    );
  }
}

const fmt = (n: number): string => Math.round(n).toLocaleString('en-US');
const flag = (args: string[], name: string): string | undefined =>
  args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);

export async function run(args: string[]): Promise<void> {
  const n = Number(flag(args, 'records') ?? 1_000_000);
  const sink = args.includes('--sink') ? await startSink() : undefined;
  const endpoint = sink?.url ?? flag(args, 'endpoint');
  const target = endpoint ? ['--endpoint', endpoint, '--api-key', 'bench', '--project', 'bench'] : [];
  const formats = (flag(args, 'formats') ?? 'csv,jsonl').split(',') as Array<'csv' | 'jsonl'>;
  const orderRecords = Number(flag(args, 'order-records') ?? 200_000);
  if (!existsSync(CAS_BIN)) throw new Error('build first: npm run build');
  const dir = mkdtempSync(join(tmpdir(), 'cas-bench-import-'));
  try {
    if (args.includes('--only-orders')) {
      await runOrders(dir, orderRecords, target);
      return;
    }
    const where = sink ? 'an acknowledging sink (the importer alone)' : (endpoint ?? 'the embedded service');
    console.log(`cas import into ${where}`);
    console.log(`generating ${fmt(n)} turns (and ${fmt(n / 10)}) as CSV and JSONL in ${dir}`);
    const big = await writeInputs(join(dir, 'big'), n);
    const small = await writeInputs(join(dir, 'small'), Math.floor(n / 10));
    const results: Array<{ format: string; ratio: number; target: number; rss: number; rssSmall: number }> =
      [];
    for (const format of formats) {
      const raw = await timed(() => (format === 'csv' ? rawCsv(big.csv) : rawJsonl(big.jsonl)));
      const imp = await casImport(big[format], join(dir, `data-${format}`), target);
      const impSmall = await casImport(small[format], join(dir, `data-${format}-small`), target);
      const rawRate = raw.records / raw.seconds;
      const impRate = n / imp.seconds;
      results.push({
        format,
        ratio: impRate / rawRate,
        target: format === 'csv' ? 0.5 : 0.4,
        rss: imp.peakRssMb,
        rssSmall: impSmall.peakRssMb,
      });
      console.log(
        `${format}: raw parse ${fmt(rawRate)} records/s (${raw.seconds.toFixed(1)} s); ` +
          `cas import ${fmt(impRate)} records/s (${imp.seconds.toFixed(1)} s, ${fmt(Number(imp.summary.events))} events, ` +
          `${fmt(Number(imp.summary.accepted))} accepted); ratio ${(impRate / rawRate).toFixed(2)}; ` +
          `peak RSS ${imp.peakRssMb.toFixed(0)} MB (${fmt(n / 10)} records: ${impSmall.peakRssMb.toFixed(0)} MB)`,
      );
    }
    console.log(
      '\ntargets: ratio >= 0.5 (CSV) / 0.4 (JSONL); peak RSS < 250 MB and within 20% between sizes',
    );
    for (const r of results) {
      const within = Math.abs(r.rss - r.rssSmall) / Math.max(r.rss, r.rssSmall);
      const ok = (b: boolean) => (b ? 'ok' : 'MISSED');
      console.log(
        `  ${r.format}: ratio ${r.ratio.toFixed(2)} ${ok(r.ratio >= r.target)}; RSS ${r.rss.toFixed(0)} MB ${ok(r.rss < 250)}; ` +
          `RSS difference ${(100 * within).toFixed(0)}% ${ok(within <= 0.2)}`,
      );
    }
    if (orderRecords > 0) await runOrders(dir, orderRecords, target);
  } finally {
    if (!args.includes('--keep')) rmSync(dir, { recursive: true, force: true });
    await sink?.close();
  }
}
