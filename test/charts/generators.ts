import fc from 'fast-check';
import { PROPERTY_OPERATORS } from '../../src/shared/chart-filters.js';
import { binsOf, type Period } from '../../src/shared/time-bins.js';
import type { Json, SeedData } from '../helpers/seed.js';

/**
 * Random small projects and chart controls for the property tests: zones with DST changes, ranges
 * starting and ending on and off bin boundaries, events on exact boundaries (±1 ms), merged
 * anonymous users, awkward property names, JSON nulls (so lookups fall back to traits) and arrays.
 */

export const ZONES = [
  'America/New_York',
  'Europe/London',
  'Australia/Sydney',
  'Asia/Kolkata',
  'UTC',
] as const;
/** DST changes in 2025 of the zones above, plus a plain date; ranges start near one of them. */
const ANCHORS = [
  '2025-03-09',
  '2025-11-02',
  '2025-03-30',
  '2025-10-26',
  '2025-04-06',
  '2025-10-05',
  '2025-06-15',
];
const DAY = 86_400_000;

export const PROPERTY_NAMES = [
  'plan',
  'tokens',
  'model',
  'a.b',
  's/l',
  'q"x',
  'when',
  'flag',
  'list',
  'age',
  'beta',
  'intent',
  'missing',
];
export const TRAIT_NAMES = ['plan', 'age', 'beta', 'a.b', 'signup', 'missing'];
export const EVENT_NAMES = ['Turn', 'Page', 'Intent Informed', 'Any Event', 'Nope'];
const SCALARS: Json[] = ['free', 'pro', 'Pro', 'x', 1, 2, 1.5, true, false];
const PATTERNS = [
  '^p',
  'o$',
  'P',
  'r.',
  '^$',
  '[0-9]',
  'e|o',
  '^\\d+$',
  'T',
  'ee',
  '^(pro|free)$',
  '^[Éé]cole',
  'x$',
  'a',
  '"',
];
const INSTANTS = ['2025-03-09T06:00:00Z', '2025-10-26T01:30:00+01:00', '2025-06-15T00:00:00.500Z'];

const scalar = fc.constantFrom(...(SCALARS as Array<string | number | boolean>));
const instant = fc.constantFrom(...INSTANTS);
const numberOrInstant = fc.oneof(fc.constantFrom(0, 1, 1.5, 2, 5, 18, 30), instant);

const HOURS: Record<Period, number> = { day: 24, week: 168, month: 730 };

export const rangeArb = fc
  .record({
    anchor: fc.constantFrom(...ANCHORS),
    tz: fc.constantFrom(...ZONES),
    period: fc.constantFrom<Period>('day', 'day', 'week', 'month'),
    startShiftH: fc.integer({ min: -60, max: 60 }),
    bins: fc.integer({ min: 1, max: 6 }),
    slackH: fc.integer({ min: -12, max: 12 }),
    dateOnly: fc.boolean(),
  })
  .map((r) => {
    const startMs = Date.parse(`${r.anchor}T00:00:00Z`) + r.startShiftH * 3_600_000;
    const length = Math.max(1, r.bins * HOURS[r.period] + r.slackH);
    const endMs = startMs + length * 3_600_000;
    const iso = (ms: number) =>
      r.dateOnly ? new Date(ms).toISOString().slice(0, 10) : new Date(ms).toISOString();
    const start = iso(startMs);
    let end = iso(endMs);
    if (end <= start) end = iso(startMs + DAY);
    return { start, end, period: r.period, tz: r.tz };
  });
export type RangeInput = { start: string; end: string; period: Period; tz: string };

export function timeArb(range: RangeInput): fc.Arbitrary<string> {
  const bins = binsOf(range);
  const edges = bins.flatMap((b) => [b.start.getTime(), b.end.getTime()]);
  const first = bins[0]?.start.getTime() ?? 0;
  const last = bins.at(-1)?.end.getTime() ?? 0;
  const start = Date.parse(range.start.length === 10 ? `${range.start}T00:00:00Z` : range.start);
  const end = Date.parse(range.end.length === 10 ? `${range.end}T00:00:00Z` : range.end);
  return fc
    .oneof(
      { weight: 6, arbitrary: fc.integer({ min: Math.min(start, end - 1), max: end - 1 }) },
      {
        weight: 2,
        arbitrary: fc
          .tuple(fc.constantFrom(...edges), fc.constantFrom(-1, 0, 0, 1, 3_600_000))
          .map(([e, d]) => e + d),
      },
      { weight: 2, arbitrary: fc.integer({ min: first - 3 * DAY, max: last + 3 * DAY }) },
    )
    .map((ms) => new Date(ms).toISOString());
}

