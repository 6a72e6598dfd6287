// The client library with no endpoint, ending without close(): the embedded service it started must
// not keep the process alive. One batch is flushed while the app runs, the rest is left pending for
// the library's beforeExit flush; test/library.test.ts reads the data directory afterwards.
import { Client } from 'cas';

const client = new Client();
const session = client.createSession({ sessionId: 'emb-exit', deviceId: 'dev-emb-exit' });
session.trackEvent({ event: 'Flushed', timestamp: '2026-01-05T13:00:00Z' });
await session.flush();
const later = client.createSession({ sessionId: 'emb-exit-2', deviceId: 'dev-emb-exit' });
later.trackEvent({ event: 'Pending', timestamp: '2026-01-05T13:05:00Z' });
// A session with onEvent: its socket must not keep the process alive either (found by probing).
const live = client.createSession({
  sessionId: 'emb-exit-3',
  deviceId: 'dev-emb-exit',
  onEvent: () => undefined,
});
live.trackEvent({ event: 'Live', timestamp: '2026-01-05T13:10:00Z' });
