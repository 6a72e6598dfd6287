import { stripVTControlCharacters } from 'node:util';
import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import type { ConfigReport } from '../commands/config-report.js';
import { userDetailsSchema } from '../shared/users-api.js';
import { renderNewKey } from './admin.js';
import { renderConfigReport } from './config-report.js';
import { renderEvents, renderProperties } from './events.js';
import { renderListing } from './listing.js';
import { renderUserList, renderUserShow } from './users.js';

const opts = { color: false };

describe('renderListing', () => {
  const data = { rows: 2 };
  const listing = {
    columns: ['name', 'n'],
    rows: [
      ['a\u001b]0;x\u0007', 1],
      ['=cmd', null],
    ],
    note: '2 things',
  };

  it('draws a table with stored text escaped, empty cells as -', () => {
    const table = renderListing(data, listing, 'table', opts);
    expect(table).not.toContain('\u001b');
    expect(table).toContain('a\\x1b]0;x\\x07');
    expect(table).toMatch(/│ =cmd\s+│ - │/);
    expect(table.trimEnd().endsWith('2 things')).toBe(true);
  });

  it('keeps each stored value on its line: a line break in it shows as \\n (users list, events, key-value tables)', () => {
    const users = {
      users: [
        {
          id: 'u\nnl',
          user_id: 'u_1',
          created_at: '2025-01-05T10:00:00.000Z',
          aliases: ['u\nnl'],
          traits: { plan: 'a\nb' },
        },
      ],
      total: 1,
    };
    const table = renderUserList(users as Parameters<typeof renderUserList>[0], 'table', opts);
    const [, , , row, bottom] = table.split('\n');
    expect(row).toContain('u\\nnl');
    expect(row).toContain('plan=a\\nb');
    expect(bottom?.startsWith('└')).toBe(true);
    const key = renderNewKey(
      {
        key_id: 'k',
        label: 'two\nlines',
        created_at: '2025-01-05T10:00:00.000Z',
        current: true,
        organization_id: 'o',
        apikey: 's',
      } as Parameters<typeof renderNewKey>[0],
      'table',
      opts,
    );
    expect(key).toContain('two\\nlines');
    expect(key).not.toMatch(/two\n/);
  });

  describe('on a terminal narrower than the table', () => {
    const words = Array.from({ length: 40 }, (_, i) => `word${i}`).join(' ');
    const wide = { columns: ['property', 'count', 'top values'], rows: [['model', 3, words]] };
    const lines = (text: string) => stripVTControlCharacters(text).trimEnd().split('\n');

    it('wraps the widest column so that every line fits, losing no word', () => {
      for (const color of [false, true]) {
        const table = renderListing({}, wide, 'table', { color, width: 60 });
        expect(Math.max(...lines(table).map((l) => l.length))).toBe(60);
        const cells = lines(table).map((l) => l.split('│')[3]?.trim() ?? '');
        expect(cells.join(' ').replace(/\s+/g, ' ')).toContain(words);
      }
    });

    it('breaks a word wider than the narrowed column over lines instead of cutting it short', () => {
      const url = `https://example.com/${'a/'.repeat(40)}token=SECRET123`;
      const long = { columns: ['id', 'traits'], rows: [['w', `note=see ${url} end`]] };
      const table = renderListing({}, long, 'table', { color: false, width: 50 });
      expect(table).not.toContain('…');
      expect(Math.max(...lines(table).map((l) => l.length))).toBeLessThanOrEqual(50);
      const cells = lines(table).map((l) => l.split('│')[2]?.trim() ?? '');
      expect(cells.join('')).toContain(url);
    });

    // Only the widest column was narrowed, and not at all when that could not fit the table: users
    // list (aliases, traits) and properties at 60 columns were drawn 142 and 246 wide (found by probing).
    it('narrows every column of text, the widest first, and comes as close as it can to a narrow terminal', () => {
      const two = { columns: ['id', 'aliases', 'traits'], rows: [['u_1', words, `note=${words}`]] };
      const table = renderListing({}, two, 'table', { color: false, width: 70 });
      expect(Math.max(...lines(table).map((l) => l.length))).toBe(70);
      const column = (i: number) => lines(table).map((l) => l.split('│')[i]?.trim() ?? '');
      expect(column(2).join(' ').replace(/\s+/g, ' ')).toContain(words);
      expect(column(3).join(' ').replace(/\s+/g, ' ')).toContain(`note=${words}`);
      // Each column of text down to a readable 16: wider than 20, far narrower than drawn whole.
      const tight = renderListing({}, wide, 'table', { color: false, width: 20 });
      const natural = renderListing({}, wide, 'table', opts);
      expect(lines(tight)[0]!.length).toBeGreaterThan(20);
      expect(lines(tight)[0]!.length).toBeLessThan(40);
      expect(lines(natural)[0]!.length).toBeGreaterThan(100);
    });

    it('leaves a table that fits, or has no column of text, as it is', () => {
      const natural = renderListing({}, wide, 'table', opts);
      expect(renderListing({}, wide, 'table', { color: false, width: 500 })).toBe(natural);
      // Ids and dates are not cut short: only a column of text (with spaces) is narrowed.
      const ids = { columns: ['id', 'user_id'], rows: [['bitext-4840', `u_${'X'.repeat(90)}`]] };
      const drawn = renderListing({}, ids, 'table', opts);
      expect(renderListing({}, ids, 'table', { color: false, width: 60 })).toBe(drawn);
    });
  });

  it('CSV guards formulas and keeps empty cells empty; JSONL is one object per row; JSON is the data', () => {
    expect(parse(renderListing(data, listing, 'csv', opts))).toEqual([
      ['name', 'n'],
      ['a\u001b]0;x\u0007', '1'],
      ["'=cmd", ''],
    ]);
    const lines = renderListing(data, listing, 'jsonl', opts)
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines).toEqual([
      { name: 'a\u001b]0;x\u0007', n: 1 },
      { name: '=cmd', n: null },
    ]);
    expect(JSON.parse(renderListing(data, listing, 'json', opts))).toEqual(data);
  });

  it('says the empty text instead of an empty table', () => {
    expect(renderListing([], { columns: ['a'], rows: [], empty: 'no events' }, 'table', opts)).toBe(
      'no events\n',
    );
  });
});

