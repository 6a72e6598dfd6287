import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { jsonl } from '../../../test/helpers/presets.js';
import { tempDir } from '../../../test/helpers/temp.js';
import { buildMappingSpec } from '../mapping-spec.js';
import { planAccess } from '../record-access.js';
import type { InputFile } from '../sources.js';
import { type MappedItem, readMapped } from './inputs.js';

const dir = tempDir('cas-preset-inputs-');
afterAll(() => dir.cleanup());

function plan(set: string[] = []) {
  const spec = buildMappingSpec({ set, tz: 'UTC' });
  if (!spec.ok) throw new Error(spec.error);
  return planAccess(spec.spec);
}

async function all(files: InputFile[], stdin?: NodeJS.ReadableStream): Promise<MappedItem[]> {
  const out: MappedItem[] = [];
  for await (const batch of readMapped(files, { plan: plan(['user_id=u-{file}']), stdin }))
    out.push(...batch.items);
  return out;
}

const completion = (id: string, text: string) => ({
  object: 'chat.completion',
  id,
  created: 1_741_168_800,
  model: 'gpt-4o',
  choices: [{ message: { role: 'assistant', content: text } }],
});

describe('readMapped', () => {
  it('reads flat and preset files in one run with ordinals across them; --set fills {file}', async () => {
    const csv = join(dir.path, 'turns.csv');
    writeFileSync(csv, 'kind,user_id,user,assistant\nturn,a,q1,r1\nturn,a,,r2\n');
    const log = join(dir.path, 'log.jsonl');
    writeFileSync(log, jsonl([completion('c1', 'one'), completion('c2', 'two')]));
    const items = await all([
      { path: csv, display: 'turns.csv', format: 'csv' },
      { path: log, display: 'log.jsonl', format: 'jsonl', preset: 'openai-chat' },
    ]);
    expect(
      items.map((i) =>
        i.ok
          ? [i.mapped.ordinal, i.mapped.source.line, i.mapped.event.user_id]
          : [i.rejection.seq, i.rejection.source.line],
      ),
    ).toEqual([
      [0, 2, 'a'],
      [1, 3],
      [2, 1, 'u-log.jsonl'],
      [3, 2, 'u-log.jsonl'],
    ]);
  });

  it('maps a preset from stdin, and names a file it cannot read', async () => {
    const stdin = Readable.from([Buffer.from(jsonl([completion('c1', 'hi')]))]);
    const gz = join(dir.path, 'broken.jsonl.gz');
    writeFileSync(gz, Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0x01]));
    const items = await all(
      [
        { path: '-', display: '<stdin>', format: 'jsonl', preset: 'openai-chat' },
        { path: gz, display: 'broken.jsonl.gz', format: 'jsonl', preset: 'openai-chat' },
      ],
      stdin,
    );
    expect(items[0]?.ok && items[0].mapped.event.properties).toMatchObject({ assistant: 'hi' });
    expect(items[1]?.ok === false && items[1].rejection).toMatchObject({
      source: { file: 'broken.jsonl.gz', line: 1 },
      reason: expect.stringMatching(/^cannot read the rest of the file/),
    });
    expect(items).toHaveLength(2);
  });
});
