import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StoredEvent } from '../src/shared/events.js';
import { runCli } from './helpers/cli.js';
import { byName, storedEvents } from './helpers/ingest.js';
import { startTestService, type TestService } from './helpers/service.js';
import { tempDir } from './helpers/temp.js';

/**
 * A collector's file-exporter dump backfilled after an outage holds spans that also arrived live at
 * `POST /v1/traces`: `cas import --preset otlp` must store each span as the receiver does (same
 * event id, envelope and properties, spans without a user on the service's device), so spans
 * already received are duplicates and the store gains nothing, in either order.
 */
const dir = tempDir('cas-otlp-backfill-');
afterAll(() => dir.cleanup());

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const OTHER = '5bf92f3577b34da6a3ce929d0e0e4737';
const T0 = 1_741_341_600_000n * 1_000_000n; // 2025-03-07T10:00:00Z in ns
const ns = (ms: number) => `${T0 + BigInt(ms) * 1_000_000n + 123n}`;
const kv = (key: string, v: string | number) => ({
  key,
  value: typeof v === 'number' ? { intValue: String(v) } : { stringValue: v },
});
const span = (
  traceId: string,
  spanId: string,
  from: number,
  to: number,
  attrs: Record<string, string | number>,
  status?: { code: number; message: string },
) => ({
  traceId,
  spanId,
  name: spanId,
  startTimeUnixNano: ns(from),
  endTimeUnixNano: ns(to),
  attributes: Object.entries(attrs).map(([k, v]) => kv(k, v)),
  ...(status === undefined ? {} : { status }),
});
const chat = (tokens: number) => ({
  'gen_ai.operation.name': 'chat',
  'gen_ai.provider.name': 'openai',
  'gen_ai.request.model': 'gpt-4o',
  'gen_ai.usage.input_tokens': tokens,
  'gen_ai.usage.output_tokens': tokens / 10,
});
const alice = { 'session.id': 'sess-1', 'user.id': 'alice' };
const messages = (role: string, text: string) =>
  JSON.stringify([{ role, parts: [{ type: 'text', content: text }] }]);

const trace = {
  resourceSpans: [
    {
      resource: { attributes: [kv('service.name', 'support-bot')] },
      scopeSpans: [
        {
          spans: [
            span(TRACE, 'a000000000000001', 0, 3000, { 'gen_ai.operation.name': 'invoke_agent', ...alice }),
            span(TRACE, 'a000000000000002', 10, 800, {
              ...chat(100),
              ...alice,
              'gen_ai.input.messages': messages('user', 'hi'),
              'gen_ai.output.messages': messages('assistant', 'hello'),
            }),
            span(
              TRACE,
              'a000000000000003',
              820,
              1070,
              { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'search', ...alice },
              { code: 2, message: 'boom' },
            ),
            span(TRACE, 'a000000000000004', 1100, 2500, { ...chat(50), ...alice }),
          ],
        },
      ],
    },
    {
      // No user.id anywhere: the receiver stores it on the device `otel:batch-job`.
      resource: { attributes: [kv('service.name', 'batch-job')] },
      scopeSpans: [{ spans: [span(OTHER, 'b000000000000001', 60_000, 61_000, chat(200))] }],
    },
  ],
};
const SPANS = 4; // GenAI spans: the agent wrapper is no record

const file = join(dir.path, 'traces.json');
// The collector's file exporter writes one export request per line.
beforeAll(() => writeFileSync(file, `${JSON.stringify(trace)}\n`));

async function receive(t: TestService): Promise<void> {
  const res = await t.post('/v1/traces', trace);
  expect(res.status, JSON.stringify(res.json)).toBe(200);
  expect(res.json).toEqual({});
}

async function importFile(t: TestService, ...flags: string[]) {
  const remote = ['--endpoint', t.url, '--api-key', t.apiKey, '--project', t.projectId];
  const run = await runCli([...remote, '--json', 'import', file, '--preset', 'otlp', ...flags]);
  expect(run.code, run.stderr).toBe(0);
  return JSON.parse(run.stdout) as Record<string, unknown>;
}

/** The rows the spans made: theirs and those generated from them (session and conversation starts). */
const fromSpans = (rows: readonly StoredEvent[]) =>
  rows.filter((r) => (r.origin_event_id ?? r.event_id).startsWith('otel-'));

function expectOnce(rows: readonly StoredEvent[]) {
  expect(new Set(rows.map((r) => r.event_id)).size).toBe(rows.length);
  expect(byName(rows, 'Conversation Turn')).toHaveLength(3);
  expect(byName(rows, 'Conversation Function')).toHaveLength(1);
}

describe('cas import --preset otlp of spans the OTLP receiver also got', () => {
  let live: StoredEvent[] = [];

  it('received first: the backfill is all duplicates and the store is unchanged', async () => {
    const t = await startTestService();
    try {
      await receive(t);
      live = await storedEvents(t);
      expectOnce(live);
      const fn = byName(live, 'Conversation Function')[0];
      expect(fn?.event_id).toBe(`otel-${TRACE}-a000000000000003`);
      expect(fn?.properties).toMatchObject({ error: 'boom' });
      const summary = await importFile(t, '--no-end');
      expect(summary).toMatchObject({
        records: SPANS,
        events: SPANS,
        accepted: 0,
        duplicates: SPANS,
        rejected: 0,
      });
      expect(await storedEvents(t)).toEqual(live);
    } finally {
      await t.stop();
    }
  }, 60_000);

  it('imported first: the same rows, and the receiver then stores nothing new', async () => {
    const t = await startTestService();
    try {
      // With the provisional session ends the importer adds by default: they are the only other rows.
      const summary = await importFile(t);
      expect(summary).toMatchObject({ records: SPANS, rejected: 0 });
      const imported = await storedEvents(t);
      expectOnce(imported);
      // Another store: its organization's id is its own (random), the rows otherwise the same.
      const sansOrg = (rows: readonly StoredEvent[]) => rows.map(({ organization_id: _org, ...row }) => row);
      expect(sansOrg(fromSpans(imported))).toEqual(sansOrg(live));
      await receive(t);
      expect(await storedEvents(t)).toEqual(imported);
    } finally {
      await t.stop();
    }
  }, 60_000);
});
