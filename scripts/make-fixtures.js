#!/usr/bin/env node
/**
 * Writes the sample inputs in fixtures/ (run once; the output is committed): `node scripts/make-fixtures.js`.
 * Deterministic (seeded PRNG, fixed dates: 2025-01-06 .. 2025-02-02), so re-running it changes nothing.
 *   turns.csv           CSV turns of 8 users over four weeks (sessions derived by the importer)
 *   events.jsonl        mixed kinds: identify, turns in explicit sessions, usage, function calls,
 *                       custom events, explicit end_conversation / end_session, epoch-ms timestamps
 *   turns-more.csv.gz   gzipped CSV of device-only (anonymous) users, naive timestamps, a channel column
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const out = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures');
const START = Date.UTC(2025, 0, 6, 0, 0, 0);
const DAY = 86_400_000;
const MIN = 60_000;

// mulberry32: a tiny seeded PRNG, so the files are identical on every run.
let seed = 20250106;
function rand() {
  seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const pick = (list) => list[Math.floor(rand() * list.length)];
const int = (lo, hi) => lo + Math.floor(rand() * (hi - lo + 1));

const INTENTS = {
  reset_password: [
    [
      'I forgot my password, how do I reset it?',
      'Open Settings > Security and choose "Reset password"; we email you a link.',
    ],
    ['The reset link says it expired', 'Links last 30 minutes. I have sent you a fresh one just now.'],
  ],
  billing_question: [
    [
      'Why was I charged twice this month?',
      'One charge is a pending authorization; it drops off within 3 days.',
    ],
    [
      'Can I get an invoice with my VAT number?',
      'Yes: add the VAT number under Billing and download the invoice again.',
    ],
  ],
  cancel_subscription: [
    [
      'How do I cancel my subscription?',
      'Go to Billing > Plan and press "Cancel plan"; you keep access until the period ends.',
    ],
    [
      'Cancel my plan please, it is too expensive',
      'Done. Your plan ends on the renewal date. Would a cheaper plan help?',
    ],
  ],
  track_order: [
    ['Where is my order #{n}?', 'Order #{n} left the warehouse yesterday; expected delivery is in 2 days.'],
    [
      'My parcel has not moved for a week',
      'I have opened a trace with the carrier; you will hear from us within 24 hours.',
    ],
  ],
  product_info: [
    ['Does the Pro plan include API access?', 'Yes, Pro includes the API with 10,000 calls a month.'],
    ['Is there a dark mode?', 'Yes: Settings > Appearance > Dark.'],
  ],
  complaint: [
    [
      'This is the third time the app crashed today, terrible!',
      'I am sorry about that. Could you send the crash report from Settings > Help?',
    ],
    ['Your support is useless', 'I am sorry it has been frustrating. Let me escalate this to a human agent.'],
  ],
  greeting: [
    ['Hi there', 'Hello! How can I help you today?'],
    ['Thanks, that solved it!', 'Great to hear! Anything else I can do?'],
  ],
};
const INTENT_NAMES = Object.keys(INTENTS);
const MODELS = ['gpt-4o', 'gpt-4o-mini', 'claude-3-5-sonnet', 'llama-3.1-70b'];

function turn(intent) {
  const n = int(10000, 99999);
  const [u, a] = pick(INTENTS[intent]);
  return { user: u.replaceAll('{n}', n), assistant: a.replaceAll('{n}', n) };
}

const csvField = (v) => {
  const s = String(v ?? '');
  return /[",\n\r]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
};
const csv = (header, rows) =>
  `${[header, ...rows.map((r) => header.map((h) => csvField(r[h])))].map((r) => r.join(',')).join('\n')}\n`;

/** Sessions of one person: start times spread over the four weeks, turns minutes apart. */
function sessionsOf(count) {
  const days = [...new Set(Array.from({ length: count }, () => int(0, 27)))].sort((a, b) => a - b);
  return days.map((d) => START + d * DAY + int(7, 21) * 3_600_000 + int(0, 59) * MIN);
}

function turnsCsv() {
  const rows = [];
  for (let u = 1; u <= 8; u++) {
    const user = `u${String(u).padStart(2, '0')}`;
    for (const start of sessionsOf(int(3, 9))) {
      let t = start;
      const intent = pick(INTENT_NAMES);
      const model = pick(MODELS);
      for (let i = int(1, 5); i > 0; i--) {
        rows.push({
          kind: 'turn',
          timestamp: new Date(t).toISOString(),
          user_id: user,
          ...turn(i === 1 && rand() < 0.3 ? 'greeting' : intent),
          model,
          prompt_tokens: int(20, 900),
          completion_tokens: int(10, 600),
          intent,
          channel: pick(['web', 'web', 'ios', 'android']),
        });
        t += int(1, 6) * MIN + int(0, 59) * 1000;
      }
    }
  }
  rows.sort((a, b) => a.timestamp.localeCompare(b.timestamp));
  const header = [
    'kind',
    'timestamp',
    'user_id',
    'user',
    'assistant',
    'model',
    'prompt_tokens',
    'completion_tokens',
    'intent',
    'channel',
  ];
  return csv(header, rows);
}

