// Type-checked by test/library.test.ts against the package's shipped declarations (`exports` →
// dist/lib/index.d.ts), as an app's own tsc would: right calls compile, wrong ones must not.
import { type Client, type LiveEvent, type ServiceError, type Session, SessionClosedError } from 'cas';
import { Client as SameClient } from 'cas/client';

const client: Client = new SameClient({
  endpoint: 'http://127.0.0.1:1',
  apiKey: 'k',
  projectId: 'p',
  debug: false,
});
const record: Promise<{ id: string; aliases: string[] }> = client.userIdentify({
  id: 'u',
  traits: { plan: 'pro' },
});
const session: Session = client.createSession({
  sessionId: 's',
  deviceId: 'd',
  onError: (error: ServiceError) => console.log(error.status, error.message),
  onEvent: (event: LiveEvent) => console.log(event.event, event.properties?.cost),
});
session.trackConversationTurn({
  user: 'hi',
  assistant: 'hello',
  usage: { model: 'm', promptTokens: 1, completionTokens: 2 },
});
session.trackConversationUsage({ cost: { cost: 0.1 }, timestamp: new Date() });
session.trackFunctionCall({ name: 'f', runtime: 3 });
const errors: Array<{ errored: true; status: number; message: string }> = session.getErrors();
const done: Promise<void> = session.flush();
void [record, errors, done, SessionClosedError];

// @ts-expect-error: a turn needs the assistant's answer
session.trackConversationTurn({ user: 'hi' });
// @ts-expect-error: JavaScript naming only
session.trackEvent({ event: 'E', conversation_id: 'c' });
// @ts-expect-error: usage is token-based or direct
session.trackConversationUsage({ cost: { model: 'm' } });
