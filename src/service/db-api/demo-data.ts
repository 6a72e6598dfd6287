/**
 * The demo project (`/db/import_demo_data`): a small support-bot history like the fixtures, made
 * deterministically (a seeded generator, fixed dates, content-derived event ids) so importing it
 * twice stores it once. It is sent through the ingest core like any client's events, so sessions,
 * conversations, summaries, intents and sentiment come out of the same code as real data.
 */

export interface DemoOptions {
  users: number;
  seed: number;
  /** First day of the data (UTC); sessions spread over `days` days from it. */
  start: string;
  days: number;
}

export const DEMO_DEFAULTS: DemoOptions = { users: 40, seed: 18, start: '2025-01-01', days: 28 };

/** mulberry32: small, fast, and the same sequence on every platform. */
function generator(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const DEMO_PLANS = ['free', 'pro', 'team'] as const;
export const DEMO_COUNTRIES = ['US', 'DE', 'FR', 'BR', 'JP'] as const;
export const DEMO_MODELS = ['gpt-4o-mini', 'gpt-4o', 'claude-3-5-haiku'] as const;

/** Intent labels with a user utterance and a reply each; the second utterance colours sentiment. */
export const DEMO_INTENTS = [
  { intent: 'track_order', user: 'Where is my order? It has not arrived', assistant: 'It ships tomorrow.' },
  { intent: 'cancel_order', user: 'I want to cancel my order', assistant: 'Your order is cancelled.' },
  { intent: 'refund', user: 'I need a refund, the item is broken', assistant: 'A refund is on its way.' },
  { intent: 'change_address', user: 'Please change my shipping address', assistant: 'Address updated.' },
  { intent: 'greeting', user: 'Hello!', assistant: 'Hi, how can I help?' },
] as const;

const CLOSINGS = ['Thanks, that is great, I love it', 'ok', 'This is terrible and useless'] as const;

export type DemoEvent = Record<string, unknown> & { type: string; timestamp: string };

const pick = <T>(random: () => number, list: readonly T[]): T => list[Math.floor(random() * list.length)]!;

export function demoEvents(options: Partial<DemoOptions> = {}): DemoEvent[] {
  const o = { ...DEMO_DEFAULTS, ...options };
  const random = generator(o.seed);
  const base = Date.parse(`${o.start}T00:00:00Z`);
  const events: DemoEvent[] = [];
  let n = 0;
  const id = () => `demo-${o.seed}-${(n++).toString().padStart(6, '0')}`;
  const at = (ms: number) => new Date(ms).toISOString();
  for (let u = 0; u < o.users; u++) {
    const user = `demo_user_${u.toString().padStart(3, '0')}`;
    const first = base + Math.floor(random() * o.days * 24) * 3_600_000;
    events.push({
      type: 'identify',
      event_id: id(),
      user_id: user,
      timestamp: at(first),
      traits: {
        plan: pick(random, DEMO_PLANS),
        country: pick(random, DEMO_COUNTRIES),
        beta: random() < 0.3,
      },
    });
    const sessions = 1 + Math.floor(random() * 3);
    let t = first + 60_000;
    for (let s = 0; s < sessions; s++) {
      const session = `${user}_s${s}`;
      events.push({
        type: 'start_session',
        event_id: id(),
        session_id: session,
        user_id: user,
        timestamp: at(t),
      });
      const conversations = 1 + Math.floor(random() * 2);
      for (let c = 0; c < conversations; c++) {
        const conversation = `${session}_c${c}`;
        const topic = pick(random, DEMO_INTENTS);
        const model = pick(random, DEMO_MODELS);
        const turns = [topic.user, pick(random, CLOSINGS)];
        for (const [k, text] of turns.entries()) {
          t += 20_000 + Math.floor(random() * 40_000);
          events.push({
            type: 'track',
            event: 'Conversation Turn',
            event_id: id(),
            session_id: session,
            conversation_id: conversation,
            timestamp: at(t),
            properties: {
              user: text,
              assistant: k === 0 ? topic.assistant : 'Anything else?',
              intent: topic.intent,
              model,
              prompt_tokens: 50 + Math.floor(random() * 400),
              completion_tokens: 20 + Math.floor(random() * 200),
              runtime: Math.round((0.3 + random() * 3) * 1000) / 1000,
            },
          });
        }
        t += 5_000;
        events.push({
          type: 'track',
          event: 'Conversation Ended',
          event_id: id(),
          session_id: session,
          conversation_id: conversation,
          timestamp: at(t),
        });
      }
      t += 10_000;
      events.push({ type: 'end_session', event_id: id(), session_id: session, timestamp: at(t) });
      t += (1 + Math.floor(random() * 72)) * 3_600_000;
    }
  }
  return events.sort((a, b) => a.timestamp.localeCompare(b.timestamp));
}