function eventsJsonl() {
  const lines = [];
  const plans = ['free', 'pro', 'team'];
  for (let u = 1; u <= 12; u++) {
    const id = `u${String(u).padStart(2, '0')}`;
    lines.push({
      kind: 'identify',
      timestamp: new Date(START - int(1, 60) * DAY).toISOString(),
      id,
      traits: { plan: pick(plans), country: pick(['US', 'DE', 'FR', 'BR', 'IN']), seats: int(1, 20) },
    });
  }
  let conversation = 0;
  for (let u = 9; u <= 12; u++) {
    const user = `u${String(u).padStart(2, '0')}`;
    sessionsOf(int(3, 7)).forEach((start, si) => {
      const session = `${user}-s${si + 1}`;
      let t = start;
      const at = () => (rand() < 0.5 ? new Date(t).toISOString() : t); // half ISO, half epoch ms
      for (let c = int(1, 2); c > 0; c--) {
        const conv = `c${++conversation}`;
        const intent = pick(INTENT_NAMES);
        const model = pick(MODELS);
        for (let i = int(1, 4); i > 0; i--) {
          lines.push({
            kind: 'turn',
            timestamp: at(),
            user_id: user,
            session_id: session,
            conversation_id: conv,
            ...turn(intent),
            model,
            properties: { intent },
          });
          t += int(20, 90) * 1000;
          if (rand() < 0.4) {
            lines.push({
              kind: 'function',
              timestamp: at(),
              session_id: session,
              conversation_id: conv,
              name: pick(['search_orders', 'lookup_invoice', 'create_ticket']),
              args: { query: `q${int(1, 99)}` },
              result: '{"ok":true}',
              runtime: int(30, 1500),
              properties: rand() < 0.15 ? { success: false, error: 'timeout' } : {},
            });
            t += int(2, 10) * 1000;
          }
        }
        lines.push({
          kind: 'usage',
          timestamp: at(),
          session_id: session,
          conversation_id: conv,
          model,
          prompt_tokens: int(100, 4000),
          completion_tokens: int(50, 2000),
        });
        if (rand() < 0.6)
          lines.push({
            kind: 'end_conversation',
            timestamp: at(),
            session_id: session,
            conversation_id: conv,
            properties: { resolved: rand() < 0.7 },
          });
        t += int(1, 5) * MIN;
      }
      if (rand() < 0.5)
        lines.push({
          kind: 'event',
          event: 'Purchase',
          timestamp: at(),
          user_id: user,
          session_id: session,
          properties: { amount: int(5, 200), currency: 'USD' },
        });
      lines.push({
        kind: 'event',
        event: 'Feedback Given',
        timestamp: at(),
        session_id: session,
        properties: { rating: int(1, 5) },
      });
      if (rand() < 0.5) lines.push({ kind: 'end_session', timestamp: at(), session_id: session });
    });
  }
  for (let u = 1; u <= 8; u++) {
    const user = `u${String(u).padStart(2, '0')}`;
    if (rand() < 0.6)
      lines.push({
        kind: 'event',
        event: 'Purchase',
        timestamp: new Date(START + int(0, 27) * DAY + int(8, 20) * 3_600_000).toISOString(),
        user_id: user,
        properties: { amount: int(5, 200), currency: 'USD' },
      });
  }
  lines.push({
    kind: 'alias',
    timestamp: new Date(START + 27 * DAY).toISOString(),
    id: 'alice@example.com',
    previous_id: 'u01',
  });
  return `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`;
}

function turnsMoreCsv() {
  const rows = [];
  for (let d = 1; d <= 6; d++) {
    const device = `dev-${String(d).padStart(3, '0')}`;
    for (const start of sessionsOf(int(2, 6))) {
      let t = start;
      const intent = pick(INTENT_NAMES);
      for (let i = int(1, 4); i > 0; i--) {
        // Naive local times (no Z): read in --tz, UTC by default.
        const naive = new Date(t).toISOString().slice(0, 19).replace('T', ' ');
        rows.push({
          kind: 'turn',
          timestamp: naive,
          device_id: device,
          ...turn(intent),
          model: pick(MODELS),
          cost: (int(1, 400) / 10000).toFixed(4),
          intent,
          'prop.app_version': pick(['2.3.0', '2.4.1']),
        });
        t += int(1, 4) * MIN;
      }
    }
  }
  const header = [
    'kind',
    'timestamp',
    'device_id',
    'user',
    'assistant',
    'model',
    'cost',
    'intent',
    'prop.app_version',
  ];
  return gzipSync(csv(header, rows), { level: 9 });
}

mkdirSync(out, { recursive: true });
writeFileSync(join(out, 'turns.csv'), turnsCsv());
writeFileSync(join(out, 'events.jsonl'), eventsJsonl());
// mtime 0 in the gzip header keeps the .gz byte-identical across runs.
writeFileSync(join(out, 'turns-more.csv.gz'), turnsMoreCsv());
console.log(`fixtures written to ${out}`);