const propertyValue: fc.Arbitrary<Json> = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...SCALARS) },
  { weight: 1, arbitrary: instant },
  { weight: 1, arbitrary: fc.constant(null) },
  { weight: 1, arbitrary: fc.constant<Json>(['a', 'b']) },
);

/** Each name present about half the time, so filters and group-bys find something to work on. */
const bag = (names: string[], value: fc.Arbitrary<Json>) =>
  fc.record(Object.fromEntries(names.map((n) => [n, value])), { requiredKeys: [] }) as fc.Arbitrary<
    Record<string, Json>
  >;
const propertiesBag = bag(
  PROPERTY_NAMES.filter((n) => n !== 'missing'),
  propertyValue,
);
/** Traits are scalars only (decisions §3 rejects null and objects). */
const traitBag = bag(
  TRAIT_NAMES.filter((n) => n !== 'missing'),
  fc.oneof(fc.constantFrom(...SCALARS), instant),
);

export function dataArb(range: RangeInput): fc.Arbitrary<SeedData> {
  const time = timeArb(range);
  return fc
    .record({
      users: fc.array(traitBag, { minLength: 1, maxLength: 4 }),
      anons: fc.array(fc.record({ into: fc.nat(), traits: traitBag }), { maxLength: 2 }),
      sessions: fc.array(
        fc.record({
          user: fc.nat(),
          start: time,
          ended: fc.option(fc.integer({ min: 0, max: 7200_000 })),
          lastMs: fc.integer({ min: 0, max: 3600_000 }),
        }),
        { maxLength: 5 },
      ),
      conversations: fc.array(fc.nat(), { maxLength: 6 }),
      events: fc.array(
        fc.record({
          name: fc.constantFrom('Turn', 'Turn', 'Page', 'Intent Informed', 'Other'),
          user: fc.nat(),
          session: fc.option(fc.nat()),
          conversation: fc.option(fc.nat()),
          ts: time,
          properties: fc.option(propertiesBag, { freq: 8 }),
          intent: fc.constantFrom('billing', 'refund', 'Billing'),
        }),
        { minLength: 5, maxLength: 50 },
      ),
    })
    .map((d): SeedData => {
      const users = d.users.map((traits, i) => ({ user_id: `u${i}`, traits }));
      // A merged anonymous user points at an identified one (or at itself: not merged yet).
      const anons = d.anons.map((a, i) => {
        const into = a.into % (users.length + 1);
        return {
          user_id: `anon${i}`,
          anonymous: true,
          traits: a.traits,
          ...(into < users.length ? { canonical_user_id: `u${into}` } : {}),
        };
      });
      const everyone = [...users, ...anons];
      const sessions = d.sessions.map((s, i) => ({
        session_id: `s${i}`,
        user_id: everyone[s.user % everyone.length]!.user_id,
        started_at: s.start,
        ended_at: s.ended === null ? null : new Date(Date.parse(s.start) + s.ended).toISOString(),
        last_event_at: new Date(Date.parse(s.start) + s.lastMs).toISOString(),
      }));
      const conversations =
        sessions.length === 0
          ? []
          : d.conversations.map((n, i) => ({
              conversation_id: `c${i}`,
              session_id: sessions[n % sessions.length]!.session_id,
            }));
      const events = d.events.map((e) => {
        const properties =
          e.name === 'Intent Informed' ? { ...(e.properties ?? {}), intent: e.intent } : e.properties;
        return {
          event: e.name,
          ts: e.ts,
          user_id: everyone[e.user % everyone.length]!.user_id,
          session_id:
            e.session === null || sessions.length === 0
              ? null
              : sessions[e.session % sessions.length]!.session_id,
          conversation_id:
            e.conversation === null || conversations.length === 0
              ? null
              : conversations[e.conversation % conversations.length]!.conversation_id,
          properties,
        };
      });
      return { users: everyone, sessions, conversations, events };
    });
}

export function propertyFilterArb(
  names: string[],
  scalars: fc.Arbitrary<string | number | boolean> = scalar,
) {
  return fc.constantFrom(...PROPERTY_OPERATORS).chain((operator) => {
    const values =
      operator === 'in' || operator === 'nin'
        ? fc.array(scalars, { minLength: 1, maxLength: 3 })
        : operator === 'regex' || operator === 'not_regex'
          ? fc.constantFrom(...PATTERNS).map((p) => [p])
          : operator === 'between'
            ? fc.oneof(
                fc.tuple(fc.constantFrom(0, 1, 1.5), fc.constantFrom(1, 2, 30)),
                fc.tuple(instant, instant),
              )
            : ['gt', 'gte', 'lt', 'lte'].includes(operator)
              ? numberOrInstant.map((v) => [v])
              : scalars.map((v) => [v]);
    return fc.record({ property_name: fc.constantFrom(...names), operator: fc.constant(operator), values });
  });
}
