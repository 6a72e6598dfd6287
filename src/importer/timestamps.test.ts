import { describe, expect, it } from 'vitest';
import { parseTimestamp, wallTimeToInstant } from './timestamps.js';

const MINUTE = 60_000;
const QUARTER = 15 * MINUTE;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/**
 * The reference, independent of timestamps.ts and shared/time-bins.ts: Intl's rendering of an instant
 * in a zone, as the UTC milliseconds of the same fields (so local − UTC is the offset).
 */
function localFields(tz: string): (ms: number) => number {
  const format = new Intl.DateTimeFormat('en-US', {
    timeZone: tz,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  });
  return (ms) => {
    const f: Record<string, number> = {};
    for (const part of format.formatToParts(ms)) f[part.type] = Number(part.value);
    return Date.UTC(f.year ?? 0, (f.month ?? 1) - 1, f.day ?? 1, f.hour ?? 0, f.minute ?? 0, f.second ?? 0);
  };
}

/** Every instant (on the quarter hour) at which the zone's offset changes during 2024-2026. */
function transitions(tz: string): number[] {
  const local = localFields(tz);
  const found: number[] = [];
  const offset = (ms: number) => local(ms) - ms;
  for (let noon = Date.UTC(2024, 0, 1, 12); noon < Date.UTC(2027, 0, 1, 12); noon += DAY) {
    if (offset(noon) === offset(noon + DAY)) continue;
    let t = noon;
    while (offset(t + QUARTER) === offset(noon)) t += QUARTER;
    found.push(t + QUARTER);
  }
  return found;
}

const naive = (wall: number) => new Date(wall).toISOString().slice(0, 23);

const iso = (value: unknown, tz = 'UTC') => {
  const r = parseTimestamp(value, tz);
  return r?.ok ? new Date(r.ms).toISOString() : r?.reason;
};

