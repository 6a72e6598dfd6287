// An app with onEvent whose live socket the service refuses at every attempt (it allows one
// connection per address, which the app's HTTP requests hold). Its events must still be sent and
// flush() must return, onError saying the stored events did not reach onEvent; with the argument
// `exit`, the app ends without flush() or close() and the library's beforeExit flush sends them.
// Found by probing: the send waited for the socket on timers that did not keep the process alive,
// which exited with its events unsent (exit 13 when awaiting flush()).
import { Client } from 'cas';

const errors = [];
const session = new Client().createSession({
  sessionId: process.env.CAS_TEST_SESSION,
  id: 'u-nosocket',
  onEvent: () => undefined,
  onError: (e) => errors.push(e.message),
});
process.on('exit', () => console.log(JSON.stringify({ errors })));
session.trackEvent({ event: 'Stored', timestamp: '2026-01-05T14:00:00Z' });
session.endSession({ timestamp: '2026-01-05T14:00:01Z' });
if (process.argv[2] !== 'exit') await session.flush();
