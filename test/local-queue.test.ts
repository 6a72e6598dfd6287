import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpError } from '../src/client/errors.js';
import { localQueueSender } from '../src/client/local-queue.js';
import { type RunningService, startService } from '../src/service/service.js';
import { tempDir } from './helpers/temp.js';

/**
 * The in-process queue (issue 16): the importer's side validates a batch with the queue route's own
 * parser and hands it over parsed, so the service's thread does not validate it again. The answers
 * must stay the service's own: accepted counts, a refusal's status and issues exactly as over HTTP,
 * and a service whose limits differ from the ones the sender parsed under validates the batch itself.
 */
const dir = tempDir('cas-local-queue-');
let service: RunningService;
let strict: RunningService;

beforeAll(async () => {
  service = await startService({ dataDir: join(dir.path, 'default'), port: 0 });
  strict = await startService({ dataDir: join(dir.path, 'strict'), port: 0, limits: { eventBytes: 600 } });
});
afterAll(async () => {
  await Promise.allSettled([service?.close(), strict?.close()]);
  dir.cleanup();
});

const turn = (i: number, user = `question ${i}`) => ({
  type: 'track',
  event: 'Conversation Turn',
  event_id: `lq-${i}`,
  timestamp: new Date(Date.UTC(2025, 5, 1, 10, 0, i)).toISOString(),
  session_id: 'lq-session',
  conversation_id: 'c1',
  user_id: 'lq-user',
  properties: { user, assistant: `answer ${i}` },
});

const credentials = (s: RunningService) => ({ apiKey: s.local.api_key, projectId: s.local.project_id });

async function httpAnswer(s: RunningService, body: unknown): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${s.url}/bc/v1/events/queue`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      authorization: `Bearer ${s.local.api_key}`,
      'x-app-id': s.local.project_id,
    },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

async function refusal(send: Promise<unknown>): Promise<HttpError> {
  const error = await send.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(HttpError);
  return error as HttpError;
}

describe('the in-process queue', () => {
  it('stores a parsed batch once, and answers a repeat with duplicates', async () => {
    const send = localQueueSender(service.localQueue, credentials(service));
    const batch = [turn(1), turn(2), turn(3)];
    expect(await send(batch)).toEqual({ status: 'ok', accepted: 3, duplicates: 0 });
    expect(await send(batch)).toEqual({ status: 'ok', accepted: 0, duplicates: 3 });
  });

  it('refuses a bad batch with the status and issues HTTP gives for it', async () => {
    const bad = [turn(10), { ...turn(11), timestamp: 'yesterday' }, { ...turn(12), type: 'nope' }];
    const local = await refusal(localQueueSender(service.localQueue, credentials(service))(bad));
    const http = await httpAnswer(service, bad);
    expect(local.status).toBe(400);
    expect(http.status).toBe(400);
    const body = http.body as { issues: unknown[]; message: string };
    expect(local.issues).toEqual(body.issues);
    expect(body.issues.length).toBe(2);
  });

  it("takes the importer's own events (built) normalized, and refuses one it changed into an invalid one as HTTP does", async () => {
    const send = localQueueSender(service.localQueue, credentials(service), { built: true });
    // A derived session's events all carry its key (one without it was of another session: 409).
    const derived = (i: number) => ({
      ...turn(i),
      session_id: 'lq-derived',
      session_key: 'lq-user',
      session_gap_ms: 60_000,
    });
    const batch = [derived(30), derived(31)];
    expect(await send(batch)).toEqual({ status: 'ok', accepted: 2, duplicates: 0 });
    const bad = [turn(32), { ...turn(33), session_id: 'x'.repeat(101) }];
    const local = await refusal(send(bad));
    const http = await httpAnswer(service, bad);
    expect(local.status).toBe(400);
    expect(http.status).toBe(400);
    expect(local.issues).toEqual((http.body as { issues: unknown[] }).issues);
  });

  it('validates itself when its limits are not the ones the sender parsed under', async () => {
    const send = localQueueSender(strict.localQueue, credentials(strict));
    const big = turn(20, 'x'.repeat(700));
    const local = await refusal(send([big]));
    expect(local.status).toBe(400);
    expect(local.issues?.[0]?.message).toMatch(/at most 600 allowed/);
    expect(await send([turn(21)])).toEqual({ status: 'ok', accepted: 1, duplicates: 0 });
  });
});