describe('parseTimestamp', () => {
  it('reads ISO 8601 with Z or an offset as the instant it names', () => {
    expect(iso('2024-03-01T10:00:00Z')).toBe('2024-03-01T10:00:00.000Z');
    expect(iso('2024-03-01T10:00:00.5+02:00')).toBe('2024-03-01T08:00:00.500Z');
    expect(iso('2024-03-01 10:00-0530')).toBe('2024-03-01T15:30:00.000Z');
    expect(iso('2024-03-01T10:00:00.123456789Z')).toBe('2024-03-01T10:00:00.123Z');
    // RFC 3339 allows both letters in lower case; exports of some tools write them so.
    expect(iso('2024-03-01t10:00:00.250z')).toBe('2024-03-01T10:00:00.250Z');
    expect(iso('2024-03-01t10:00+01:00')).toBe('2024-03-01T09:00:00.000Z');
    // An offset in seconds, as charts print a zone's before ~1972 (Monrovia's -00:44:30).
    expect(iso('1970-01-01T00:00:00-00:44:30')).toBe('1970-01-01T00:44:30.000Z');
    expect(iso('1970-01-01T00:00:00-00:44:60')).toMatch(/offset -00:44:60/);
  });

  // Found by probing: ISO 8601's basic format was "not ISO 8601".
  it("reads ISO 8601's basic format, with its T; eight digits alone are no basic date", () => {
    expect(iso('20250406T000000Z')).toBe('2025-04-06T00:00:00.000Z');
    expect(iso('20250406T103015.25+0200')).toBe('2025-04-06T08:30:15.250Z');
    expect(iso('20250406T1030-05')).toBe('2025-04-06T15:30:00.000Z');
    expect(iso('20250406')).toMatch(/ambiguous/);
    expect(parseTimestamp('20250230T000000Z', 'UTC')).toMatchObject({ ok: false });
  });

  // Rounding moved an instant just before midnight into the next day (and month, and year), where
  // the service and Date keep the millisecond it is in (found by probing the charts).
  it('truncates a time finer than a millisecond, as the service and Date do', () => {
    expect(iso('2025-12-31T23:59:59.9996Z')).toBe('2025-12-31T23:59:59.999Z');
    expect(iso('2025-03-30T23:59:59.9999999+02:00')).toBe('2025-03-30T21:59:59.999Z');
    expect(iso('2025-03-30T23:59:59.9999', 'Europe/Berlin')).toBe('2025-03-30T21:59:59.999Z');
    expect(iso('2025-12-31T23:59:59.9996Z')).toBe(new Date('2025-12-31T23:59:59.9996Z').toISOString());
    expect(iso('1743371999.9999')).toBe('2025-03-30T21:59:59.999Z');
    expect(iso(1743371999.9999)).toBe('2025-03-30T21:59:59.999Z');
    expect(iso('1743371999999.7')).toBe('2025-03-30T21:59:59.999Z');
    // Read off the digits: 1.001 s is 1,001 ms, though 1.001 * 1000 is 1000.9999… in binary.
    expect(iso(1.001)).toBe('1970-01-01T00:00:01.001Z');
    expect(iso('1.001')).toBe('1970-01-01T00:00:01.001Z');
    expect(iso(1e-7)).toBe('1970-01-01T00:00:00.000Z');
  });

  it('tells epoch seconds from milliseconds by magnitude, as numbers or text', () => {
    expect(iso(1711076863.755467)).toBe('2024-03-22T03:07:43.755Z');
    expect(iso('1711076863755')).toBe('2024-03-22T03:07:43.755Z');
    expect(iso(0)).toBe('1970-01-01T00:00:00.000Z');
    expect(iso(1e16)).toMatch(/too large/);
    // Before 1970, by the same magnitudes (they were refused as out of range).
    expect(iso(-86400)).toBe('1969-12-31T00:00:00.000Z');
    expect(iso('-2208988800')).toBe('1900-01-01T00:00:00.000Z');
    expect(iso(-2208988800000)).toBe('1900-01-01T00:00:00.000Z');
    expect(iso(-1.5)).toBe('1969-12-31T23:59:58.500Z');
    expect(iso(-1e16)).toMatch(/too large/);
  });

  it('reads naive times in --tz, across DST changes', () => {
    expect(iso('2024-07-01 12:00:00', 'Europe/Paris')).toBe('2024-07-01T10:00:00.000Z');
    expect(iso('2024-01-01T12:00', 'Europe/Paris')).toBe('2024-01-01T11:00:00.000Z');
    expect(iso('2024-03-01', 'America/New_York')).toBe('2024-03-01T05:00:00.000Z');
    // 02:30 does not exist on 2024-03-10 in New York: it moves forward to 03:30 EDT.
    expect(iso('2024-03-10T02:30:00', 'America/New_York')).toBe('2024-03-10T07:30:00.000Z');
    // 01:30 happens twice on 2024-11-03: the first (EDT) is taken.
    expect(iso('2024-11-03T01:30:00', 'America/New_York')).toBe('2024-11-03T05:30:00.000Z');
  });

  it('says why a value is not a timestamp, and treats empty as none', () => {
    expect(iso('yesterday')).toMatch(/not ISO 8601/);
    expect(iso('2024-02-30T00:00:00Z')).toMatch(/not a valid date/);
    expect(iso('2024-01-01T24:00:00Z')).toMatch(/not a valid date/);
    // An offset past ±23:59 was read as whole days off (+24:00 named the day before).
    expect(iso('2025-01-06T10:00:00+24:00')).toMatch(/offset \+24:00; offsets lie within ±23:59/);
    expect(iso('2025-01-06T10:00:00-2400')).toMatch(/offset -2400/);
    expect(iso('2025-01-06T10:00:00+05:60')).toMatch(/offset \+05:60/);
    expect(iso('2025-01-06T10:00:00+99')).toMatch(/offset \+99/);
    expect(iso('2025-01-06T10:00:00+23:59')).toBe('2025-01-05T10:01:00.000Z');
    expect(iso('2025-01-06T10:00:00-23:59')).toBe('2025-01-07T09:59:00.000Z');
    expect(iso(true)).toMatch(/string or number/);
    expect(parseTimestamp('', 'UTC')).toBeUndefined();
    expect(parseTimestamp(undefined, 'UTC')).toBeUndefined();
  });

  it('reads years 0-99 as written, not as 1900-1999 (Go and .NET placeholders land outside the range)', () => {
    expect(iso('0001-01-01T00:00:00Z')).toBe('0001-01-01T00:00:00.000Z');
    expect(iso('0050-06-01T12:00:00+01:00')).toBe('0050-06-01T11:00:00.000Z');
    expect(iso('00991231T000000Z')).toBe('0099-12-31T00:00:00.000Z');
    expect(iso('0000-01-01')).toBe('0000-01-01T00:00:00.000Z');
    expect(iso('0100-02-29T00:00:00Z')).toMatch(/not a valid date/);
  });

  it('truncates fractions finer than nanoseconds too, as the service reads them', () => {
    expect(iso('2024-01-02T03:04:05.1234567891Z')).toBe('2024-01-02T03:04:05.123Z');
    expect(iso('20240102T030405,99999999999Z')).toBe('2024-01-02T03:04:05.999Z');
  });

  it('refuses eight digits that also name a day, giving both readings', () => {
    expect(iso('20240102')).toBe(
      'timestamp 20240102 is ambiguous: the date 2024-01-02 or epoch seconds (1970-08-23T06:15:02.000Z); write 2024-01-02 (or 20240102T000000Z), or the time in milliseconds',
    );
    expect(iso(20240102)).toMatch(/ambiguous: the date 2024-01-02/);
    // Eight digits that are no day, and other lengths, stay epoch times.
    expect(iso('86400000')).toBe('1972-09-27T00:00:00.000Z');
    expect(iso('20241302')).toBe('1970-08-23T06:35:02.000Z');
    expect(iso('30001231')).toBe(new Date(30_001_231_000).toISOString());
    expect(iso('1704164645')).toBe('2024-01-02T03:04:05.000Z');
  });

  // Every quarter hour of local time on every day the offset changes in 2024-2026 (and the evening
  // before and morning after), plus a time between quarters, against a brute-force reference: the
  // earliest instant whose Intl-rendered local time is the input; for a local time that does not
  // exist, the input read with the offset before the gap (it moves forward by the gap).
  const zones = [
    'America/New_York',
    'America/Los_Angeles',
    'Australia/Sydney',
    'Europe/Berlin',
    'Europe/London',
    'Australia/Lord_Howe', // a 30-minute change
  ];
  it.each(zones)('reads every naive time around each DST change of 2024-2026 in %s exactly', (tz) => {
    const local = localFields(tz);
    const changes = transitions(tz);
    expect(changes).toHaveLength(6);
    let skipped = 0;
    let repeated = 0;
    for (const change of changes) {
      // Local times from 18:00 the evening before the change's local date to 06:00 the morning after.
      const changeDay = Math.floor(local(change) / DAY) * DAY;
      const from = changeDay - 6 * HOUR;
      const to = changeDay + DAY + 6 * HOUR;
      // Brute force: every quarter-hour instant that can show one of those local times, by local time.
      const instants = new Map<number, number[]>();
      for (let t = from - 15 * HOUR; t <= to + 15 * HOUR; t += QUARTER) {
        const wall = local(t);
        instants.set(wall, [...(instants.get(wall) ?? []), t]);
      }
      const offsetBefore = local(change - QUARTER) - (change - QUARTER);
      for (let wall = from; wall < to; wall += QUARTER) {
        const found = instants.get(wall) ?? [];
        if (found.length === 0) skipped++;
        if (found.length > 1) repeated++;
        const expected = found.length > 0 ? Math.min(...found) : wall - offsetBefore;
        // Offsets change on quarter hours: a time between two is read like the quarter before it.
        const between = 7 * MINUTE + 30_123;
        expect(iso(naive(wall), tz), `${naive(wall)} in ${tz}`).toBe(new Date(expected).toISOString());
        expect(iso(naive(wall + between), tz), `${naive(wall + between)} in ${tz}`).toBe(
          new Date(expected + between).toISOString(),
        );
      }
    }
    // Three springs forward and three falls back, each covered.
    const perChange = tz === 'Australia/Lord_Howe' ? 2 : 4;
    expect(skipped).toBe(3 * perChange);
    expect(repeated).toBe(3 * perChange);
  });

  it('takes the cases the issue reported: the hours after a change, and the earlier of a repeated hour', () => {
    expect(iso('2025-03-09T03:00:00', 'America/New_York')).toBe('2025-03-09T07:00:00.000Z');
    expect(iso('2025-03-09T06:59:00', 'America/New_York')).toBe('2025-03-09T10:59:00.000Z');
    expect(iso('2025-03-09T03:00:00', 'America/Los_Angeles')).toBe('2025-03-09T10:00:00.000Z');
    expect(iso('2025-03-09T09:59:00', 'America/Los_Angeles')).toBe('2025-03-09T16:59:00.000Z');
    expect(iso('2025-10-26T01:30:00', 'Europe/Berlin')).toBe('2025-10-25T23:30:00.000Z');
    // 02:30 happens twice in Berlin that night: CEST first (00:30Z), then CET (01:30Z).
    expect(iso('2025-10-26T02:30:00', 'Europe/Berlin')).toBe('2025-10-26T00:30:00.000Z');
    // Sydney's 02:30 on 2025-04-06 happens twice too (AEDT, then AEST); 02:30 on 2025-10-05 never.
    expect(iso('2025-04-06T02:30:00', 'Australia/Sydney')).toBe('2025-04-05T15:30:00.000Z');
    expect(iso('2025-10-05T02:30:00', 'Australia/Sydney')).toBe('2025-10-04T16:30:00.000Z');
  });

  it('round-trips wall times through zones that are not whole hours', () => {
    const wall = Date.UTC(2024, 5, 1, 9, 0);
    expect(new Date(wallTimeToInstant(wall, 'Asia/Kolkata')).toISOString()).toBe('2024-06-01T03:30:00.000Z');
    expect(new Date(wallTimeToInstant(wall, 'Asia/Kathmandu')).toISOString()).toBe(
      '2024-06-01T03:15:00.000Z',
    );
  });
});
