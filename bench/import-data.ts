import { once } from 'node:events';
import { createWriteStream } from 'node:fs';

/**
 * The import benchmark's data (issue 16): `n` turns with explicit session and conversation ids, as
 * CSV and JSONL, sorted by time or shuffled. Sessions hold 1-12 turns in 1-3 conversations, ~300 of
 * them open at once, users come back later; texts and token counts vary like chat logs do.
 */
export const TURN_COLUMNS = [
  'timestamp',
  'session_id',
  'conversation_id',
  'user_id',
  'user',
  'assistant',
  'model',
  'prompt_tokens',
  'completion_tokens',
] as const;

export type Turn = Record<(typeof TURN_COLUMNS)[number], string | number>;
export type Order = 'sorted' | 'shuffled';

const MODELS = ['gpt-4o', 'gpt-4o-mini', 'claude-3-5-sonnet', 'llama-3.1-70b'];

function random(seed: number): () => number {
  let s = seed;
  return () => {
    s = (s * 1103515245 + 12345) & 0x7fffffff;
    return s / 0x80000000;
  };
}

export function generateTurns(n: number): Turn[] {
  const rand = random(16);
  const users = Math.max(10, Math.floor(n / 40));
  let sessions = 0;
  const fresh = () => {
    const turns = 1 + Math.floor(rand() * 12);
    return {
      session: `s${sessions++}`,
      user: `user${Math.floor(rand() * users)}`,
      left: turns,
      conversations: 1 + Math.floor(rand() * Math.min(3, turns)),
      done: 0,
      total: turns,
      model: MODELS[Math.floor(rand() * MODELS.length)] ?? '',
    };
  };
  const active = Array.from({ length: 300 }, fresh);
  const out: Turn[] = [];
  let t = Date.UTC(2025, 0, 1);
  for (let i = 0; i < n; i++) {
    t += 20 + Math.floor(rand() * 60);
    const slot = Math.floor(rand() * active.length);
    const s = active[slot] as ReturnType<typeof fresh>;
    const conversation = Math.floor((s.done * s.conversations) / s.total);
    out.push({
      timestamp: new Date(t).toISOString(),
      session_id: s.session,
      conversation_id: `${s.session}-c${conversation}`,
      user_id: s.user,
      user: `How do I fix problem ${i % 997} with my account, order ${i}?`,
      assistant: `Sure: open Settings, choose "Account", then follow step ${i % 13}. Anything else?`,
      model: s.model,
      prompt_tokens: 20 + (i % 500),
      completion_tokens: 10 + (i % 300),
    });
    s.done++;
    if (--s.left === 0) active[slot] = fresh();
  }
  return out;
}

export function shuffle<T>(rows: readonly T[]): T[] {
  const rand = random(61);
  const out = [...rows];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}

const csvField = (v: string | number): string => {
  const s = String(v);
  return /[",\n\r]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
};

async function writeLines(path: string, first: string, lines: Iterable<string>): Promise<void> {
  const out = createWriteStream(path);
  let chunk = first;
  for (const line of lines) {
    chunk += line;
    if (chunk.length > 1 << 20) {
      if (!out.write(chunk)) await once(out, 'drain');
      chunk = '';
    }
  }
  out.end(chunk);
  await once(out, 'close');
}

export type TurnFormat = 'csv' | 'jsonl';

/** The files of one size: for each order, the formats some row reads. */
export interface SizeFiles {
  size: number;
  base: string;
  wants: Array<{ order: Order; formats: TurnFormat[] }>;
}

/** Generates `size` turns once and writes the files asked for; returns `order-format` → path. */
export async function writeSizeFiles(job: SizeFiles): Promise<Record<string, string>> {
  const turns = generateTurns(job.size);
  const out: Record<string, string> = {};
  for (const { order, formats } of job.wants) {
    const paths = await writeTurnFiles(job.base, turns, order, formats);
    for (const format of formats) out[`${order}-${format}`] = paths[format];
  }
  return out;
}

/** Writes `<base>-<order>.<format>` for each format asked (default both); returns their paths. */
export async function writeTurnFiles(
  base: string,
  turns: readonly Turn[],
  order: Order,
  formats: readonly TurnFormat[] = ['csv', 'jsonl'],
): Promise<{ csv: string; jsonl: string }> {
  const rows = order === 'sorted' ? turns : shuffle(turns);
  const csv = `${base}-${order}.csv`;
  const jsonl = `${base}-${order}.jsonl`;
  if (formats.includes('csv'))
    await writeLines(
      csv,
      `${TURN_COLUMNS.join(',')}\n`,
      (function* () {
        for (const r of rows) yield `${TURN_COLUMNS.map((c) => csvField(r[c])).join(',')}\n`;
      })(),
    );
  if (formats.includes('jsonl'))
    await writeLines(
      jsonl,
      '',
      (function* () {
        for (const r of rows) yield `${JSON.stringify(r)}\n`;
      })(),
    );
  return { csv, jsonl };
}
