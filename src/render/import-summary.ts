import Table from 'cli-table3';
import { json } from './output.js';

/** What the summary shows (cli.md's object plus `skipped`); commands/import.ts produces it. */
export interface ImportSummaryData {
  records: number;
  events: number;
  accepted: number;
  duplicates: number;
  rejected: number;
  batches: number;
  retries: number;
  seconds: number;
  skipped: number;
}

export interface ImportOutcome {
  summary: ImportSummaryData;
  end: 'complete' | 'interrupted' | 'max-errors' | 'already-complete';
  dryRun: boolean;
  /** Dry run: events that would be sent, by name. */
  byEvent?: Record<string, number>;
}

/** The live counters a progress line reads. */
export interface ProgressStats {
  records: number;
  skipped: number;
  events: number;
  sent: number;
  accepted: number;
  duplicates: number;
  rejected: number;
  bytes: number;
}

const n = (x: number): string => x.toLocaleString('en-US');

function bytes(x: number): string {
  if (x < 1024) return `${x} B`;
  if (x < 1024 ** 2) return `${(x / 1024).toFixed(1)} KiB`;
  if (x < 1024 ** 3) return `${(x / 1024 ** 2).toFixed(1)} MiB`;
  return `${(x / 1024 ** 3).toFixed(2)} GiB`;
}

function duration(seconds: number): string {
  if (!Number.isFinite(seconds)) return '?';
  if (seconds < 60) return `${Math.ceil(seconds)}s`;
  const m = Math.floor(seconds / 60);
  if (m < 60) return `${m}m${String(Math.round(seconds % 60)).padStart(2, '0')}s`;
  return `${Math.floor(m / 60)}h${String(m % 60).padStart(2, '0')}m`;
}

/**
 * One progress line: records read, events sent/acknowledged, rejected, rate, bytes and ETA. The ETA
 * comes from bytes (records per file are unknown up front); compressed input counts compressed bytes.
 */
export function progressLine(
  stats: ProgressStats,
  info: { totalBytes: number | undefined; elapsedMs: number; dryRun: boolean },
): string {
  const seconds = Math.max(info.elapsedMs / 1000, 0.001);
  const read = stats.skipped + stats.records;
  const rate = Math.round(stats.records / seconds);
  const parts = [
    `${n(read)} records`,
    info.dryRun
      ? `${n(stats.events)} events mapped`
      : `${n(stats.sent)} events sent, ${n(stats.accepted + stats.duplicates)} acked`,
    `${n(stats.rejected)} rejected`,
    `${n(rate)} rec/s`,
  ];
  if (info.totalBytes !== undefined && info.totalBytes > 0) {
    const done = Math.min(stats.bytes, info.totalBytes);
    const byteRate = done / seconds;
    const eta = byteRate > 0 ? (info.totalBytes - done) / byteRate : Number.POSITIVE_INFINITY;
    parts.push(
      `${bytes(done)}/${bytes(info.totalBytes)} (${Math.floor((100 * done) / info.totalBytes)}%)`,
      `ETA ${duration(eta)}`,
    );
  } else {
    parts.push(bytes(stats.bytes));
  }
  return parts.join(' · ');
}

const ENDINGS: Record<ImportOutcome['end'], string> = {
  complete: 'import complete',
  interrupted: 'interrupted: the checkpoint is saved; run the same command again to resume',
  'max-errors': 'stopped: too many rejected records (--max-errors)',
  'already-complete': 'already imported (checkpoint found); nothing sent. Use --restart to send it again',
};

/** The final summary: cli.md's object as JSON, or a two-column table with how the run ended. */
export function renderImportSummary(
  result: ImportOutcome,
  format: 'table' | 'json',
  options: { color: boolean },
): string {
  if (format === 'json') return json(result.summary);
  const s = result.summary;
  const table = new Table({
    style: { head: options.color ? ['cyan'] : [], border: options.color ? ['grey'] : [] },
  });
  const rows: Array<[string, string]> = [
    ['records', n(s.records)],
    ['events', n(s.events)],
  ];
  if (!result.dryRun) {
    rows.push(['accepted', n(s.accepted)], ['duplicates', n(s.duplicates)]);
  }
  rows.push(['rejected', n(s.rejected)]);
  if (!result.dryRun) rows.push(['batches', n(s.batches)], ['retries', n(s.retries)]);
  if (s.skipped > 0) rows.push(['resumed after', `${n(s.skipped)} records`]);
  rows.push(['seconds', String(s.seconds)]);
  if (result.dryRun) {
    rows.push(['events by name', '']);
    for (const [name, count] of Object.entries(result.byEvent ?? {}).sort((a, b) => b[1] - a[1])) {
      rows.push([`  ${name}`, n(count)]);
    }
  }
  for (const [k, v] of rows) table.push({ [k]: v });
  return `${table.toString()}\n${endingLine(result)}\n`;
}

/** How the run ended, in one line (stderr in JSON mode, under the table otherwise). */
export function endingLine(result: ImportOutcome): string {
  return result.dryRun ? 'dry run: nothing was sent' : ENDINGS[result.end];
}
