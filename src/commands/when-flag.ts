import { parseTimestamp, toIso } from '../importer/timestamps.js';
import { isIsoInstant } from '../shared/time-bins.js';

/**
 * A `--from`/`--to` time as the service takes it. An ISO 8601 time the wire accepts is kept as
 * given; any other form `cas import` reads (no seconds, a space for `T`, the basic `20250309T0500Z`,
 * an offset with seconds as charts print for zones before ~1972, or no offset: a wall time in `tz`)
 * is the instant it names, with Z. A time copied from the user's own data or from a chart's bins was
 * refused here while the import took it (found by probing). Numbers are not times here: an epoch or
 * a basic date (`20250309`) would be guesses. Undefined when the value is none of these.
 */
export function whenInstant(value: string, tz: string): string | undefined {
  if (isIsoInstant(value)) return value;
  if (!/^\d{4}-?\d{2}-?\d{2}[Tt ]/.test(value.trim())) return undefined;
  const parsed = parseTimestamp(value, tz);
  return parsed?.ok === true ? toIso(parsed.ms) : undefined;
}
