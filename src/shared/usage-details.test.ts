import { describe, expect, it } from 'vitest';
import { parseQueueBody } from './events.js';

const usage = (properties: Record<string, unknown>) => ({
  type: 'track',
  event: 'Conversation Usage',
  session_id: 's1',
  properties,
});
const turn = (properties: Record<string, unknown>) => ({
  type: 'track',
  event: 'Conversation Turn',
  session_id: 's1',
  properties: { user: 'hi', assistant: 'hello', ...properties },
});

describe('usage token details (wire extension)', () => {
  it('accepts cached, cache-written and reasoning tokens and a batch flag on usage and turns', () => {
    const details = {
      model: 'gpt-4o',
      prompt_tokens: 1000,
      completion_tokens: 300,
      cached_prompt_tokens: 600,
      cache_creation_tokens: 100,
      reasoning_tokens: 200,
      batch: true,
    };
    const r = parseQueueBody([usage(details), turn(details)]);
    expect(r.ok).toBe(true);
    if (r.ok) for (const e of r.events) expect('properties' in e && e.properties).toMatchObject(details);
  });

  it('takes the hour-long cache writes as a part of the cache writes, and refuses more', () => {
    const base = {
      model: 'claude-sonnet-4',
      prompt_tokens: 1000,
      completion_tokens: 10,
      cache_creation_tokens: 900,
    };
    expect(parseQueueBody([usage({ ...base, cache_creation_1h_tokens: 900 })]).ok).toBe(true);
    const r = parseQueueBody([
      usage({ ...base, cache_creation_1h_tokens: 901 }),
      usage({ cost: 1, cache_creation_1h_tokens: 1 }),
    ]);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.issues).toEqual([
      {
        path: '[0].properties.cache_creation_1h_tokens',
        message: 'exceeds cache_creation_tokens (900): those written for an hour are a part of them',
      },
      {
        path: '[1].properties.cache_creation_1h_tokens',
        message: 'exceeds cache_creation_tokens (0): those written for an hour are a part of them',
      },
    ]);
  });

  it('still accepts the hosted shapes without them', () => {
    const r = parseQueueBody([
      usage({ model: 'gpt-4o', prompt_tokens: 1, completion_tokens: 2 }),
      usage({ cost: 1 }),
    ]);
    expect(r.ok).toBe(true);
  });

  it('refuses subsets larger than their totals, naming the field', () => {
    const r = parseQueueBody([
      usage({
        model: 'm',
        prompt_tokens: 100,
        completion_tokens: 10,
        cached_prompt_tokens: 80,
        cache_creation_tokens: 30,
      }),
      turn({ completion_tokens: 10, reasoning_tokens: 11 }),
      usage({ model: 'm', prompt_tokens: 1, completion_tokens: 1, reasoning_tokens: -1, batch: 'yes' }),
    ]);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.issues.map((i) => i.path)).toEqual([
      '[0].properties.cached_prompt_tokens',
      '[1].properties.reasoning_tokens',
      '[2].properties.reasoning_tokens',
      '[2].properties.batch',
    ]);
    expect(r.issues[0]?.message).toContain('prompt_tokens counts all input');
  });
});
