import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FIXTURES, listInDataDir } from './helpers/import.js';
import { importRun, summaryOf } from './helpers/import-runs.js';
import { tempDir } from './helpers/temp.js';

/**
 * A Responses API log cut between runs (a day's log, then the next): the later run does not know the
 * chain's first response, so it puts the continuation in a session of its own, and a run over both
 * files afterwards puts it in the chain's session. Each call's events keep their ids however its
 * chain is rooted, so nothing is stored twice: the store holds the turns, function calls and cost
 * one run over all the lines stores (the continuation's session is the documented exception).
 */
const dir = tempDir('cas-import-responses-runs-');
afterAll(() => dir.cleanup());

const call = (id: string, at: number, previous: string | undefined, input: string, text: string) => ({
  request: {
    model: 'gpt-4.1',
    user: 'u-eve',
    input,
    ...(previous ? { previous_response_id: previous } : {}),
  },
  response: {
    id,
    object: 'response',
    created_at: at,
    model: 'gpt-4.1-2025-04-14',
    user: 'u-eve',
    output: [
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text, annotations: [] }] },
    ],
    usage: { input_tokens: 100, output_tokens: 10 },
    ...(previous ? { previous_response_id: previous } : {}),
  },
});
const R = 1_741_255_200; // 2025-03-06T10:00:00Z

function write(name: string, lines: readonly unknown[]): string {
  const path = join(dir.path, name);
  writeFileSync(path, lines.map((l) => `${typeof l === 'string' ? l : JSON.stringify(l)}\n`).join(''));
  return path;
}

const day1 = write('day1.jsonl', [
  call('resp_a1', R, undefined, 'hello', 'hi'),
  call('resp_a2', R + 60, 'resp_a1', 'how are you', 'fine'),
]);
const day2 = write('day2.jsonl', [call('resp_a3', R + 120, 'resp_a2', 'bye', 'bye!')]);
// The fixture's chain: a tool-only call, the reply with its result, a follow-up.
const fixture = readFileSync(join(FIXTURES, 'exports/openai-responses.jsonl'), 'utf8').trim().split('\n');
const fx1 = write('fx-1.jsonl', fixture.slice(0, 1));
const fx2 = write('fx-2.jsonl', fixture.slice(1));

async function importRuns(name: string, runs: string[][]): Promise<Array<Record<string, unknown>>> {
  const data = join(dir.path, name);
  for (const files of runs) {
    const run = await importRun(files, data, ['--preset', 'openai-responses']);
    expect(run.code, run.stderr).toBe(0);
    expect(summaryOf(run).rejected).toBe(0);
  }
  return listInDataDir(data);
}

const named = (rows: ReadonlyArray<Record<string, unknown>>, event: string) =>
  rows.filter((r) => r.event === event);
const properties = (r: Record<string, unknown>) => (r.properties ?? {}) as Record<string, unknown>;
const cost = (rows: ReadonlyArray<Record<string, unknown>>) =>
  Math.round(
    [...named(rows, 'Conversation Turn'), ...named(rows, 'Conversation Usage')]
      .map((r) => Number(properties(r).cost ?? 0))
      .reduce((a, b) => a + b, 0) * 1e12,
  ) / 1e12;
const callsOf = (rows: ReadonlyArray<Record<string, unknown>>) =>
  ['Conversation Turn', 'Conversation Function', 'Conversation Usage'].map((e) => named(rows, e).length);

describe('cas import --preset openai-responses of a chain split across runs', () => {
  it('day 1, then day 2, then both: the turns one run stores, each once', async () => {
    const one = await importRuns('days-one', [[day1, day2]]);
    const split = await importRuns('days-split', [[day1], [day2], [day1, day2]]);
    expect(named(one, 'Conversation Turn')).toHaveLength(3);
    expect(named(split, 'Conversation Turn')).toHaveLength(3);
    expect(cost(split)).toBe(cost(one));
    const turnIds = (rows: ReadonlyArray<Record<string, unknown>>) =>
      named(rows, 'Conversation Turn')
        .map((r) => r.event_id)
        .sort();
    expect(turnIds(split)).toEqual(turnIds(one));
    // The exception: day 2 did not know resp_a1, so resp_a3 is in the session of its first known ancestor.
    const sessionOf = (rows: ReadonlyArray<Record<string, unknown>>) =>
      Object.fromEntries(
        named(rows, 'Conversation Turn').map((r) => [properties(r).assistant_id, r.session_id]),
      );
    expect(sessionOf(one)).toEqual({ resp_a1: 'resp_a1', resp_a2: 'resp_a1', resp_a3: 'resp_a1' });
    expect(sessionOf(split)).toEqual({ resp_a1: 'resp_a1', resp_a2: 'resp_a1', resp_a3: 'resp_a2' });
  });

  it("the fixture's tool call in one run and its reply in the next, then all: each call stored once", async () => {
    const one = await importRuns('fx-one', [[fx1, fx2]]);
    const split = await importRuns('fx-split', [[fx1], [fx2], [fx1, fx2]]);
    const after = await importRuns('fx-after', [[fx1, fx2], [fx2], [fx1]]);
    expect(callsOf(one)).toEqual([2, 1, 1]);
    expect(callsOf(split)).toEqual([2, 1, 1]);
    expect(callsOf(after)).toEqual([2, 1, 1]);
    expect(cost(split)).toBe(cost(one));
    expect(cost(after)).toBe(cost(one));
  });
});
