import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Database, openDatabase } from './database.js';
import { rows, text } from './statements.js';

let db: Database;
beforeAll(async () => {
  db = await openDatabase(':memory:');
});
afterAll(async () => {
  await db.close();
});

describe('strings the store reads back', () => {
  it('keep a leading U+FEFF, inline (12 bytes or less) and longer, from SQL and from parameters', async () => {
    const found = await rows<{ made: string; long: string; given: string; n: number }>(
      db.read,
      `SELECT chr(65279) || 'e1' AS made, chr(65279) || repeat('x', 40) AS long, $1 AS given,
              length($1)::DOUBLE AS n`,
      [text('\uFEFFbom')],
    );
    expect(found).toEqual([{ made: '\uFEFFe1', long: `\uFEFF${'x'.repeat(40)}`, given: '\uFEFFbom', n: 4 }]);
  });

  it('still drop nothing else: a U+FEFF inside, and text with no U+FEFF', async () => {
    const [found] = await rows<{ inside: string; plain: string }>(
      db.read,
      `SELECT 'a' || chr(65279) || 'b' AS inside, 'é€😀' AS plain`,
      [],
    );
    expect(found).toEqual({ inside: 'a\uFEFFb', plain: 'é€😀' });
  });
});
