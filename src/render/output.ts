import Table from 'cli-table3';

export type OutputFormat = 'table' | 'json' | 'jsonl' | 'csv';

/** cli.md: JSON unless a person is looking (stdout is a terminal) or a format is asked for. */
export function chooseFormat(
  options: { format?: string | undefined; json?: boolean | undefined },
  isTty: boolean,
): OutputFormat {
  if (options.json) return 'json';
  if (
    options.format === 'table' ||
    options.format === 'json' ||
    options.format === 'jsonl' ||
    options.format === 'csv'
  ) {
    return options.format;
  }
  return isTty ? 'table' : 'json';
}

export function json(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

function cell(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/** A record as a two-column table; nested objects (traits) expand one row per key. */
export function keyValueTable(record: Record<string, unknown>, options: { color: boolean }): string {
  const table = new Table({
    style: { head: options.color ? ['cyan'] : [], border: options.color ? ['grey'] : [] },
  });
  for (const [key, value] of Object.entries(record)) {
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
      const entries = Object.entries(value);
      if (entries.length === 0) table.push({ [key]: '(none)' });
      for (const [inner, innerValue] of entries) table.push({ [`${key}.${inner}`]: cell(innerValue) });
    } else {
      table.push({ [key]: Array.isArray(value) ? value.map(cell).join(', ') : cell(value) });
    }
  }
  return `${table.toString()}\n`;
}

export function renderRecord(
  record: Record<string, unknown>,
  format: OutputFormat,
  options: { color: boolean },
): string {
  if (format === 'json') return json(record);
  if (format === 'jsonl') return `${JSON.stringify(record)}\n`;
  if (format === 'csv') {
    const keys = Object.keys(record);
    return `${keys.join(',')}\n${keys.map((k) => csvField(cell(record[k]))).join(',')}\n`;
  }
  return keyValueTable(record, options);
}

export function csvField(value: string): string {
  return /[",\n\r]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}
