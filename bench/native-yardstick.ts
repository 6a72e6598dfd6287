import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { MODEL_PRICES } from '../src/service/ingest/prices.js';
import { queryable } from '../src/service/store/database.js';
import { migrate } from '../src/service/store/migrations.js';

/**
 * The import's yardstick (issue 16): DuckDB doing the same job natively, in SQL, on a fresh database
 * file with the service's own schema (migrations.ts). It includes everything `cas import` stores for
 * a file of turns with session and conversation ids, except what SQL cannot do (the analysis:
 * intents and sentiment of each conversation, which the summary rows here leave empty):
 * - reading and parsing the file (`read_csv` with the header's columns / `read_json`), typed;
 * - a sha256 content id for every turn, prefixed as the importer prefixes them;
 * - sessionizing: each session's turns ordered by time with a window function, its start and end;
 *   conversations' starts and ends (group-wise aggregates);
 * - every row the import stores: the turns with their properties and cost (prices joined from the
 *   service's price table), `Session Started`/`Session Ended`, `Conversation Started`/`Ended`/
 *   `Summary` (turns, duration, tokens, cost), the users, user_ids, sessions and conversations rows;
 *   each caller event's id hash (`idHash`);
 * - one transaction, then CHECKPOINT, so the data is in the database file as the import leaves it.
 * Not included: validation of each value beyond DuckDB's typed read, identity rules (one caller id
 * per user here), deduplication against stored ids, and anything across runs (replays).
 */
/** Each caller event's id hash (migration 12): DuckDB's own hash here, the service's is computed in JS. */
const idHash = (id: string): string => `(hash(${id}) >> 11)::DOUBLE`;

