import { DuckDBInstance } from '@duckdb/node-api';
import { describe, expect, it } from 'vitest';
import { conversationKey, conversationKeySql } from './conversation-key.js';

/** Pairs a plain separator or a character count would confuse, and ids outside ASCII. */
const PAIRS: Array<[string, string]> = [
  ['a', 'None'],
  ['b', 'None'],
  ['a\u0000b', 'c'],
  ['a', 'b\u0000c'],
  ['1:a', 'b'],
  ['1', ':ab'],
  ['é', 'x'],
  ['e', '\u0301x'],
  ['😀', 'None'],
  ['s', ''],
  ['', 's'],
];

describe('conversationKey', () => {
  it('gives each (session, conversation) pair its own key', () => {
    const keys = PAIRS.map(([s, c]) => conversationKey(s, c));
    expect(new Set(keys).size).toBe(PAIRS.length);
  });

  it('is the key DuckDB computes from the stored columns', async () => {
    const instance = await DuckDBInstance.create(':memory:');
    const c = await instance.connect();
    try {
      await c.run('CREATE TABLE conversations (session_id VARCHAR, conversation_id VARCHAR, n INTEGER)');
      for (const [i, [s, conv]] of PAIRS.entries())
        await c.run('INSERT INTO conversations VALUES ($1, $2, $3)', [s, conv, i]);
      const reader = await c.runAndReadAll(
        `SELECT ${conversationKeySql('x')} AS k FROM conversations x ORDER BY n`,
      );
      expect(reader.getRows().map((r) => r[0])).toEqual(PAIRS.map(([s, conv]) => conversationKey(s, conv)));
    } finally {
      c.closeSync();
      instance.closeSync();
    }
  });
});
