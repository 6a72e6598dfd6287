/**
 * The ingest benchmark's workload: deterministic, realistic sessions as the hosted clients send them.
 * Each lane keeps `open` sessions going at once and emits their events interleaved (live traffic, so
 * sessions span many batches); a lane's batches are sent in order, lanes run concurrently, and no
 * session crosses lanes, so every event arrives after the ones it depends on.
 *
 * A session: start_session (a known user, or a device alone), turns with model and tokens, usage,
 * function calls (some failing), a custom event, for a third of device sessions a user identify
 * mid-session, sometimes a second conversation, then end_session.
 */
export type WireObject = Record<string, unknown>;

/** Mulberry32: a tiny seeded PRNG, so every run (and the baseline) sees the same events. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const MODELS = ['gpt-4o', 'gpt-4o-mini', 'claude-3-5-sonnet-20241022', 'gemini-1.5-flash', 'in-house-llm'];
const QUESTIONS = [
  'how do I reset my password',
  'I want a refund for my last order, it arrived broken',
  'thanks, that was really helpful!',
  'where is my package? this is taking forever',
  'can you change the delivery address to my office',
  'the app keeps crashing when I open settings',
];
const ANSWERS = [
  'Sure, here is how.',
  'I am sorry about that; let me help.',
  'Glad it helped!',
  'Let me check.',
];

function* session(
  lane: number,
  n: number,
  random: () => number,
  clock: { t: number },
): Generator<WireObject> {
  const sid = `bench-${lane}-${n}`;
  let seq = 0;
  const base = () => {
    clock.t += 1000 + Math.floor(random() * 4000);
    return { session_id: sid, event_id: `${sid}-${seq++}`, timestamp: new Date(clock.t).toISOString() };
  };
  const known = random() < 0.5;
  const device = `dev-${lane}-${n}`;
  const user = `user-${lane}-${Math.floor(random() * 20_000)}`;
  yield { type: 'start_session', ...base(), ...(known ? { id: user } : { device_id: device }) };
  const identifyAt = !known && random() < 0.33 ? 1 + Math.floor(random() * 3) : -1;
  const conversations = random() < 0.25 ? 2 : 1;
  for (let c = 1; c <= conversations; c++) {
    const turns = 3 + Math.floor(random() * 5);
    for (let i = 0; i < turns; i++) {
      if (i === identifyAt && c === 1) {
        yield { type: 'identify', ...base(), id: `${user}-d`, device_id: device, traits: { plan: 'pro' } };
      }
      const model = MODELS[Math.floor(random() * MODELS.length)]!;
      const properties = {
        user: QUESTIONS[Math.floor(random() * QUESTIONS.length)]!,
        assistant: ANSWERS[Math.floor(random() * ANSWERS.length)]!,
        model,
        prompt_tokens: 50 + Math.floor(random() * 900),
        completion_tokens: 20 + Math.floor(random() * 400),
      };
      yield { type: 'track', event: 'Conversation Turn', ...base(), properties };
      if (random() < 0.3) {
        const ok = random() < 0.8;
        const properties = {
          name: 'lookup_order',
          args: '{"id":42}',
          runtime: 120,
          ...(ok ? {} : { error: 'timeout' }),
        };
        yield { type: 'track', event: 'Conversation Function', ...base(), properties };
      }
      if (random() < 0.2) {
        yield {
          type: 'track',
          event: 'Conversation Usage',
          ...base(),
          properties: { model, prompt_tokens: 300, completion_tokens: 40 },
        };
      }
    }
    yield {
      type: 'track',
      event: 'Button Clicked',
      ...base(),
      properties: { button: 'feedback', rating: 4 },
    };
    if (c < conversations)
      yield { type: 'track', event: 'Conversation Ended', ...base(), properties: { resolved: true } };
  }
  yield { type: 'end_session', ...base(), attributes: { reason: 'closed' } };
}

/** One lane's events, `count` of them, `open` sessions interleaved. */
export function* laneEvents(lane: number, count: number, open: number): Generator<WireObject> {
  const random = prng(0x9e3779b9 ^ (lane * 7919));
  const clock = { t: Date.parse('2025-01-01T00:00:00Z') + lane * 1000 };
  const running: Array<Generator<WireObject>> = [];
  let next = 0;
  for (let emitted = 0; emitted < count; ) {
    while (running.length < open) running.push(session(lane, next++, random, clock));
    const pick = Math.floor(random() * running.length);
    const item = running[pick]!.next();
    if (item.done) {
      running.splice(pick, 1);
      continue;
    }
    yield item.value;
    emitted++;
  }
}

/** The lanes' batches as JSON bodies, ready to post (built before the clock starts). */
export function laneBodies(lane: number, events: number, batch: number, open: number): string[] {
  const bodies: string[] = [];
  let current: WireObject[] = [];
  for (const e of laneEvents(lane, events, open)) {
    current.push(e);
    if (current.length === batch) {
      bodies.push(JSON.stringify(current));
      current = [];
    }
  }
  if (current.length > 0) bodies.push(JSON.stringify(current));
  return bodies;
}

/** The project lane `lane` posts to: `${projectId}-${lane % projects}` when spread over several. */
export const laneProject = (config: { projectId: string; projects?: number }, lane: number): string =>
  (config.projects ?? 1) > 1 ? `${config.projectId}-${lane % (config.projects ?? 1)}` : config.projectId;
