import { isTimeZone } from '../shared/primitives.js';

/**
 * The system's time zone, `--tz`'s default for charts (cli.md), as Node resolves it from `TZ` or the
 * system. UTC when that is no zone: with `TZ` set but empty, which POSIX reads as UTC, Node names
 * "Etc/Unknown", and a chart failed as "this is a bug" or blamed `--from/--to` (found by probing).
 */
export function systemTimeZone(): string {
  const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  return zone !== undefined && isTimeZone(zone) ? zone : 'UTC';
}
