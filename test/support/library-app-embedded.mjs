// The client library with no endpoint configured: it starts the service embedded over CAS_DATA_DIR,
// as the CLI does, and `close()` stops it. test/library.test.ts reads the data directory afterwards.
// A second Client over the same directory in the same process, connecting at the same moment, shares
// that service: two services on one file (DuckDB's lock keeps out other processes only) lost one
// Client's events without an error.
import { Client } from 'cas';

const client = new Client();
const other = new Client();
const session = client.createSession({ sessionId: 'emb-1', deviceId: 'dev-embedded' });
const second = other.createSession({ sessionId: 'emb-2', id: 'second-user' });
session.trackEvent({ event: 'Embedded', timestamp: '2026-01-05T12:00:00Z' });
second.trackEvent({ event: 'Second', timestamp: '2026-01-05T12:00:30Z' });
const user = await client.userIdentify({ deviceId: 'dev-embedded', traits: { kind: 'kiosk' } });
session.endSession({ timestamp: '2026-01-05T12:01:00Z' });
await Promise.all([session.flushAndContinue(), second.flushAndContinue()]);
const closing = Promise.all([client.close(), other.close()]);
// Into the close (DuckDB's checkpoint takes some 100 ms or more), past the flushes before it.
await new Promise((resolve) => setTimeout(resolve, 20));
// A third, while that service closes, gets one of its own once it has closed (it was handed the
// closing one, and its events failed with ECONNREFUSED).
const third = new Client();
const later = third.createSession({ sessionId: 'emb-3', id: 'third-user' });
later.trackEvent({ event: 'Third', timestamp: '2026-01-05T12:02:00Z' });
await closing;
await third.close();
const errors = [...session.getErrors(), ...second.getErrors(), ...later.getErrors()];
console.log(JSON.stringify({ user, errors }));
