import fc from 'fast-check';
import type { SeedData, SeedEvent } from '../helpers/seed.js';
import { dataArb, type RangeInput, timeArb } from './generators.js';

/**
 * dataArb plus the stored analysis: at most one `Conversation Summary` per conversation (with a
 * sentiment, sometimes one the charts do not know) and `Intent Informed` events of that same
 * (session_id, conversation_id) pair, beside dataArb's own intents whose pairs are random (so the
 * same conversation id in another session is a conversation of its own).
 */
export function analysisDataArb(range: RangeInput): fc.Arbitrary<SeedData> {
  const time = timeArb(range);
  const summary = fc.record({
    conv: fc.nat(),
    user: fc.nat(),
    ts: time,
    sentiment: fc.constantFrom('positive', 'positive', 'neutral', 'negative', 'mixed'),
    intents: fc.array(
      fc.record({
        name: fc.constantFrom('billing', 'refund', 'Billing'),
        ts: time,
        plan: fc.option(fc.constantFrom('free', 'pro')),
      }),
      { maxLength: 2 },
    ),
  });
  return fc.tuple(dataArb(range), fc.array(summary, { maxLength: 6 })).map(([d, summaries]) => {
    const conversations = d.conversations ?? [];
    const users = d.users ?? [];
    const events: SeedEvent[] = [...(d.events ?? [])];
    const seen = new Set<string>();
    for (const s of summaries) {
      const c = conversations[s.conv % Math.max(1, conversations.length)];
      if (!c || seen.has(c.conversation_id) || users.length === 0) continue;
      seen.add(c.conversation_id);
      const pair = { session_id: c.session_id, conversation_id: c.conversation_id };
      const user_id = users[s.user % users.length]!.user_id;
      events.push({
        event: 'Conversation Summary',
        ts: s.ts,
        user_id,
        ...pair,
        properties: { sentiment: s.sentiment },
      });
      for (const i of s.intents) {
        const properties = { intent: i.name, ...(i.plan === null ? {} : { plan: i.plan }) };
        events.push({ event: 'Intent Informed', ts: i.ts, user_id, ...pair, properties });
      }
    }
    return { ...d, events };
  });
}
