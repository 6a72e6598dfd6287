import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, describe, expect, it } from 'vitest';
import { nativeImport } from '../bench/native-yardstick.js';
import { runCli } from './helpers/cli.js';
import { tempDir } from './helpers/temp.js';

const dir = tempDir('cas-bench-yardstick-');
afterAll(() => dir.cleanup());

/** What a store holds, as far as the yardstick claims to do the import's job (bench/native-yardstick.ts). */
async function shape(file: string): Promise<Record<string, unknown>> {
  const instance = await DuckDBInstance.create(file, { access_mode: 'READ_ONLY' });
  const c = await instance.connect();
  const all = async (sql: string) => (await c.runAndReadAll(sql)).getRowObjectsJson();
  try {
    return {
      events: await all(`SELECT event, count(*)::INTEGER AS n, count(id_hash)::INTEGER AS hashed,
                           count(origin_event_id)::INTEGER AS generated FROM events GROUP BY event ORDER BY event`),
      tables: await all(`SELECT (SELECT count(*) FROM sessions)::INTEGER AS sessions,
                           (SELECT count(*) FROM conversations)::INTEGER AS conversations,
                           (SELECT count(*) FROM users)::INTEGER AS users, (SELECT count(*) FROM user_ids)::INTEGER AS ids`),
    };
  } finally {
    c.closeSync();
    instance.closeSync();
  }
}

describe("the import bench's native yardstick", () => {
  it('stores the rows `cas import` stores for a file of turns: the same events, id hashes and tables', async () => {
    const lines = [
      'timestamp,session_id,conversation_id,user_id,user,assistant,model,prompt_tokens,completion_tokens',
    ];
    for (let i = 0; i < 40; i++) {
      const at = new Date(Date.UTC(2025, 0, 1 + (i % 4), 9, i)).toISOString();
      lines.push(`${at},s${i % 4},c${i % 3},u${i % 2},hi ${i},hello,gpt-4o,${10 + i},${20 + i}`);
    }
    const file = join(dir.path, 'turns.csv');
    writeFileSync(file, `${lines.join('\n')}\n`);
    const data = join(dir.path, 'data');
    const imported = await runCli(['import', file, '--kind', 'turn', '--data-dir', data]);
    expect(imported.code, imported.stderr).toBe(0);
    const native = join(dir.path, 'native');
    await nativeImport(file, native);
    const ours = await shape(join(data, 'cas.duckdb'));
    expect(ours.events).toContainEqual({ event: 'Conversation Turn', n: 40, hashed: 40, generated: 0 });
    expect(await shape(join(native, 'native.duckdb'))).toEqual(ours);
  }, 60_000);
});
