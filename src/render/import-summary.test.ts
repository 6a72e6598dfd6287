import { describe, expect, it } from 'vitest';
import {
  endingLine,
  endingWorthSaying,
  type ProgressStats,
  progressLine,
  renderImportSummary,
} from './import-summary.js';

const stats = (over: Partial<ProgressStats> = {}): ProgressStats => ({
  phase: 'sending',
  records: 1_234_567,
  skipped: 0,
  placed: 612_345,
  staged: 1_230_000,
  events: 1_500_000,
  sent: 1_456_789,
  accepted: 1_400_000,
  duplicates: 12_345,
  duplicateRecords: 0,
  rejected: 4_567,
  bytes: 734_003_200,
  ...over,
});
const info = { totalBytes: 1_468_006_400, elapsedMs: 61_000, dryRun: false };

describe('progressLine', () => {
  it('fits 80 columns by dropping fields by priority, keeping the percentage and ETA last', () => {
    for (const phase of ['reading', 'sending'] as const) {
      const full = progressLine(stats({ phase }), info);
      expect(full.length).toBeGreaterThan(80);
      const fitted = progressLine(stats({ phase }), { ...info, columns: 77 });
      expect(fitted.length).toBeLessThanOrEqual(77);
      expect(fitted).toMatch(/\d+%/);
      expect(fitted).toMatch(/ETA \S+/);
      const tiny = progressLine(stats({ phase }), { ...info, columns: 30 });
      expect(tiny).toMatch(/^\d+%$|ETA|%/);
    }
  });

  it('counts as acked what the service answered for, not the duplicate records it was never sent', () => {
    const line = progressLine(
      stats({ sent: 30_575, accepted: 30_000, duplicates: 874, duplicateRecords: 299 }),
      info,
    );
    expect(line).toContain('30,575 sent, 30,575 acked');
  });

  it('says the phase, what is done of what, and the rejected count when there is room', () => {
    expect(progressLine(stats({ phase: 'reading' }), info)).toMatch(
      /^reading 1,234,567 records · 50% · ETA 1m0\ds · 700\.0 MiB\/1\.37 GiB · [\d,]+ rec\/s · 4,567 rejected$/,
    );
    expect(progressLine(stats(), info)).toMatch(
      /^sending 612,345\/1,230,000 records · 49% · ETA \S+ · 1,456,789 sent, 1,412,345 acked · [\d,]+ rec\/s · 4,567 rejected$/,
    );
  });
});

const summary = {
  records: 500,
  events: 0,
  accepted: 0,
  duplicates: 0,
  duplicate_records: 0,
  rejected: 101,
  ends_refused: 0,
  batches: 0,
  retries: 0,
  seconds: 1,
  skipped: 0,
  stopped: true,
};

describe('endingLine', () => {
  it('tells a stop at --max-errors from a finished run, with what was not read or sent', () => {
    const stopped = endingLine({
      summary: { ...summary, unread: 1200, unsent: 0 },
      end: 'max-errors',
      dryRun: false,
    });
    expect(stopped).toMatch(
      /^stopped at --max-errors after 101 rejected records: 1,200 records were not read;/,
    );
    const unknown = endingLine({
      summary: { ...summary, unread: null, unsent: 30 },
      end: 'max-errors',
      dryRun: false,
    });
    expect(unknown).toMatch(/the rest of the input was not read, 30 read but not sent/);
    expect(endingLine({ summary: { ...summary, stopped: false }, end: 'complete', dryRun: false })).toBe(
      'import complete',
    );
  });

  // An empty stdin, or a CSV of its header only, ended "import complete", and with --json said nothing.
  it('says when the input held no records, a dry run too, and that it is worth saying beside --json', () => {
    const empty = { ...summary, records: 0, rejected: 0, stopped: false };
    for (const dryRun of [false, true]) {
      const run = { summary: empty, end: 'complete', dryRun } as const;
      expect(endingLine(run)).toBe('nothing to import: the input holds no records');
      expect(endingWorthSaying(run)).toBe(true);
    }
    const done = { summary: { ...summary, stopped: false }, end: 'complete', dryRun: false } as const;
    expect(endingWorthSaying(done)).toBe(false);
    expect(endingWorthSaying({ ...done, end: 'interrupted' })).toBe(true);
  });

  // Stdin has no checkpoint, yet an interrupted stdin import said "the checkpoint is saved".
  it('promises a resume only where there is a checkpoint', () => {
    const interrupted = { summary: { ...summary, batches: 3 }, end: 'interrupted', dryRun: false } as const;
    expect(endingLine({ ...interrupted, checkpoint: '/d/imports/ab.json' })).toMatch(/checkpoint is saved/);
    // Stopped while reading, before any batch: there is nothing to resume from.
    expect(
      endingLine({ ...interrupted, summary: { ...summary, batches: 0 }, checkpoint: '/d/imports/ab.json' }),
    ).toBe('interrupted before anything was sent; run the same command again to import it');
    expect(endingLine({ ...interrupted, checkpoint: undefined })).toBe(
      'interrupted: input from stdin has no checkpoint; send it all again, and what was stored is not stored twice',
    );
    // A checkpoint that could not be saved is none either.
    const lost = 'permission denied in /d/imports';
    expect(endingLine({ ...interrupted, checkpoint: '/d/imports/ab.json', checkpointLost: lost })).toBe(
      `interrupted: no checkpoint could be saved (${lost}); running it again resumes from an earlier one if any, else sends everything again, and nothing is stored twice`,
    );
  });

  // A re-run over a complete checkpoint counted the earlier run's rejects, exit 6, and listed none.
  it('says where the rejects of an input imported already are to be seen', () => {
    const done = { end: 'already-complete', dryRun: false, checkpoint: '/d/imports/ab.json' } as const;
    expect(endingLine({ ...done, summary: { ...summary, stopped: false, rejected: 4 } })).toBe(
      'already imported (checkpoint found); nothing sent. The run that imported it rejected 4 records: --restart reads it again to list them (and write --reject-file), storing nothing twice',
    );
    expect(endingLine({ ...done, summary: { ...summary, stopped: false, rejected: 0 } })).toBe(
      'already imported (checkpoint found); nothing sent. Use --restart to send it again',
    );
  });
});

describe('renderImportSummary', () => {
  it("shows a dry run's event names with their control characters escaped, each on its own row", () => {
    const text = renderImportSummary(
      {
        summary,
        end: 'complete',
        dryRun: true,
        byEvent: { 'Ev \u001b]0;PWNED\u0007\u001b[2J': 1, 'a\nb': 1 },
      },
      'table',
      { color: false },
    );
    expect([...text].some((c) => c !== '\n' && c.charCodeAt(0) < 0x20)).toBe(false);
    expect(text).toContain('Ev \\x1b]0;PWNED\\x07\\x1b[2J');
    expect(text).toContain('a\\nb');
  });
});
