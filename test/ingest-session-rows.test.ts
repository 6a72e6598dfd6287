import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { at, queue, turn } from './helpers/ingest.js';
import { startTestService, type TestService } from './helpers/service.js';

/**
 * The sessions and conversations rows after batches that touch stored rows: a write updates only
 * the rows and columns that changed (see write-batch.ts), so rows left alone must still be right.
 */
let t: TestService;
beforeAll(async () => {
  t = await startTestService();
});
afterAll(() => t.stop());

type SessionRow = {
  started: string;
  ended: string | null;
  last: string;
  attributes: string | null;
};

async function sessionRow(id: string): Promise<SessionRow | undefined> {
  return t.service.db.read.one<SessionRow>(
    `SELECT strftime(started_at AT TIME ZONE 'UTC', '%Y-%m-%dT%H:%M:%S.%g') AS started,
            strftime(ended_at AT TIME ZONE 'UTC', '%Y-%m-%dT%H:%M:%S.%g') AS ended,
            strftime(last_event_at AT TIME ZONE 'UTC', '%Y-%m-%dT%H:%M:%S.%g') AS last,
            attributes::VARCHAR AS attributes
       FROM sessions WHERE session_id = $1`,
    [id],
  );
}

const iso = (s: number) => at(s).replace('Z', '');

describe('session and conversation rows after partial updates', () => {
  it('keeps every column right when one group mixes changed and unchanged stored rows', async () => {
    const [s1, s2] = ['rows-mix-1', 'rows-mix-2'];
    const open = await queue(t, [
      { type: 'start_session', session_id: s1, device_id: 'rows-mix-d1', timestamp: at(0) },
      { type: 'start_session', session_id: s2, device_id: 'rows-mix-d2', timestamp: at(0) },
      turn(s1, at(1), {}),
      turn(s2, at(1), {}),
    ]);
    expect(open.status).toBe(200);
    // s1 gets a turn (last_event_at moves); s2's conversation ends with properties; s1's does not change.
    const next = await queue(t, [
      turn(s1, at(5), {}),
      {
        type: 'track',
        event: 'Conversation Ended',
        session_id: s2,
        timestamp: at(6),
        properties: { resolved: true },
      },
    ]);
    expect(next.status).toBe(200);
    expect(await sessionRow(s1)).toMatchObject({ started: iso(0), last: iso(5), ended: null });
    expect(await sessionRow(s2)).toMatchObject({ started: iso(0), last: iso(6), ended: null });
    const conversations = await t.service.db.read.all<{
      id: string;
      ended: string | null;
      properties: string | null;
    }>(
      `SELECT conversation_id AS id, strftime(ended_at AT TIME ZONE 'UTC', '%Y-%m-%dT%H:%M:%S.%g') AS ended,
              properties::VARCHAR AS properties
         FROM conversations WHERE session_id IN ($1, $2) ORDER BY conversation_id`,
      [s1, s2],
    );
    expect(conversations).toEqual([
      { id: `${s1}/1`, ended: null, properties: null },
      { id: `${s2}/1`, ended: iso(6), properties: '{"resolved":true}' },
    ]);
    // Ending the session closes it and its open conversation, in rows that were stored unchanged before.
    const end = await queue(t, [{ type: 'end_session', session_id: s1, timestamp: at(9) }]);
    expect(end.status).toBe(200);
    expect(await sessionRow(s1)).toMatchObject({ last: iso(9), ended: iso(9) });
    const closed = await t.service.db.read.one<{ ended: string }>(
      `SELECT strftime(ended_at AT TIME ZONE 'UTC', '%Y-%m-%dT%H:%M:%S.%g') AS ended FROM conversations
        WHERE conversation_id = $1`,
      [`${s1}/1`],
    );
    expect(closed?.ended).toBe(iso(9));
  });
});
