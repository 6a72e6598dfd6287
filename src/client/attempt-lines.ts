import type { AttemptInfo } from './http-client.js';
import type { RetryInfo } from './retry.js';

/**
 * What `-v` (the CLI) and `debug: true` (the client library) print of each request and each retry:
 * one line each, e.g. `cas: GET /bc/v1/summary/event-stats → 200 in 12 ms`.
 */
export function attemptLine(info: AttemptInfo): string {
  const status = info.status === -1 ? 'no answer' : String(info.status);
  const attempt = info.attempt > 1 ? ` (attempt ${info.attempt})` : '';
  const failure = info.failure === undefined ? '' : `: ${oneLineText(info.failure)}`;
  return `cas: ${info.method} ${info.path} → ${status} in ${info.ms} ms${attempt}${failure}`;
}

export function retryLine(info: RetryInfo): string {
  const seconds = (info.delayMs / 1000).toFixed(1);
  return `cas: retrying ${info.method} ${info.path} in ${seconds} s (attempt ${info.attempt} failed: ${oneLineText(info.reason)})`;
}

const oneLineText = (text: string): string => text.replace(/\s+/g, ' ').trim();
