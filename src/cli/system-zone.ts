import { realpathSync } from 'node:fs';
import { isTimeZone } from '../shared/primitives.js';

/**
 * The system's time zone, `--tz`'s default for charts (cli.md), as Node resolves it from `TZ` or the
 * system. UTC when that is no zone: with `TZ` set but empty, which POSIX reads as UTC, Node names
 * "Etc/Unknown", and a chart failed as "this is a bug" or blamed `--from/--to` (found by probing).
 * `TZ` may name a zone file (`TZ=/usr/share/zoneinfo/America/New_York`, or `:` before it): the C
 * library and Node's `Date` read it, while Intl names no zone, and charts were in UTC without a word
 * (found by probing); the zone is then the file's name under `zoneinfo/`, its link's target followed.
 */
export function systemTimeZone(tzVariable = process.env.TZ): string {
  const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  if (zone !== undefined && isTimeZone(zone)) return zone;
  return zoneOfFile(tzVariable) ?? zoneOfOffset(tzVariable, new Date().getTimezoneOffset()) ?? 'UTC';
}

/**
 * A POSIX fixed-offset `TZ` (`UTC+5`, `<-03>3`, no daylight-saving part), which the C library and
 * Node's `Date` follow while Intl names no zone: the `Etc/GMT` zone of that many whole hours (its sign
 * is POSIX's, west positive, as `offsetMinutes` is). Charts were in UTC without a word (found by
 * probing). A half-hour offset has no such zone: undefined.
 */
export function zoneOfOffset(tzVariable: string | undefined, offsetMinutes: number): string | undefined {
  if (
    tzVariable === undefined ||
    !/^(?:[A-Za-z]{3,}|<[A-Za-z0-9+-]+>)[+-]?\d{1,2}(?::\d{2}){0,2}$/.test(tzVariable)
  )
    return undefined;
  if (offsetMinutes % 60 !== 0) return undefined;
  const hours = offsetMinutes / 60;
  if (hours === 0) return 'UTC';
  const name = `Etc/GMT${hours > 0 ? '+' : '-'}${Math.abs(hours)}`;
  return isTimeZone(name) ? name : undefined;
}

/** The IANA name of a zone file `TZ` names, if it lies under a `zoneinfo` folder. */
export function zoneOfFile(tzVariable: string | undefined): string | undefined {
  const path = tzVariable?.replace(/^:/, '');
  if (path === undefined || !path.startsWith('/')) return undefined;
  const paths = [path];
  try {
    paths.push(realpathSync(path));
  } catch {
    // No such file: its name may still be a zone's.
  }
  for (const p of paths) {
    const at = p.lastIndexOf('/zoneinfo/');
    if (at < 0) continue;
    // posix/ and right/ hold the same zones (right/ with leap seconds, which Intl does not count).
    const name = p.slice(at + '/zoneinfo/'.length).replace(/^(posix|right)\//, '');
    if (isTimeZone(name)) return name;
  }
  return undefined;
}
