import Table from 'cli-table3';
import { json } from './output.js';
import { escapeControls } from './terminal-text.js';

/** What the summary shows (cli.md's object plus the fields below); commands/import.ts produces it. */
export interface ImportSummaryData {
  /** Records read in this run. */
  records: number;
  events: number;
  accepted: number;
  /** Events the service already had, plus exact duplicate records of the input (imported once). */
  duplicates: number;
  /** Of `duplicates`: exact duplicate records in the input (`--keep-duplicates` keeps them). */
  duplicate_records: number;
  /** Records rejected (never the ends the import adds: see `ends_refused`). */
  rejected: number;
  /** Session ends the import added that the service refused. */
  ends_refused: number;
  batches: number;
  retries: number;
  seconds: number;
  /** Records of a resumed run that an earlier run had delivered. */
  skipped: number;
  /** The run stopped early (interrupted, or --max-errors). */
  stopped: boolean;
  /** When stopped: records never read (null: unknown, as for stdin). */
  unread?: number | null;
  /** When stopped: records read that the service did not acknowledge, sent or not (a re-run sends them). */
  unsent?: number;
  /** When the run failed (the service refused or went away): why, as stderr says it. */
  error?: string;
}

export interface ImportOutcome {
  summary: ImportSummaryData;
  end: 'complete' | 'interrupted' | 'max-errors' | 'already-complete';
  dryRun: boolean;
  /** Dry run: events that would be sent, by name. */
  byEvent?: Record<string, number>;
  /** The checkpoint file; undefined when the input has none (stdin). */
  checkpoint?: string | undefined;
  /** Why the checkpoint could not be saved, when it could not: a re-run starts over. */
  checkpointLost?: string | undefined;
}

/** The live counters a progress line reads. */
export interface ProgressStats {
  phase: 'reading' | 'sending';
  records: number;
  skipped: number;
  placed: number;
  staged: number;
  events: number;
  sent: number;
  accepted: number;
  duplicates: number;
  /** Of `duplicates`: exact duplicate records of the input, never sent. */
  duplicateRecords: number;
  rejected: number;
  bytes: number;
}

const n = (x: number): string => x.toLocaleString('en-US');

/**
 * Events the service said it held already: `duplicates` less the input's own duplicate records,
 * which were never sent (found by probing: "96 already there" of a fresh store, acked above sent).
 */
export const alreadyStored = (s: Pick<ProgressStats, 'duplicates' | 'duplicateRecords'>): number =>
  s.duplicates - s.duplicateRecords;

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
 * One progress line that fits `columns`: while reading, records and bytes (the ETA from bytes; for
 * compressed input, compressed bytes); while sending, records placed of those read. Fields are
 * dropped by priority when the line is too long, the percentage and the ETA last.
 */
export function progressLine(
  stats: ProgressStats,
  info: {
    totalBytes: number | undefined;
    /** Time since the current phase began. */
    elapsedMs: number;
    dryRun: boolean;
    columns?: number;
  },
): string {
  const seconds = Math.max(info.elapsedMs / 1000, 0.001);
  const fields: Array<{ text: string; keep: number }> = [];
  const eta = (done: number, total: number) => {
    const rate = done / seconds;
    return `ETA ${duration(rate > 0 ? (total - done) / rate : Number.POSITIVE_INFINITY)}`;
  };
  if (stats.phase === 'reading') {
    fields.push({ text: `reading ${n(stats.records)} records`, keep: 9 });
    if (info.totalBytes !== undefined && info.totalBytes > 0) {
      const done = Math.min(stats.bytes, info.totalBytes);
      fields.push(
        { text: `${Math.floor((100 * done) / info.totalBytes)}%`, keep: 10 },
        { text: eta(done, info.totalBytes), keep: 8 },
        { text: `${bytes(done)}/${bytes(info.totalBytes)}`, keep: 3 },
      );
    } else fields.push({ text: bytes(stats.bytes), keep: 3 });
    fields.push({ text: `${n(Math.round(stats.records / seconds))} rec/s`, keep: 2 });
  } else {
    const total = Math.max(stats.staged, 1);
    const done = stats.placed + stats.skipped;
    fields.push(
      { text: `${info.dryRun ? 'mapping' : 'sending'} ${n(done)}/${n(stats.staged)} records`, keep: 9 },
      { text: `${Math.floor((100 * Math.min(done, total)) / total)}%`, keep: 10 },
      { text: eta(stats.placed, Math.max(total - stats.skipped, 1)), keep: 8 },
    );
    if (!info.dryRun)
      fields.push({
        text: `${n(stats.sent)} sent, ${n(stats.accepted + alreadyStored(stats))} acked`,
        keep: 4,
      });
    fields.push({ text: `${n(Math.round(stats.placed / seconds))} rec/s`, keep: 2 });
  }
  fields.push({ text: `${n(stats.rejected)} rejected`, keep: 5 });
  const columns = info.columns ?? Number.POSITIVE_INFINITY;
  const shown = [...fields];
  const line = () => shown.map((f) => f.text).join(' · ');
  while (line().length > columns && shown.length > 1) {
    let lowest = 0;
    shown.forEach((f, i) => {
      if (f.keep < shown[lowest]!.keep) lowest = i;
    });
    shown.splice(lowest, 1);
  }
  return line();
}

