import { describe, expect, it } from 'vitest';
import { HttpError } from './errors.js';

const target = { method: 'POST', path: '/bc/v1/events/queue' };

describe('HttpError', () => {
  it('adds when to try again from Retry-After, once: not when the message says it already', () => {
    const bare = new HttpError({ status: 503, message: 'busy', retryAfterMs: 1500 }, target);
    expect(bare.message).toBe('busy (try again in 2 s)');
    expect(bare.retryAfterSeconds).toBe(2);
    // Our service says it itself; the message read "…; retry in 1 s (try again in 1 s)" (found by probing).
    const said = new HttpError(
      {
        status: 429,
        message: 'rate limit of 200 ingest requests/s exceeded; retry in 1 s',
        retryAfterMs: 1000,
      },
      target,
    );
    expect(said.message).toBe('rate limit of 200 ingest requests/s exceeded; retry in 1 s');
    expect(new HttpError({ status: 400, message: 'bad' }, target).message).toBe('bad');
  });

  it('says when to try again only of what the client tries again (408, 429, 5xx)', () => {
    expect(new HttpError({ status: 400, message: 'seg says 400', retryAfterMs: 1000 }, target).message).toBe(
      'seg says 400',
    );
    expect(new HttpError({ status: 408, message: 'slow', retryAfterMs: 1000 }, target).message).toBe(
      'slow (try again in 1 s)',
    );
  });
});
