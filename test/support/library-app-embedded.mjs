// The client library with no endpoint configured: it starts the service embedded over CAS_DATA_DIR,
// as the CLI does, and `close()` stops it. test/library.test.ts reads the data directory afterwards.
import { Client } from 'cas';

const client = new Client();
const user = await client.userIdentify({ deviceId: 'dev-embedded', traits: { kind: 'kiosk' } });
const session = client.createSession({ sessionId: 'emb-1', deviceId: 'dev-embedded' });
session.trackEvent({ event: 'Embedded', timestamp: '2026-01-05T12:00:00Z' });
session.endSession({ timestamp: '2026-01-05T12:01:00Z' });
await client.close();
console.log(JSON.stringify({ user, errors: session.getErrors() }));
