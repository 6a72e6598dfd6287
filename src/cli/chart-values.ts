import { readFileSync } from 'node:fs';
import type { ChartFlags, OrderedFlag } from '../commands/chart-flags.js';
import { UsageError } from '../commands/errors.js';

/** Commander's option values (untyped) → the ChartFlags the chart commands take. */

export const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

export function texts(value: unknown): string[] | undefined {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : undefined;
}

export function orderedFlags(value: unknown): OrderedFlag[] {
  if (!Array.isArray(value)) return [];
  return value.flatMap((item: unknown) => {
    if (item === null || typeof item !== 'object') return [];
    const { flag, value: v } = item as Record<string, unknown>;
    return typeof flag === 'string' && typeof v === 'string' ? [{ flag, value: v }] : [];
  });
}

/** `--controls <file>` read now, so a missing file is a usage error naming it. */
export function readControlsFile(path: string): NonNullable<ChartFlags['controls']> {
  try {
    return { source: path, text: readFileSync(path, 'utf8') };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'unreadable';
    throw new UsageError(
      `--controls ${path}: cannot read the file (${code})`,
      'give a JSON file, or - for stdin',
    );
  }
}

export function chartFlagsOf(f: Record<string, unknown>, controls: ChartFlags['controls']): ChartFlags {
  return {
    from: text(f.from),
    to: text(f.to),
    last: text(f.last),
    period: text(f.period),
    tz: text(f.tz),
    sequence: orderedFlags(f.sequence),
    groupBy: text(f.groupBy),
    trait: text(f.trait),
    userWhere: texts(f.userWhere),
    cohort: text(f.cohort),
    window: text(f.window),
    analyse: text(f.analyse),
    controls,
  };
}