describe('discovery renderers', () => {
  it('events: counts, days of the first and last row, and a total', () => {
    const text = renderEvents(
      {
        events: [
          {
            event: 'Turn',
            count: 3,
            users: 2,
            first: '2025-01-02T10:00:00.000Z',
            last: '2025-01-05T10:00:00.000Z',
          },
          {
            event: 'Buy',
            count: 1,
            users: 1,
            first: '2025-01-03T00:00:00.000Z',
            last: '2025-01-03T00:00:00.000Z',
          },
        ],
      },
      'table',
      opts,
    );
    expect(text).toMatch(/│ Turn\s+│ 3\s+│ 2\s+│ 2025-01-02 │ 2025-01-05 │/);
    expect(text).toContain('2 event names, 4 events');
  });

  it('properties: types and top values with counts; long values cut in tables only', () => {
    const long = 'x'.repeat(50);
    const result = {
      event: 'Turn',
      properties: [
        {
          property: 'model',
          count: 3,
          types: ['string'],
          distinct: 2,
          top: [
            { value: 'gpt', count: 2 },
            { value: long, count: 1 },
          ],
        },
        {
          property: 'assistant',
          count: 1,
          types: ['string'],
          distinct: 1,
          top: [{ value: '(Verse 1)\n\n  Down by the river', count: 1 }],
        },
      ],
    };
    const table = renderProperties(result, 'table', opts);
    expect(table).toMatch(/gpt \(2\), x{31}… \(1\)/);
    // One line per value in a table, its line breaks shown as escapes: collapsed to a space, "a\nb"
    // and "a b" looked the same (found by probing).
    expect(table).toContain('(Verse 1)\\n\\n  Down by the river (1)');
    expect(parse(renderProperties(result, 'csv', opts))[1]).toEqual([
      'model',
      '3',
      'string',
      '2',
      `gpt (2), ${long} (1)`,
    ]);
    expect(parse(renderProperties(result, 'csv', opts))[2]?.[4]).toBe('(Verse 1)\n\n  Down by the river (1)');
  });

  it('properties: a string that reads as another type, or as nothing, is quoted in a table', () => {
    const table = renderProperties(
      {
        event: 'Mixed',
        properties: [
          {
            property: 'v',
            count: 4,
            types: ['string', 'number'],
            distinct: 4,
            top: [
              { value: '1', count: 1 },
              { value: 1, count: 1 },
              { value: '', count: 1 },
              { value: 'true', count: 1 },
            ],
          },
        ],
      },
      'table',
      opts,
    );
    expect(table).toContain('"1" (1), 1 (1), "" (1), "true" (1)');
  });

  it('users: says how many are shown of how many', () => {
    const text = renderUserList(
      {
        users: [
          {
            id: 'u1',
            user_id: 'u_1',
            aliases: ['a'],
            created_at: '2025-01-01T00:00:00.000Z',
            traits: { plan: 'pro' },
          },
        ],
        total: 5,
      },
      'table',
      opts,
    );
    expect(text).toContain('plan=pro');
    expect(text).toContain('1 of 5 users');
    // A page past the end of a store with users: it said "no users" where --json said total 18.
    const past = renderUserList({ users: [], total: 18 }, 'table', opts);
    expect(past).toContain('none of the 18 users on this page');
    expect(renderUserList({ users: [], total: 0 }, 'table', opts)).toContain('no users');
  });

  it('users list --format csv: traits and aliases as JSON, each value whole and typed', () => {
    const text = renderUserList(
      {
        users: [
          {
            id: 'u1',
            user_id: 'u_1',
            aliases: ['a, b', 'c'],
            created_at: '2025-01-01T00:00:00.000Z',
            traits: { b: 'a, c=d', seats: 5, code: '5' },
          },
        ],
        total: 1,
      },
      'csv',
      opts,
    );
    const [row] = parse(text, { columns: true }) as Array<Record<string, string>>;
    expect(JSON.parse(row?.aliases ?? '')).toEqual(['a, b', 'c']);
    expect(JSON.parse(row?.traits ?? '')).toEqual({ b: 'a, c=d', seats: 5, code: '5' });
  });

  it('users show --json says whether sessions were left out, as the table does', () => {
    const user = userDetailsSchema.parse({
      id: 'u1',
      user_id: 'u_1',
      aliases: ['u1'],
      created_at: '2025-01-01T00:00:00.000Z',
      traits: {},
      sessions: [],
    });
    expect(JSON.parse(renderUserShow(user, 'json', opts, true))).toMatchObject({ sessions_truncated: true });
    expect(JSON.parse(renderUserShow(user, 'json', opts, false))).toMatchObject({
      sessions_truncated: false,
    });
  });
});

