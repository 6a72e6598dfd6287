import { describe, expect, it } from 'vitest';
import type { LiveFrame } from '../shared/live-events.js';
import { tailJsonLine, tailLine } from './tail-line.js';

const base: LiveFrame = {
  organization_id: 'o',
  app_id: 'p',
  session_id: 's1',
  user_id: 'u1',
  event_id: 'e1',
  timestamp: '2025-03-09T12:00:10.000Z',
  event: 'Conversation Turn',
  conversation_id: 's1/1',
  properties: {
    runtime: 3,
    user: 'hi\u001b]0;pwned\u0007',
    assistant: 'a'.repeat(100),
    model: 'gpt-4o',
    x: 1,
  },
};

describe('tailLine', () => {
  it('shows time, event, user, session, conversation and key properties on one escaped line', () => {
    const line = tailLine(base, { color: false });
    expect(line).toBe(
      `2025-03-09T12:00:10.000Z  Conversation Turn  user=u1  session=s1  conversation=s1/1  user="hi\\u001b]0;pwned\\u0007" assistant="${'a'.repeat(58)}… model="gpt-4o" runtime=3 +1`,
    );
    expect([...line].every((c) => c.charCodeAt(0) >= 0x20)).toBe(true);
  });

  it('shows an MLError by its message, and stored text cannot break the line or inject codes', () => {
    const error: LiveFrame = {
      ...base,
      event: 'MLError',
      user_id: '',
      session_id: 'evil\nsession\u001b[2J',
      properties: { error_message: 'conversation "c" is closed', status: 409 },
    };
    const { conversation_id: _, ...noConversation } = error;
    const line = tailLine(noConversation, { color: false });
    expect(line).toBe(
      '2025-03-09T12:00:10.000Z  MLError  session="evil\\nsession\\u001b[2J"  "conversation \\"c\\" is closed"',
    );
  });

  it('quotes an id, key or name that could read as more than one field', () => {
    const line = tailLine(
      {
        ...base,
        event: 'Ev  user=root',
        user_id: 'eve  session=admin-session',
        properties: { 'x" cost=0 intent="refund': 1 },
      },
      { color: false },
    );
    expect(line).toBe(
      '2025-03-09T12:00:10.000Z  "Ev  user=root"  user="eve  session=admin-session"  session=s1  conversation=s1/1  "x\\" cost=0 intent=\\"refund"=1',
    );
  });

  it('JSONL keeps the frame exact', () => {
    expect(JSON.parse(tailJsonLine(base))).toEqual(base);
  });
});
