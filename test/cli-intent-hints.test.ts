import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NO_INTENTS_LINE } from '../src/commands/chart-hints.js';
import { runCli } from './helpers/cli.js';
import { queue } from './helpers/ingest.js';
import { startTestService, type TestService } from './helpers/service.js';

/**
 * An intent chart after an import of unlabelled turns is empty for want of intents, not of data: the
 * CLI says so on stderr (exit code unchanged), and stops saying it once some conversation has one.
 */

let t: TestService;
beforeAll(async () => {
  t = await startTestService();
});
afterAll(() => t.stop());

const cas = (args: string[]) =>
  runCli(['--endpoint', t.url, '--api-key', t.apiKey, '--project', t.projectId, ...args]);
const JANUARY = ['--from', '2025-01-01', '--to', '2025-01-31', '--tz', 'UTC', '--json'];

const session = (id: string, day: string, properties: Record<string, string> = {}) => [
  { type: 'start_session', session_id: id, user_id: `u-${id}`, timestamp: `2025-01-${day}T10:00:00Z` },
  {
    type: 'track',
    event: 'Conversation Turn',
    session_id: id,
    timestamp: `2025-01-${day}T10:00:10Z`,
    properties: { user: 'thanks, that is great', assistant: 'glad to help', ...properties },
  },
  { type: 'end_session', session_id: id, timestamp: `2025-01-${day}T10:01:00Z` },
];

describe('an intent chart with no intents anywhere', () => {
  it('says how intents come about; once one exists, an empty intent chart no longer says it', async () => {
    expect((await queue(t, session('plain', '05'))).status).toBe(200);
    for (const chart of [
      ['sentiment'],
      ['intents'],
      ['segmentation', '--event', 'Conversation Turn', '--intent', 'refund'],
    ]) {
      const result = await cas(['chart', ...chart, ...JANUARY]);
      expect(result.code, result.stderr).toBe(0);
      expect(result.stderr, chart.join(' ')).toContain(NO_INTENTS_LINE);
    }
    // A chart that does not read intents is not empty here, and says nothing.
    const turns = await cas(['chart', 'segmentation', '--event', 'Conversation Turn', ...JANUARY]);
    expect(turns.stderr).toBe('');

    expect((await queue(t, session('labelled', '06', { intent: 'refund' }))).status).toBe(200);
    const found = await cas(['chart', 'intents', ...JANUARY]);
    expect(found.stdout).toContain('refund');
    expect(found.stderr).toBe('');
    const empty = await cas(['chart', 'sentiment', '--intent', 'cancel', ...JANUARY]);
    expect(empty.code).toBe(0);
    expect(empty.stderr).not.toContain('has an intent yet');
  });
});