describe('secrets', () => {
  it('a new key shows its secret in every format', () => {
    const key = {
      organization_id: 'o',
      apikey: 'SECRET-abc',
      key_id: 'key_1',
      created_at: '2025-01-01T00:00:00.000Z',
      label: 'ci',
      current: false,
    };
    for (const format of ['table', 'json', 'jsonl', 'csv'] as const) {
      expect(renderNewKey(key, format, opts)).toContain('SECRET-abc');
    }
  });

  it('config never has a key to show', () => {
    const report: ConfigReport = {
      mode: 'remote',
      endpoint: { value: 'https://x', from: 'flag --endpoint', source: { kind: 'flag', name: '--endpoint' } },
      project: { value: 'p', from: 'env CAS_PROJECT_ID', source: { kind: 'env', name: 'CAS_PROJECT_ID' } },
      api_key: {
        set: true,
        from: 'env CAS_API_KEY; never shown',
        source: { kind: 'env', name: 'CAS_API_KEY' },
      },
      data_dir: { value: '/d', from: 'default (x)', source: { kind: 'default', name: 'x' } },
      profile: {
        value: 'default',
        from: 'default (x)',
        source: { kind: 'default', name: 'x' },
        in_config_file: false,
      },
      config_file: '/c',
    };
    const table = renderConfigReport(report, 'table', opts);
    expect(table).toMatch(/│ api key\s+│ \(set\)\s+│ env CAS_API_KEY; never shown/);
    expect(parse(renderConfigReport(report, 'csv', opts))[1]).toEqual([
      'endpoint',
      'https://x',
      'flag --endpoint',
    ]);
  });
});
