// An app using the client library as a user's app would: imported by the package's name, configured
// by the environment (CAS_ENDPOINT, CAS_API_KEY, CAS_PROJECT_ID). test/library.test.ts copies it into
// a directory whose node_modules/cas is this repository, runs it, and checks what the service stored.
// Prints one JSON line: what the app saw (errors, live events, records).
import { Client, SessionClosedError } from 'cas';

const base = Date.parse('2026-01-05T10:00:00.000Z');
const at = (seconds) => new Date(base + seconds * 1000);
const until = async (what, check, ms = 10_000) => {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
};

const client = new Client({ timeoutMs: 10_000 });
const callbackErrors = [];
const liveEvents = [];

const user = await client.userIdentify({ id: 'u-lib', traits: { plan: 'pro' } });

// A device-only session: the user is known only from the identify inside it.
const session = client.createSession({
  sessionId: 'lib-s1',
  deviceId: 'dev-lib',
  attributes: { app: 'demo', build: 7 },
  onError: (error) => callbackErrors.push(error),
  onEvent: (event) => liveEvents.push(event),
});

let typeError = '';
try {
  session.trackConversationTurn({ conversationId: 'c1', user: 'hi' });
} catch (error) {
  typeError = `${error.name}: ${error.message}`;
}

session.trackEvent({ event: 'App Opened', timestamp: at(0), properties: { source: 'test' } });
session.trackConversationTurn({
  conversationId: 'c1',
  timestamp: at(1),
  user: 'what is the weather?',
  assistant: 'let me look',
  assistantId: 'helper',
  usage: { model: 'gpt-4o', promptTokens: 100, completionTokens: 20 },
});
session.userIdentify({ id: 'u-lib', timestamp: at(2), traits: { name: 'Ada' } });
session.trackFunctionCall({
  conversationId: 'c1',
  name: 'weather',
  args: { city: 'Paris' },
  result: 'sunny',
  runtime: 15,
  timestamp: at(3),
});
session.trackConversationTurn({
  conversationId: 'c1',
  timestamp: at(4),
  user: 'thanks',
  assistant: 'it is sunny',
  usage: { cost: 0.01 },
});
const pendingBefore = session.pending;
await session.flushAndContinue();
const pendingAfter = session.pending;
const errorsAfterFirstFlush = session.hasErrors();

session.endConversation({ conversationId: 'c1', timestamp: at(5), properties: { resolved: true } });
session.trackConversationTurn({ conversationId: 'c2', timestamp: at(6), user: 'second', assistant: 'topic' });
session.trackConversationUsage({
  conversationId: 'c2',
  timestamp: at(7),
  cost: { model: 'gpt-4o-mini', promptTokens: 10, completionTokens: 5 },
});
// c1 is closed: the service refuses this one (409); the others of its batch are stored.
session.trackConversationTurn({ conversationId: 'c1', timestamp: at(8), user: 'late', assistant: 'refused' });
session.endSession({ timestamp: at(9), attributes: { outcome: 'done' } });
await session.flushAndContinue();

await until('the Conversation Summary of c2', () =>
  liveEvents.some((e) => e.event === 'Conversation Summary' && e.conversation_id === 'c2'),
);
await session.flush();

let closedError = '';
try {
  session.trackEvent({ event: 'After Flush' });
} catch (error) {
  closedError = error instanceof SessionClosedError ? error.name : `unexpected ${error}`;
}
await client.close();

console.log(
  JSON.stringify({
    user,
    typeError,
    pendingBefore,
    pendingAfter,
    errorsAfterFirstFlush,
    hasErrors: session.hasErrors(),
    errors: session.getErrors(),
    callbackErrors,
    liveEvents,
    closedError,
  }),
);
