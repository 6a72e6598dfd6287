import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '../../../test/helpers/temp.js';
import { detectPreset, sniffPreset } from './detect.js';

const dir = tempDir('cas-detect-');
afterAll(() => dir.cleanup());

describe('detectPreset', () => {
  it.each([
    [{ id: 'c', mapping: {}, current_node: 'n' }, 'chatgpt'],
    // Without current_node (the preset refuses that one conversation, not the whole file).
    [{ id: 'c', mapping: {} }, 'chatgpt'],
    [{ uuid: 'c', chat_messages: [] }, 'claude'],
    [{ resourceSpans: [] }, 'otlp'],
    [{ request: {}, response: { object: 'chat.completion', choices: [] } }, 'openai-chat'],
    [{ object: 'chat.completion', choices: [] }, 'openai-chat'],
    [{ custom_id: 'r', response: { status_code: 200, body: {} } }, 'openai-chat'],
    [{ custom_id: 'r', method: 'POST', body: { messages: [] } }, 'openai-chat'],
    [{ request: {}, response: { object: 'response', output: [] } }, 'openai-responses'],
    [{ object: 'response', output: [] }, 'openai-responses'],
    [{ request: {}, response: { type: 'message', role: 'assistant', content: [] } }, 'anthropic'],
    [{ custom_id: 'r', result: { type: 'succeeded', message: {} } }, 'anthropic'],
  ])('%j is %s', (value, preset) => {
    expect(detectPreset(value)).toBe(preset);
  });

  it.each([
    [{ kind: 'turn', user: 'q', assistant: 'a', mapping: {}, current_node: 'n' }],
    [{ type: 'track', event: 'Purchase', user_id: 'u' }],
    [{ request: 'x', response: 'y' }],
    [{ custom_id: 'r' }],
    [{ messages: [{ role: 'user', content: 'q' }] }],
    [[1, 2]],
    ['text'],
  ])('%j is left to the flat mapping', (value) => {
    expect(detectPreset(value)).toBeUndefined();
  });
});

describe('sniffPreset', () => {
  it('reads only the first record of a file, gzipped or not, array or lines', async () => {
    const conversations = JSON.stringify([{ uuid: 'c', chat_messages: [] }, { broken: true }]);
    writeFileSync(join(dir.path, 'claude.json.gz'), gzipSync(conversations));
    expect(await sniffPreset(join(dir.path, 'claude.json.gz'))).toBe('claude');
    writeFileSync(join(dir.path, 'turns.jsonl'), '{"kind":"turn","user":"q","assistant":"a"}\n');
    expect(await sniffPreset(join(dir.path, 'turns.jsonl'))).toBeUndefined();
    writeFileSync(join(dir.path, 'bad.jsonl'), '{"resourceSpans": \n');
    expect(await sniffPreset(join(dir.path, 'bad.jsonl'))).toBeUndefined();
    expect(await sniffPreset(join(dir.path, 'missing.json'))).toBeUndefined();
  });
});