/** What running an import again does when its checkpoint could not be saved. */
export const RERUN_WITHOUT_CHECKPOINT =
  'running it again resumes from an earlier one if any, else sends everything again, and nothing is stored twice';

const ENDINGS: Record<Exclude<ImportOutcome['end'], 'max-errors'>, string> = {
  complete: 'import complete',
  interrupted: 'interrupted: the checkpoint is saved; run the same command again to resume',
  'already-complete': 'already imported (checkpoint found); nothing sent. Use --restart to send it again',
};

/** A stop at --max-errors, in one line: how far it got, and what was never read or sent. */
function maxErrorsLine(s: ImportSummaryData): string {
  const unread =
    s.unread === null ? 'the rest of the input was not read' : `${n(s.unread ?? 0)} records were not read`;
  const unsent = s.unsent ? `, ${n(s.unsent)} read but not sent` : '';
  return `stopped at --max-errors after ${n(s.rejected)} rejected records: ${unread}${unsent}; fix the mapping (or raise --max-errors) and run again`;
}

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
  if (s.duplicate_records > 0)
    rows.push([result.dryRun ? 'duplicate records' : '  of which in the input', n(s.duplicate_records)]);
  rows.push(['rejected', n(s.rejected)]);
  if (s.ends_refused > 0) rows.push(['session ends refused', n(s.ends_refused)]);
  if (s.stopped && s.unread !== undefined)
    rows.push(['not read', s.unread === null ? 'unknown' : n(s.unread)]);
  if (s.stopped && s.unsent !== undefined) rows.push(['not sent', n(s.unsent)]);
  if (!result.dryRun) rows.push(['batches', n(s.batches)], ['retries', n(s.retries)]);
  if (s.skipped > 0) rows.push(['resumed after', `${n(s.skipped)} records`]);
  rows.push(['seconds', String(s.seconds)]);
  if (result.dryRun) {
    rows.push(['events by name', '']);
    for (const [name, count] of Object.entries(result.byEvent ?? {}).sort((a, b) => b[1] - a[1])) {
      // An event's name is the input's text: a control sequence in it must not act on the terminal.
      rows.push([`  ${escapeControls(name, { oneLine: true })}`, n(count)]);
    }
  }
  for (const [k, v] of rows) table.push({ [k]: v });
  return `${table.toString()}\n${endingLine(result)}\n`;
}

/** How the run ended, in one line (stderr in JSON mode, under the table otherwise). */
export function endingLine(result: ImportOutcome): string {
  if (result.end === 'max-errors') return maxErrorsLine(result.summary);
  // An empty stdin or file, or a CSV of its header only, ended "import complete" or, with --json, in silence.
  if (result.end === 'complete' && result.summary.records === 0) {
    return 'nothing to import: the input holds no records';
  }
  if (result.dryRun) return 'dry run: nothing was sent';
  // Input from stdin cannot be read again to skip to a place in it: there is no checkpoint.
  if (result.end === 'interrupted' && result.checkpoint === undefined) {
    return 'interrupted: input from stdin has no checkpoint; send it all again, and what was stored is not stored twice';
  }
  if (result.end === 'interrupted' && result.checkpointLost !== undefined) {
    return `interrupted: no checkpoint could be saved (${result.checkpointLost}); ${RERUN_WITHOUT_CHECKPOINT}`;
  }
  // Stopped while reading, nothing was sent and no checkpoint written: it said "the checkpoint is
  // saved" (found by probing). The next run reads the input again, as this one did.
  if (result.end === 'interrupted' && result.summary.batches === 0) {
    return 'interrupted before anything was sent; run the same command again to import it';
  }
  // Its rejects were listed (and written to --reject-file) by the run that completed it.
  if (result.end === 'already-complete' && result.summary.rejected > 0) {
    const r = result.summary.rejected;
    return `already imported (checkpoint found); nothing sent. The run that imported it rejected ${n(r)} record${r === 1 ? '' : 's'}: --restart reads it again to list them (and write --reject-file), storing nothing twice`;
  }
  return ENDINGS[result.end];
}

/** Whether a run's ending needs saying beside a --json summary (on stderr): all but a plain success. */
export const endingWorthSaying = (result: ImportOutcome): boolean =>
  result.end !== 'complete' || result.summary.records === 0;
