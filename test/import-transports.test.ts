import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startServe, stopChild } from './helpers/cli.js';
import { describeDifference, fingerprint } from './helpers/fingerprint.js';
import {
  CRASH,
  importRun,
  type JsonRecord,
  prng,
  shuffle,
  summaryOf,
  writeJsonl,
} from './helpers/import-runs.js';
import { tempDir } from './helpers/temp.js';

/**
 * Issue 16: the embedded service is reached in-process (batches handed to its thread as structured
 * clones), a remote one over HTTP. One ingest core must give both the same answers and the same
 * stored state: the same shuffled runs, overlapping and with a refused record, are imported once
 * into the embedded default and once with --endpoint into a separate `cas serve`, and the two data
 * directories are compared by their fingerprint (helpers/fingerprint.ts).
 */
const dir = tempDir('cas-transports-');
afterAll(() => (process.env.CAS_TEST_KEEP ? undefined : dir.cleanup()));

const T0 = Date.UTC(2025, 3, 7, 9, 0, 0);
const iso = (ms: number): string => new Date(ms).toISOString();
const UTTERANCES = ['Thanks, that is great!', 'This is broken and awful', 'How do I export my data?'];

/** Sessions explicit and derived, of users and of a device, with every kind of record the importer maps. */
function records(): JsonRecord[] {
  const rand = prng(1604);
  const out: JsonRecord[] = [
    { kind: 'identify', id: 'u0', timestamp: iso(T0 - 86_400_000), plan: 'pro', seats: 4 },
    { kind: 'identify', id: 'u1', timestamp: iso(T0 - 86_400_000), plan: 'free' },
  ];
  for (let s = 0; s < 14; s++) {
    const explicit = s % 3 !== 2;
    const who: JsonRecord =
      s % 5 === 4
        ? { device_id: 'd0' }
        : { user_id: `u${s % 3}`, ...(s % 4 === 0 ? { device_id: `d${s % 2}` } : {}) };
    const session = explicit ? { session_id: `S${s}` } : {};
    let t = T0 + s * 17 * 60_000;
    const steps = 3 + Math.floor(rand() * 9);
    for (let j = 0; j < steps; j++) {
      // Mostly within the 30-minute gap; now and then a pause that splits a derived session.
      t += (rand() < 0.1 ? 2400 : 20 + Math.floor(rand() * 400)) * 1000;
      const at = { timestamp: iso(t), ...who, ...session };
      const conversation = explicit ? { conversation_id: `c${j % 2}` } : {};
      const roll = rand();
      if (roll < 0.6)
        out.push({
          kind: 'turn',
          ...at,
          ...conversation,
          user: UTTERANCES[j % UTTERANCES.length],
          assistant: `answer ${s}.${j}`,
          model: j % 2 === 0 ? 'gpt-4o' : 'claude-3-5-sonnet',
          prompt_tokens: 100 + j * 7,
          completion_tokens: 20 + s,
          ...(j % 3 === 0 ? { intent: 'export_data' } : {}),
        });
      else if (roll < 0.75)
        out.push({
          kind: 'function',
          ...at,
          ...conversation,
          name: 'lookup',
          args: JSON.stringify({ q: j }),
          result: '{"ok":true}',
          runtime: 40 + j,
          success: j % 4 !== 0,
        });
      else if (roll < 0.85)
        out.push({
          kind: 'usage',
          ...at,
          ...conversation,
          model: 'gpt-4o-mini',
          prompt_tokens: 9,
          completion_tokens: 3,
        });
      else out.push({ kind: 'event', ...at, event: 'Feedback Given', rating: j % 5 });
    }
    if (s % 4 === 1) out.push({ kind: 'end_session', timestamp: iso(t + 1000), ...who, ...session });
  }
  // A record the service refuses (a completion count below its reasoning part): rejected alike on both.
  out.push({
    kind: 'turn',
    session_id: 'S0',
    user_id: 'u0',
    timestamp: iso(T0 + 5000),
    user: 'x',
    assistant: 'y',
    model: 'gpt-4o',
    prompt_tokens: 5,
    completion_tokens: 1,
    reasoning_tokens: 9,
  });
  return out;
}

describe('one ingest core behind both transports (issue 16)', () => {
  it('in-process into the embedded service and over HTTP to cas serve store the same state', {
    timeout: 180_000,
  }, async () => {
    const all = records();
    const rand = prng(77);
    const runs: JsonRecord[][] = [[], []];
    for (const [i, r] of shuffle(all, rand).entries()) {
      runs[i % 2]!.push(r);
      // A fifth of the records in both runs: the second run's copies are duplicates.
      if (rand() < 0.2) runs[(i + 1) % 2]!.push(r);
    }
    const files = runs.map((r, i) => writeJsonl(join(dir.path, `run${i}.jsonl`), r));
    const embedded = join(dir.path, 'embedded');
    const served = join(dir.path, 'served');
    const answers: Record<string, unknown[]> = { embedded: [], served: [] };

    for (const file of files) {
      const r = await importRun([file], embedded, ['--batch-size', '7']);
      expect(r.stderr).not.toMatch(CRASH);
      answers.embedded!.push(summaryOf(r));
    }
    const serve = await startServe(['--data-dir', served]);
    try {
      const remote = [
        '--endpoint',
        serve.info.url,
        '--api-key',
        serve.info.api_key,
        '--project',
        serve.info.project_id,
        '--batch-size',
        '7',
      ];
      for (const file of files) {
        // The client's own data directory keeps only its checkpoints.
        const r = await importRun([file], join(dir.path, 'client'), remote);
        expect(r.stderr).not.toMatch(CRASH);
        answers.served!.push(summaryOf(r));
      }
    } finally {
      await stopChild(serve.child);
    }

    // The same answers, record by record: accepted, duplicates, the one rejection.
    const counts = (s: unknown) => {
      const { seconds: _s, batches: _b, retries: _r, ...rest } = s as Record<string, unknown>;
      return rest;
    };
    expect(answers.served!.map(counts)).toEqual(answers.embedded!.map(counts));
    const rejected = answers.embedded!.map((s) => (s as { rejected: number }).rejected);
    expect(rejected.reduce((x, y) => x + y, 0)).toBeGreaterThanOrEqual(1);
    expect((answers.embedded![1] as { duplicates: number }).duplicates).toBeGreaterThan(0);
    const [a, b] = [await fingerprint(embedded), await fingerprint(served)];
    expect(a.counts['Conversation Turn']).toBe(all.filter((r) => r.kind === 'turn').length - 1);
    expect(a.counts['Conversation Summary'] ?? 0).toBeGreaterThan(0);
    if (JSON.stringify(a) !== JSON.stringify(b))
      expect.fail(`stored states differ (in-process vs HTTP)\n${describeDifference(a, b)}`);
  });
});