export async function nativeImport(file: string, dir: string): Promise<{ seconds: number; rows: number }> {
  mkdirSync(dir, { recursive: true });
  const instance = await DuckDBInstance.create(join(dir, 'native.duckdb'));
  const c = await instance.connect();
  try {
    const run = async (sql: string, params?: Record<string, string>): Promise<void> => {
      await c.run(sql, params);
    };
    const all = async (sql: string): Promise<unknown[][]> => (await c.runAndReadAll(sql)).getRows();
    await migrate(queryable(c));
    const prices = [...MODEL_PRICES]
      .map(([m, [i, o]]) => `('${m.replaceAll("'", "''")}', ${i}, ${o})`)
      .join(',');
    const start = performance.now();
    const columns =
      "{'timestamp': 'TIMESTAMPTZ', 'session_id': 'VARCHAR', 'conversation_id': 'VARCHAR', 'user_id': 'VARCHAR', " +
      "'user': 'VARCHAR', 'assistant': 'VARCHAR', 'model': 'VARCHAR', 'prompt_tokens': 'BIGINT', 'completion_tokens': 'BIGINT'}";
    const reader = file.endsWith('.csv')
      ? `read_csv($file, header = true, columns = ${columns})`
      : `read_json($file, format = 'newline_delimited', columns = ${columns})`;
    await run('BEGIN');
    await run(
      `CREATE TEMP TABLE prices (model VARCHAR, p_in DOUBLE, p_out DOUBLE); INSERT INTO prices VALUES ${prices}`,
    );
    await run(
      `CREATE TEMP TABLE t AS
       SELECT r.*, r.timestamp AS ts, 'u_' || substr(sha256(r.user_id), 1, 26) AS uid,
         'imp2-' || sha256(concat_ws(chr(31), r.timestamp, r.session_id, r.conversation_id, r.user_id, r."user",
           r.assistant, r.model, r.prompt_tokens, r.completion_tokens)) AS event_id,
         (r.prompt_tokens * p.p_in + r.completion_tokens * p.p_out) / 1e6 AS cost
       FROM ${reader} r LEFT JOIN prices p USING (model)`,
      { file },
    );
    await run(
      `CREATE TEMP TABLE seq AS SELECT event_id, session_id, conversation_id, ts, uid, cost, prompt_tokens,
         completion_tokens, row_number() OVER (PARTITION BY session_id ORDER BY ts, event_id) AS n FROM t`,
    );
    await run(
      `INSERT INTO events SELECT 'bench', event_id, 'Conversation Turn', 'track', ts, uid, session_id, conversation_id,
         json_object('user', "user", 'assistant', assistant, 'model', model, 'prompt_tokens', prompt_tokens,
           'completion_tokens', completion_tokens, 'cost', cost, 'cost_known', cost IS NOT NULL), NULL, now(), NULL,
         ${idHash('event_id')}
       FROM t`,
    );
    await run(
      `CREATE TEMP TABLE s AS SELECT session_id, any_value(uid) AS uid, min(ts) AS started, max(ts) AS ended,
         arg_min(event_id, n) AS first FROM seq GROUP BY session_id`,
    );
    await run(
      `INSERT INTO events
       SELECT 'bench', first || '#session-started', 'Session Started', 'start_session', started, uid, session_id, NULL,
         NULL, first, now(), NULL, NULL FROM s
       UNION ALL
       SELECT 'bench', session_id || '#end', 'Session Ended', 'end_session', ended, uid, session_id, NULL, NULL, NULL,
         now(), NULL, ${idHash("session_id || '#end'")} FROM s`,
    );
    await run(
      `INSERT INTO sessions SELECT 'bench', session_id, uid, NULL, started, ended, ended, NULL, session_id || '#end', NULL
       FROM s`,
    );
    await run(
      `CREATE TEMP TABLE conv AS SELECT session_id, conversation_id, any_value(uid) AS uid, min(ts) AS started,
         max(ts) AS ended, arg_min(event_id, n) AS first, count(*) AS turns, sum(prompt_tokens) AS prompt,
         sum(completion_tokens) AS completion, sum(cost) AS cost, bool_and(cost IS NOT NULL) AS known
       FROM seq GROUP BY session_id, conversation_id`,
    );
    await run(
      `INSERT INTO events
       SELECT 'bench', first || '#conversation-started:' || conversation_id, 'Conversation Started', 'track', started,
         uid, session_id, conversation_id, NULL, first, now(), NULL, NULL FROM conv
       UNION ALL
       SELECT 'bench', session_id || '#end#conversation-ended:' || conversation_id, 'Conversation Ended', 'track',
         ended, uid, session_id, conversation_id, NULL, session_id || '#end', now(), NULL, NULL FROM conv
       UNION ALL
       SELECT 'bench', session_id || '#end#summary:' || conversation_id, 'Conversation Summary', 'track', ended, uid,
         session_id, conversation_id, json_object('turns', turns, 'duration_s', epoch(ended) - epoch(started),
           'cost', cost, 'prompt_tokens', prompt, 'completion_tokens', completion, 'function_calls', 0,
           'function_errors', 0, 'intents', json('[]'), 'cost_known', known),
         session_id || '#end', now(), NULL, NULL FROM conv`,
    );
    await run(
      `INSERT INTO conversations SELECT 'bench', conversation_id, session_id, started, ended, NULL FROM conv`,
    );
    await run(
      `INSERT INTO users SELECT 'bench', uid, uid, any_value(user_id), false, '{}', min(ts), NULL, NULL FROM t GROUP BY uid;
       INSERT INTO user_ids SELECT 'bench', user_id, uid, row_number() OVER (ORDER BY min(ts)), min(ts) FROM t
         GROUP BY user_id, uid`,
    );
    await run('COMMIT');
    await run('CHECKPOINT');
    const seconds = (performance.now() - start) / 1000;
    const rows = Number((await all('SELECT count(*) FROM events'))[0]?.[0] ?? 0);
    return { seconds, rows };
  } finally {
    c.closeSync();
    instance.closeSync();
  }
}
