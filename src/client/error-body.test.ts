import { describe, expect, it } from 'vitest';
import { oneLine, parseErrorBody, parseRetryAfter } from './error-body.js';
import { HttpError, NetworkError, TimeoutError } from './errors.js';
import { backoffDelay, DEFAULT_BACKOFF, isRetryable, type RetryPolicy } from './retry.js';

const target = { method: 'POST', path: '/bc/v1/events/queue' };

describe('parseErrorBody', () => {
  it('reads our own body with code and issues', () => {
    const body = JSON.stringify({
      status: 409,
      code: 'session_ended',
      message: 'session s1 has ended',
      issues: [{ path: '[2].session_id', message: 'session s1 has ended' }],
    });
    expect(parseErrorBody(409, body)).toEqual({
      message: 'session s1 has ended',
      code: 'session_ended',
      issues: [{ path: '[2].session_id', message: 'session s1 has ended' }],
    });
  });

  it('reads the shapes other servers send', () => {
    expect(parseErrorBody(401, '{"detail":"Invalid API key"}')).toEqual({ message: 'Invalid API key' });
    expect(parseErrorBody(400, '{"message":"bad range"}')).toEqual({ message: 'bad range' });
    expect(parseErrorBody(500, '{"error":{"message":"db down"}}')).toEqual({ message: 'db down' });
    expect(parseErrorBody(403, '"forbidden project"')).toEqual({ message: 'forbidden project' });
  });

  it('turns FastAPI validation details into issues', () => {
    const body = JSON.stringify({
      detail: [{ loc: ['query', 'ranges'], msg: 'field required', type: 'missing' }],
    });
    expect(parseErrorBody(422, body)).toEqual({
      message: 'query.ranges: field required',
      issues: [{ path: 'query.ranges', message: 'field required' }],
    });
  });

  it('keeps an unknown JSON shape as one line rather than losing it', () => {
    expect(parseErrorBody(400, '{"oops": [1, 2]}')).toEqual({ message: '{"oops": [1, 2]}' });
  });

  it('takes the title of an HTML error page', () => {
    const html =
      '<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head><body><h1>x</h1></body></html>';
    expect(parseErrorBody(502, html)).toEqual({ message: '502 Bad Gateway' });
  });

  it('falls back to the status text for an empty body', () => {
    expect(parseErrorBody(503, '  ')).toEqual({ message: 'HTTP 503 Service Unavailable' });
    expect(parseErrorBody(599, '')).toEqual({ message: 'HTTP 599' });
  });

  it('flattens and truncates long text', () => {
    const message = parseErrorBody(500, `Traceback:\n${'  frame\n'.repeat(500)}`).message;
    expect(message.length).toBe(300);
    expect(message.endsWith('…')).toBe(true);
    expect(oneLine('a\n\tb   c')).toBe('a b c');
  });
});

describe('parseRetryAfter', () => {
  const now = Date.parse('2025-06-01T12:00:00Z');

  it('reads delta-seconds and HTTP dates', () => {
    expect(parseRetryAfter('2', now)).toBe(2000);
    expect(parseRetryAfter(['0.5'], now)).toBe(500);
    expect(parseRetryAfter('Sun, 01 Jun 2025 12:00:30 GMT', now)).toBe(30_000);
    expect(parseRetryAfter('Sun, 01 Jun 2025 11:00:00 GMT', now)).toBe(0);
  });

  it('ignores what it cannot read', () => {
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter('-5', now)).toBeUndefined();
  });
});

describe('retry policy', () => {
  const policy = (random: number): RetryPolicy => ({
    retries: 5,
    retryTimeMs: 60_000,
    baseDelayMs: 250,
    maxDelayMs: 8_000,
    retryAfterJitterMs: 100,
    random: () => random,
  });

  it('doubles the ceiling per attempt up to the cap, waiting at least half of it', () => {
    expect([1, 2, 3, 4, 5, 6, 7].map((n) => backoffDelay(n, policy(0.999999)))).toEqual([
      249, 499, 999, 1999, 3999, 7999, 7999,
    ]);
    expect([1, 2, 3, 4, 5, 6, 7].map((n) => backoffDelay(n, policy(0)))).toEqual([
      125, 250, 500, 1000, 2000, 4000, 4000,
    ]);
  });

  it('gives the default five attempts at least 7.5 s, so they outlast a service restart', () => {
    const defaults = { ...policy(0), ...DEFAULT_BACKOFF };
    const waits = [1, 2, 3, 4].map((n) => backoffDelay(n, defaults));
    expect(waits.reduce((a, b) => a + b, 0)).toBe(7_500);
  });

  it('retries only transient failures, and fewer when a repeat could do harm', () => {
    const http = (status: number) => new HttpError({ status, message: 'x' }, target);
    const retryable = [408, 429, 500, 502, 503, 504, 400, 401, 404, 409, 413].filter((s) =>
      isRetryable(http(s), true),
    );
    expect(retryable).toEqual([408, 429, 500, 502, 503, 504]);
    expect(isRetryable(http(503), false)).toBe(false);
    expect(isRetryable(http(429), false)).toBe(true);
    const reset = new NetworkError('reset', 'ECONNRESET', target, undefined);
    const refused = new NetworkError('refused', 'ECONNREFUSED', target, undefined);
    expect([isRetryable(reset, true), isRetryable(reset, false), isRetryable(refused, false)]).toEqual([
      true,
      false,
      true,
    ]);
    expect(isRetryable(new TimeoutError(10, target), false)).toBe(false);
  });
});
