import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InvalidIntentsError } from '../src/service/analysis/intent-rules.js';
import { startService } from '../src/service/service.js';
import { at, byName, queue, storedEvents, turn } from './helpers/ingest.js';
import type { TestService } from './helpers/service.js';
import { startServiceOn } from './helpers/service.js';
import { tempDir } from './helpers/temp.js';

const INTENTS = [
  {
    name: 'track_order',
    description: 'asks where an order is',
    patterns: ['where.*(order|package)', 'tracking number'],
  },
  { name: 'cancel', description: 'wants to cancel', patterns: ['\\bcancel'] },
];

let t: TestService;
const dir = tempDir();
beforeAll(async () => {
  t = await startServiceOn(dir.path, { intents: { value: INTENTS, source: 'intents.json' } });
});
afterAll(async () => {
  await t.stop();
  dir.cleanup();
});

async function converse(session: string, turns: Array<Record<string, unknown>>) {
  const res = await queue(t, [
    { type: 'start_session', session_id: session, user_id: `${session}-user`, timestamp: at(0) },
    ...turns.map((properties, i) => turn(session, at(i + 1), properties)),
    { type: 'end_session', session_id: session, timestamp: at(100) },
  ]);
  expect(res.status, JSON.stringify(res.json)).toBe(200);
  const events = await storedEvents(t, session);
  return {
    events,
    summary: byName(events, 'Conversation Summary')[0]!,
    intents: byName(events, 'Intent Informed'),
  };
}

describe('post-conversation intents (decisions §5)', () => {
  it('records an Intent Informed per labelled intent, with its intent_* attributes', async () => {
    const { summary, intents } = await converse('labelled', [
      { user: 'hi', intent: 'greeting' },
      { user: 'I want my money back', intent: 'refund', intent_category: 'billing' },
      { user: 'now, please', intent: 'refund' },
    ]);
    expect(summary.properties).toMatchObject({ turns: 3, intents: ['greeting', 'refund'] });
    expect(intents.map((e) => e.properties)).toEqual([
      { intent: 'greeting', source: 'label' },
      { intent: 'refund', category: 'billing', source: 'label' },
    ]);
    for (const e of intents) expect(e.origin_event_id).toBe(summary.origin_event_id);
  });

  it("finds the project's user-defined intents whose patterns match a user utterance (in DuckDB)", async () => {
    const { summary, intents } = await converse('ruled', [
      { user: 'Hello there' },
      { user: 'WHERE is my package? it is late', assistant: 'I can cancel it for you' },
    ]);
    expect(intents.map((e) => e.properties)).toEqual([{ intent: 'track_order', source: 'rule' }]);
    expect(summary.properties).toMatchObject({ intents: ['track_order'] });
  });

  it('prefers labels over rules and finds nothing when nothing matches', async () => {
    const labelled = await converse('both', [{ user: 'please cancel my order', intent: 'cancellation' }]);
    expect(labelled.intents.map((e) => e.properties?.intent)).toEqual(['cancellation']);
    const none = await converse('none', [{ user: 'what a lovely day' }]);
    expect(none.intents).toEqual([]);
    expect(none.summary.properties).toMatchObject({ intents: [], sentiment: 'positive' });
  });

  it('refuses an intents file with an invalid regex at start, naming where it is', async () => {
    const bad = tempDir();
    try {
      const starting = startService({
        dataDir: bad.path,
        port: 0,
        intents: { value: [{ name: 'x', patterns: ['ok', '(unclosed'] }], source: 'bad.json' },
      });
      await expect(starting).rejects.toBeInstanceOf(InvalidIntentsError);
      await expect(starting).rejects.toThrow(/^bad\.json: \[0\]\.patterns\[1\]: not a valid RE2 regex/);
    } finally {
      bad.cleanup();
    }
  });
});
