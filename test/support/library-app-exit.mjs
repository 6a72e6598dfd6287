// An app that tracks events and ends without flush() or close(): library.md has the pending events
// sent before the process exits on its own.
import { Client } from 'cas';

const session = new Client().createSession({ sessionId: 'exit-1', deviceId: 'dev-exit' });
for (let i = 0; i < 3; i++)
  session.trackEvent({ event: `Unflushed ${i}`, timestamp: `2026-01-05T11:00:0${i}Z` });
