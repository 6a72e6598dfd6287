import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli, startServe, stopChild } from './helpers/cli.js';
import { tempDir } from './helpers/temp.js';

const dir = tempDir();
afterAll(() => dir.cleanup());

function intentsFile(name: string, value: unknown): string {
  const path = join(dir.path, name);
  writeFileSync(path, typeof value === 'string' ? value : JSON.stringify(value));
  return path;
}

describe('cas serve --intents <file>', () => {
  it('stores the rules for the served project and finds them in closed conversations', async () => {
    const file = intentsFile('intents.json', [
      { name: 'billing', description: 'money', patterns: ['invoice|charged twice'] },
    ]);
    const { child, info } = await startServe(['--intents', file, '--data-dir', join(dir.path, 'data')]);
    try {
      const headers = {
        authorization: `Bearer ${info.api_key}`,
        'x-app-id': info.project_id,
        'content-type': 'application/json',
      };
      const events = [
        { type: 'start_session', session_id: 'cli-s', user_id: 'cli-u', timestamp: '2025-01-01T00:00:00Z' },
        {
          type: 'track',
          event: 'Conversation Turn',
          session_id: 'cli-s',
          timestamp: '2025-01-01T00:00:01Z',
          properties: { user: 'I was CHARGED TWICE this month', assistant: 'Sorry, refunding.' },
        },
        { type: 'end_session', session_id: 'cli-s', timestamp: '2025-01-01T00:00:02Z' },
      ];
      const posted = await fetch(`${info.url}/bc/v1/events/queue`, {
        method: 'POST',
        headers,
        body: JSON.stringify(events),
      });
      expect(posted.status).toBe(200);
      const live = await fetch(`${info.url}/bc/v1/live-events/events?start=2025-01-01&end=2025-01-02`, {
        headers,
      });
      const stored = (await live.json()) as Array<{ event: string; properties?: Record<string, unknown> }>;
      expect(stored.find((e) => e.event === 'Intent Informed')?.properties).toEqual({
        intent: 'billing',
        source: 'rule',
      });
    } finally {
      await stopChild(child);
    }
  });

  it('refuses a bad file with exit 2, naming the file and the JSON path', async () => {
    const badRegex = intentsFile('bad.json', [{ name: 'x', patterns: ['(unclosed'] }]);
    const regex = await runCli([
      'serve',
      '--port',
      '0',
      '--data-dir',
      join(dir.path, 'd2'),
      '--intents',
      badRegex,
    ]);
    expect(regex.code).toBe(2);
    expect(regex.stderr).toContain(`--intents ${badRegex}: [0].patterns[0]: not a valid RE2 regex`);
    const notJson = await runCli([
      'serve',
      '--port',
      '0',
      '--data-dir',
      join(dir.path, 'd3'),
      '--intents',
      intentsFile('n.json', '[{'),
    ]);
    expect(notJson.code).toBe(2);
    expect(notJson.stderr).toMatch(/--intents .*n\.json: not valid JSON/);
    const missing = await runCli([
      'serve',
      '--port',
      '0',
      '--data-dir',
      join(dir.path, 'd4'),
      '--intents',
      join(dir.path, 'nope.json'),
    ]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('no such file');
  });
});
