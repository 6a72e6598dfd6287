import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseQueueBody } from '../../shared/events.js';
import { LexicalAnalyser } from '../analysis/lexical-analyser.js';
import { checkpointThreshold, openDatabase, sizeInBytes } from '../store/database.js';
import { Ingestor } from './ingestor.js';

const dir = mkdtempSync(join(tmpdir(), 'cas-ingest-memory-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * Committed rows wait in DuckDB's memory for the checkpoint; large texts filled a small memory_limit
 * before the checkpoint threshold, and every COMMIT after that failed (the embedded import's 500 on
 * 50 MB of 54 KB answers, found by probing). Under a memory limit the threshold is half of it.
 */
describe('the checkpoint threshold under a memory limit', () => {
  it('is half the limit, up to the usual threshold', () => {
    expect(checkpointThreshold('64MB')).toBe('32MB');
    expect(checkpointThreshold('16MB')).toBe('8MB');
    expect(checkpointThreshold('1GiB')).toBe('128MB');
    expect(checkpointThreshold(undefined)).toBe('128MB');
    expect(sizeInBytes('1.5 GiB')).toBe(1.5 * 2 ** 30);
    expect(sizeInBytes('lots')).toBeUndefined();
  });
});

describe('Ingestor under a small DuckDB memory', () => {
  it('stores every request, where COMMITs failed once committed texts filled it', async () => {
    const db = await openDatabase(join(dir, 'store.duckdb'), { memoryLimit: '32MB' });
    const ingestor = new Ingestor(db, new LexicalAnalyser());
    try {
      const text = 'lorem ipsum '.repeat(9_000);
      const results: unknown[] = [];
      for (let r = 0; r < 30; r++) {
        const parsed = parseQueueBody(
          Array.from({ length: 10 }, (_, i) => ({
            type: 'track',
            event: 'Conversation Turn',
            session_id: `s${r}`,
            user_id: 'u',
            timestamp: new Date(Date.UTC(2025, 0, 1, 0, r, i)).toISOString(),
            properties: { user: `q${r}-${i}`, assistant: `${i}${text}` },
          })),
        );
        if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
        results.push(
          await ingestor
            .ingest({ orgId: 'o', projectId: 'p' }, parsed.events, Date.now())
            .catch((e: unknown) => String(e)),
        );
      }
      expect(results.filter((r) => typeof r === 'string')).toEqual([]);
      const stored = await db.read.one<{ n: bigint }>(
        `SELECT count(*) AS n FROM events WHERE project_id = 'p' AND event = 'Conversation Turn'`,
      );
      expect(Number(stored?.n)).toBe(300);
    } finally {
      ingestor.close();
      await db.close();
    }
  });
});
