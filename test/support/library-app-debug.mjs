// Eleven Clients with `debug: true`, each with a session and one event, against CAS_ENDPOINT.
// test/library.test.ts reads stderr: one line per request as `-v` prints it, and no Node warning
// (each Client added a beforeExit listener: MaxListenersExceededWarning from the eleventh).
import { Client } from 'cas';

const clients = Array.from({ length: 11 }, () => new Client({ debug: true }));
const sessions = clients.map((c, i) => c.createSession({ sessionId: `debug-${i}`, id: `debug-user-${i}` }));
for (const [i, s] of sessions.entries()) s.trackEvent({ event: 'Debugged', properties: { i } });
await Promise.all(clients.map((c) => c.close()));
console.log(JSON.stringify({ errors: sessions.flatMap((s) => s.getErrors()) }));
