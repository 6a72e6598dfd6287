import { type Command, InvalidArgumentError, Option } from 'commander';
import { LIMITS, type Limits } from '../shared/limits.js';

const UNITS: Record<string, number> = { '': 1, b: 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 };

/** `10MiB`, `512k`, `1048576`: binary multiples, whatever the spelling (k, kb, kib). */
export function parseSize(value: string): number {
  const match = /^(\d+)\s*([kmg]?)(?:i?b)?$/i.exec(value.trim());
  const n = match ? Number(match[1]) * (UNITS[match[2]?.toLowerCase() ?? ''] ?? 1) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < 1) {
    throw new InvalidArgumentError(
      `expected a size such as 512KiB, 10MiB or 1048576 (bytes), got "${value}"`,
    );
  }
  return n;
}

/** `500ms`, `30s`, `2m`; a bare number is milliseconds. */
export function parseDuration(value: string): number {
  const match = /^(\d+)\s*(ms|s|m)?$/i.exec(value.trim());
  const unit = match?.[2]?.toLowerCase();
  const n = match ? Number(match[1]) * (unit === 's' ? 1000 : unit === 'm' ? 60_000 : 1) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < 1) {
    throw new InvalidArgumentError(`expected a duration such as 500ms, 30s or 2m, got "${value}"`);
  }
  return n;
}

function count(min: number) {
  return (value: string): number => {
    const n = Number(value.trim());
    if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(n) || n < min) {
      throw new InvalidArgumentError(`expected a whole number of at least ${min}, got "${value}"`);
    }
    return n;
  };
}

function size(bytes: number): string {
  for (const [unit, factor] of [
    ['GiB', 1024 ** 3],
    ['MiB', 1024 ** 2],
    ['KiB', 1024],
  ] as const) {
    if (bytes % factor === 0) return `${bytes / factor}${unit}`;
  }
  return String(bytes);
}

const seconds = (ms: number) => (ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`);

type Kind = 'size' | 'duration' | 'rate' | 'count';

/** Each `cas serve` limit flag, the limit it sets (decisions §2 and the hardening ones) and its kind. */
const FLAGS: ReadonlyArray<{ flag: string; limit: keyof Limits; kind: Kind; what: string }> = [
  { flag: 'max-body', limit: 'bodyBytes', kind: 'size', what: 'largest request body (413 beyond)' },
  {
    flag: 'max-events',
    limit: 'eventsPerRequest',
    kind: 'count',
    what: 'events in one /events/queue request',
  },
  { flag: 'max-event-size', limit: 'eventBytes', kind: 'size', what: 'one event, serialized' },
  { flag: 'max-chart-bins', limit: 'chartBins', kind: 'count', what: 'bins of one chart range (400 beyond)' },
  {
    flag: 'max-session-ids',
    limit: 'sessionIdsPerPoint',
    kind: 'count',
    what: 'session_ids listed per session-chart point',
  },
  {
    flag: 'max-drilldown-rows',
    limit: 'drilldownRows',
    kind: 'count',
    what: 'users or sessions a drilldown returns',
  },
  {
    flag: 'ingest-rate',
    limit: 'ingestRatePerSecond',
    kind: 'rate',
    what: 'ingest requests/s per key (0: none)',
  },
  { flag: 'ingest-burst', limit: 'ingestBurst', kind: 'count', what: 'ingest requests a key may burst' },
  {
    flag: 'chart-rate',
    limit: 'chartRatePerSecond',
    kind: 'rate',
    what: 'chart requests/s per key (0: none)',
  },
  { flag: 'chart-burst', limit: 'chartBurst', kind: 'count', what: 'chart requests a key may burst' },
  {
    flag: 'auth-failure-rate',
    limit: 'authFailureRatePerSecond',
    kind: 'rate',
    what: 'failed authentications/s per client address, after the burst (0: none)',
  },
  {
    flag: 'auth-failure-burst',
    limit: 'authFailureBurst',
    kind: 'count',
    what: 'failed authentications before 429',
  },
  {
    flag: 'headers-timeout',
    limit: 'headersTimeoutMs',
    kind: 'duration',
    what: 'time to send the headers (408)',
  },
  {
    flag: 'request-timeout',
    limit: 'requestTimeoutMs',
    kind: 'duration',
    what: 'time to send a whole request, body included (408)',
  },
  {
    flag: 'max-connections',
    limit: 'maxConnections',
    kind: 'count',
    what: 'open connections in all (503 beyond)',
  },
  {
    flag: 'max-connections-per-address',
    limit: 'maxConnectionsPerAddress',
    kind: 'count',
    what: 'open connections from one client address',
  },
  {
    flag: 'max-body-in-flight',
    limit: 'bodyBytesInFlight',
    kind: 'size',
    what: 'request body bytes held at once, across clients (503 beyond)',
  },
  {
    flag: 'max-answer-in-flight',
    limit: 'answerBytesInFlight',
    kind: 'size',
    what: 'bytes of answers not yet written out to their clients, across clients (503 beyond)',
  },
];

const PARSERS: Record<Kind, (value: string) => number> = {
  size: parseSize,
  duration: parseDuration,
  rate: count(0),
  count: count(1),
};

const camel = (flag: string) => flag.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());

function shown(kind: Kind, value: number): string {
  return kind === 'size' ? size(value) : kind === 'duration' ? seconds(value) : String(value);
}

/** Adds the limit flags to `cas serve`; defaults are shown, not set, so only given flags override. */
export function addServeLimitOptions(command: Command): Command {
  for (const { flag, limit, kind, what } of FLAGS) {
    const placeholder = kind === 'size' ? '<size>' : kind === 'duration' ? '<duration>' : '<n>';
    command.addOption(
      new Option(`--${flag} ${placeholder}`, `${what} (default: ${shown(kind, LIMITS[limit])})`).argParser(
        PARSERS[kind],
      ),
    );
  }
  return command;
}

/** The limits given on the command line (parsed by the options above), by their names in Limits. */
export function limitsFromFlags(flags: Readonly<Record<string, unknown>>): Partial<Limits> {
  const limits: Partial<Limits> = {};
  for (const { flag, limit } of FLAGS) {
    const value = flags[camel(flag)];
    if (typeof value === 'number') limits[limit] = value;
  }
  return limits;
}
