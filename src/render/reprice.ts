import type { RepriceResult } from '../shared/reprice.js';
import { type CsvOptions, type OutputFormat, renderRecord } from './output.js';

/** `cas reprice`'s answer: one record (JSON as the service sent it; a table lists unknown models in one cell). */
export function renderReprice(
  result: RepriceResult,
  format: OutputFormat,
  options: { color: boolean; csv?: CsvOptions },
): string {
  // JSON and JSONL hold the object `--json` holds: lists stay lists (JSONL joined them, found by probing).
  if (format === 'json' || format === 'jsonl') return renderRecord(result, format, options);
  const { unknown_models: unknown, ...counts } = result;
  return renderRecord({ ...counts, unknown_models: unknown.join(', ') || '-' }, format, options);
}
