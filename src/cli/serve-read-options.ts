import { type Command, InvalidArgumentError, Option } from 'commander';
import { READ_LIMITS, type ReadLimits, SERVE_MEMORY_LIMIT } from '../shared/read-limits.js';
import { parseDuration, parseSize } from './serve-limits.js';

/**
 * `cas serve` flags that bound what reads cost: the reader pool, each query's time, DuckDB's memory,
 * and the size of one chart or live-events answer. Defaults are shown, not set, so only given flags
 * override (the service holds the defaults).
 */

function atLeastOne(value: string): number {
  const n = Number(value.trim());
  if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(n) || n < 1) {
    throw new InvalidArgumentError(`expected a whole number of at least 1, got "${value}"`);
  }
  return n;
}

const mib = (bytes: number) => `${Math.round(bytes / 1024 / 1024)}MiB`;

export function addServeReadOptions(command: Command): Command {
  const d = READ_LIMITS;
  return command
    .addOption(
      new Option(
        '--read-connections <n>',
        `reader connections charts and reads share; one tenant gets at most all but one (default: ${d.readConnections})`,
      ).argParser(atLeastOne),
    )
    .addOption(
      new Option(
        '--query-timeout <duration>',
        `time one chart or read may run before it is stopped: 400 "query too expensive" (default: ${d.queryTimeoutMs / 1000}s)`,
      ).argParser(parseDuration),
    )
    .addOption(
      new Option(
        '--memory-limit <size>',
        `DuckDB's memory; larger work spills to disk or is refused as too expensive, a write it has no room for with 503 (default: ${SERVE_MEMORY_LIMIT})`,
      ).argParser(parseSize),
    )
    .addOption(
      new Option(
        '--max-chart-points <n>',
        `points (retention cells) one chart may have: 400 beyond (default: ${d.chartCells})`,
      ).argParser(atLeastOne),
    )
    .addOption(
      new Option(
        '--max-response <size>',
        `bytes of one chart (400 beyond) or live-events answer (fewer events) (default: ${mib(d.responseBytes)})`,
      ).argParser(parseSize),
    );
}

/** The read limits and memory limit given on the command line. */
export function readOptionsFromFlags(flags: Readonly<Record<string, unknown>>): {
  reads: Partial<ReadLimits>;
  memoryLimit: string | undefined;
} {
  const reads: Partial<ReadLimits> = {};
  const number = (key: string) => (typeof flags[key] === 'number' ? (flags[key] as number) : undefined);
  const set = (limit: keyof ReadLimits, value: number | undefined) => {
    if (value !== undefined) reads[limit] = value;
  };
  set('readConnections', number('readConnections'));
  set('queryTimeoutMs', number('queryTimeout'));
  set('chartCells', number('maxChartPoints'));
  set('responseBytes', number('maxResponse'));
  const memory = number('memoryLimit');
  return { reads, memoryLimit: memory === undefined ? undefined : `${memory}B` };
}
