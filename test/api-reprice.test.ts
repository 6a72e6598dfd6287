import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repriceResponseSchema } from '../src/shared/reprice.js';
import { call } from './helpers/api.js';
import { startTestService, type TestService } from './helpers/service.js';

let t: TestService;
beforeAll(async () => {
  t = await startTestService();
});
afterAll(() => t?.stop());

describe('POST /bc/v1/admin/reprice: unknown_models', () => {
  // Found by probing: gpt-4o, on a turn with its prompt tokens only (a partial cost), was listed as
  // a model without a price.
  it('lists the models the table has no price for, not priced ones on events lacking a token count', async () => {
    const turn = (session: string, model: string, tokens: Record<string, number>) => ({
      type: 'track',
      event: 'Conversation Turn',
      session_id: session,
      user_id: 'u',
      timestamp: '2025-03-03T10:00:00Z',
      properties: { user: 'hi', assistant: 'ok', model, ...tokens },
    });
    const queued = await call(t, 'POST', '/bc/v1/events/queue', [
      turn('s1', 'gpt-4o', { prompt_tokens: 1000 }),
      turn('s2', 'mystery-model-9', { prompt_tokens: 10, completion_tokens: 5 }),
    ]);
    expect(queued.status, JSON.stringify(queued.json)).toBe(200);
    const res = await call(t, 'POST', '/bc/v1/admin/reprice', {});
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    expect(repriceResponseSchema.parse(res.json).unknown_models).toEqual(['mystery-model-9']);
  });
});
