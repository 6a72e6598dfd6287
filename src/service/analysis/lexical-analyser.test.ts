import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rulesOf } from '../intents/store.js';
import { type Database, openDatabase } from '../store/database.js';
import type { AnalysisInput } from './analyser.js';
import {
  checkPatterns,
  type IntentRule,
  InvalidIntentsError,
  parseIntentRules,
  ruleRegex,
} from './intent-rules.js';
import { LexicalAnalyser, scoreSentiment } from './lexical-analyser.js';

let db: Database;
beforeAll(async () => {
  db = await openDatabase(':memory:');
});
afterAll(() => db.close());

const RULES: IntentRule[] = [
  { name: 'track_order', patterns: ['where.*(order|package)', 'tracking'] },
  { name: 'refund', patterns: ['money back', '\\brefund'] },
  { name: 'greeting', patterns: ['^(hi|hello)\\b'] },
];

const input = (
  utterances: string[],
  labels: Array<[string, Record<string, string>]> = [],
): AnalysisInput => ({
  conversationId: 'c',
  utterances,
  labels: new Map(labels),
});

describe('LexicalAnalyser', () => {
  it('finds rule intents with RE2 in DuckDB, case-insensitively, ordered by first matching utterance', async () => {
    const [a, b, c] = await new LexicalAnalyser().analyse(db.read, RULES, [
      input(['Hello!', 'I want a REFUND', 'and where is my order']),
      input(['nothing to see']),
      input(['say hi, it is nonrefundable']),
    ]);
    expect(a!.intents.map((i) => i.name)).toEqual(['greeting', 'refund', 'track_order']);
    expect(a!.intents[0]!.attributes).toEqual({ source: 'rule' });
    expect(b!.intents).toEqual([]);
    // `^` anchors at the start and `\b` needs a word boundary: "nonrefundable" is no refund.
    expect(c!.intents).toEqual([]);
  });

  it('uses turn labels instead of rules when a conversation has them', async () => {
    const [result] = await new LexicalAnalyser().analyse(db.read, RULES, [
      input(['hello, where is my order'], [['order_status', { category: 'shipping' }]]),
    ]);
    expect(result!.intents).toEqual([
      { name: 'order_status', attributes: { category: 'shipping', source: 'label' } },
    ]);
  });

  it('labels sentiment from the AFINN lexicon over the user side', async () => {
    const [happy, sad, flat] = await new LexicalAnalyser().analyse(
      db.read,
      [],
      [input(['thanks, this is great']), input(['this is terrible, I hate it']), input([])],
    );
    expect(happy!.sentiment).toBe('positive');
    expect(sad!.sentiment).toBe('negative');
    expect(flat).toMatchObject({ sentiment: 'neutral', sentimentScore: 0 });
  });
});

describe('sentiment', () => {
  it('keeps a conversation neutral when its words carry no valence, and handles negation', () => {
    expect(scoreSentiment(['what is the status of ticket 42']).label).toBe('neutral');
    expect(scoreSentiment(['this is not good']).label).toBe('negative');
  });
});

describe('intent rules files', () => {
  it('names the file and JSON path of a bad rule', () => {
    expect(() => parseIntentRules([{ name: 'a', patterns: [] }], 'i.json')).toThrow(
      'i.json: [0].patterns: needs at least one pattern',
    );
    expect(() => parseIntentRules([RULES[0], RULES[0]], 'i.json')).toThrow(
      'i.json: [1].name: duplicate name',
    );
    expect(() => parseIntentRules({}, 'i.json')).toThrow(InvalidIntentsError);
    expect(parseIntentRules([{ name: 'x', description: 'd', patterns: ['a'] }], 'f')).toHaveLength(1);
  });

  it('compiles patterns in DuckDB and joins a rule into one alternation', async () => {
    await expect(checkPatterns(db.read, RULES, 'ok.json')).resolves.toBeUndefined();
    await expect(
      checkPatterns(db.read, [{ name: 'x', patterns: ['a', '[z-a]'] }], 'bad.json'),
    ).rejects.toThrow(/^bad\.json: \[0\]\.patterns\[1\]: not a valid RE2 regex/);
    expect(ruleRegex(RULES[0]!)).toBe('(?:where.*(order|package))|(?:tracking)');
  });

  it("matches an intent without patterns by its name's whole words, in any script and with punctuation", async () => {
    const names = ['café', 'C++', 'track_order', 'Ärger'];
    const rules = rulesOf(
      names.map((name, i) => ({
        user_defined_intent_id: `udi_${i}`,
        intent: { name, description: '' },
        attributes: [],
        archived: false,
        patterns: [],
      })),
    );
    const said = [
      ['un café, svp', 'CAFÉ noir', 'cafés are nice', 'nescafé'],
      ['I write C++ daily', 'C++', 'C# is not it', 'C'],
      ['track order', 'where to TRACK-ORDER', 'track my order', 'backtrack orders'],
      ['so viel Ärger!', 'ärgerlich'],
    ];
    const found = await new LexicalAnalyser().analyse(
      db.read,
      rules,
      said.flat().map((u) => input([u])),
    );
    const matched = said.flat().filter((_, i) => (found[i]?.intents.length ?? 0) > 0);
    expect(matched).toEqual([
      'un café, svp',
      'CAFÉ noir',
      'I write C++ daily',
      'C++',
      'track order',
      'where to TRACK-ORDER',
      'so viel Ärger!',
    ]);
  });
});
