import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { detectPresets, type ImportFlags, importSettings } from './import-options.js';

const EXPORTS = fileURLToPath(new URL('../../fixtures/exports/', import.meta.url));
const FIXTURES = fileURLToPath(new URL('../../fixtures/', import.meta.url));
const chatgpt = `${EXPORTS}chatgpt-conversations.json`;

const settle = (paths: string[], flags: ImportFlags) => detectPresets(importSettings(paths, flags), flags);
const presets = async (paths: string[], flags: ImportFlags = {}) =>
  (await settle(paths, flags)).files.map((f) => f.preset);

describe('cas import numbers', () => {
  // Number('') is 0: `--max-errors ''` stopped at the first rejection (found by probing).
  it.each(['maxErrors', 'batchSize', 'concurrency'])('an empty --%s is refused, not read as 0', (flag) => {
    expect(() => importSettings([chatgpt], { [flag]: '' })).toThrow(
      /must be a whole number from \d+ to \d+, got ""/,
    );
  });

  // Number() read them: --batch-size 1e1 sent batches of 10 (found by probing).
  it.each(['1e3', '0x10', '+5', '1.0', '-0'])(
    '--batch-size and --max-errors %s are refused: decimal digits only',
    (text) => {
      for (const flag of ['maxErrors', 'batchSize']) {
        expect(() => importSettings([chatgpt], { [flag]: text })).toThrow(`got "${text}"`);
      }
      expect(importSettings([chatgpt], { maxErrors: ' 7 ', batchSize: '10' })).toMatchObject({
        maxErrors: 7,
        batchSize: 10,
      });
    },
  );
});

describe('cas import --resume --restart', () => {
  // --restart won without a word (found by probing).
  it('is refused as a contradiction; either alone is taken', () => {
    expect(() => importSettings([chatgpt], { resume: true, restart: true })).toThrow(
      '--resume and --restart contradict each other: give one (--resume is the default)',
    );
    expect(importSettings([chatgpt], { restart: true }).restart).toBe(true);
  });
});

describe('cas import --session-gap', () => {
  // These passed, and then the service refused every record, naming session_gap_ms (found by probing).
  it.each(['0.4ms', '400d', '367d'])(
    '%s, which the service would refuse, is refused naming the flag',
    (gap) => {
      expect(() => importSettings([chatgpt], { sessionGap: gap })).toThrow(
        `--session-gap must be from 1ms to 366d, got "${gap}"`,
      );
    },
  );

  it('is whole milliseconds, as the wire carries it', () => {
    const gap = (sessionGap: string) => importSettings([chatgpt], { sessionGap }).gapMs;
    expect([gap('1.0005s'), gap('0.5ms'), gap('1.5h'), gap('366d')]).toEqual([
      1001,
      1,
      5_400_000,
      366 * 86_400_000,
    ]);
  });
});

describe('cas import --preset', () => {
  it.each([
    [
      { preset: 'gemini' },
      '--preset must be one of chatgpt, claude, openai-chat, openai-responses, anthropic, otlp, got "gemini"',
    ],
    [{ preset: 'chatgpt', map: ['user=q'] }, '--preset chatgpt maps the records itself; drop --map'],
    [{ preset: 'claude', kind: 'turn' }, '--preset claude maps the records itself; drop --kind'],
    [{ preset: 'otlp', format: 'csv' }, '--preset otlp reads JSON, not --format csv'],
    [
      { preset: 'chatgpt', set: ['prop.plan=pro'] },
      '--set "prop.plan=pro": with --preset only user_id and device_id can be set',
    ],
  ])('%j is refused naming the flag', (flags, message) => {
    expect(() => importSettings([chatgpt], flags)).toThrow(message);
  });

  it('reads every file with the preset given, whatever its name', async () => {
    expect(await presets([chatgpt, `${EXPORTS}anthropic.jsonl`], { preset: 'chatgpt' })).toEqual([
      'chatgpt',
      'chatgpt',
    ]);
  });

  it('detects each JSON file without a flat-mapping flag, and leaves the others to the flat mapping', async () => {
    const files = [chatgpt, `${EXPORTS}otlp-traces.json`, `${FIXTURES}events.jsonl`, `${FIXTURES}turns.csv`];
    expect(await presets(files, { set: ['user_id=me'] })).toEqual(['chatgpt', 'otlp', undefined, undefined]);
    expect(await presets([chatgpt], { kind: 'turn' })).toEqual([undefined]);
    expect(await presets([chatgpt], { set: ['prop.plan=pro'] })).toEqual([undefined]);
  });
});

describe('cas import --reject-file', () => {
  it('refuses an input file as the reject file, by any path to it (opening it for writing emptied it)', () => {
    const turns = `${FIXTURES}turns.csv`;
    expect(() => importSettings([turns], { rejectFile: turns })).toThrow(
      `--reject-file ${turns} is the input file ${turns}: give another path`,
    );
    const around = `${FIXTURES}../fixtures/./turns.csv`;
    expect(() => importSettings([turns], { rejectFile: around })).toThrow(/is the input file/);
    expect(importSettings([turns], { rejectFile: `${FIXTURES}rejects-elsewhere.jsonl` }).rejectFile).toBe(
      `${FIXTURES}rejects-elsewhere.jsonl`,
    );
  });
});
