import { once } from 'node:events';
import { createWriteStream, type WriteStream } from 'node:fs';
import { type Rejection, where } from './types.js';

/**
 * The stderr line for a rejected record: `file:line: reason`, one line whatever the reason holds: a
 * line break shows as `\n` (other control characters are escaped where the line is written), where
 * collapsing all whitespace to one space changed the values a reason quotes.
 */
export function rejectionLine(r: Rejection): string {
  const reason = r.reason.trim().replace(/\r?\n/g, '\\n');
  return `${where(r.source)}: ${reason.length > 500 ? `${reason.slice(0, 497)}...` : reason}`;
}

/**
 * `--reject-file`: one JSON object per rejected record with the original record, where it was and
 * why, so the file can be fixed and imported again. A resumed run appends (earlier rejections stay).
 */
export class RejectFile {
  private readonly stream: WriteStream;
  private failed: Error | undefined;

  constructor(path: string, append: boolean) {
    this.stream = createWriteStream(path, { flags: append ? 'a' : 'w', mode: 0o644 });
    this.stream.on('error', (error) => {
      this.failed = error;
    });
  }

  /** Opens the file now, so a bad path is reported before any record is read. */
  async ready(): Promise<void> {
    if (this.failed) throw this.failed;
    await Promise.race([
      once(this.stream, 'open'),
      once(this.stream, 'error').then(([error]) => {
        throw error;
      }),
    ]);
  }

  write(r: Rejection): void {
    if (this.failed) return;
    const line = { file: r.source.file, line: r.source.line, reason: r.reason, record: r.record };
    this.stream.write(`${JSON.stringify(line)}\n`);
  }

  async close(): Promise<void> {
    if (!this.stream.closed) {
      this.stream.end();
      await once(this.stream, 'close').catch(() => undefined);
    }
    if (this.failed) throw this.failed;
  }
}
