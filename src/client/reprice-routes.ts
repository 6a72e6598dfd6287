import {
  REPRICE_PATH,
  type RepriceBody,
  type RepriceResult,
  repriceResponseSchema,
} from '../shared/reprice.js';
import type { Client } from './http-client.js';

/** `POST /bc/v1/admin/reprice` (our service only). Idempotent, so retried like any request. */
export function reprice(
  client: Client,
  body: RepriceBody,
  options?: { signal?: AbortSignal },
): Promise<RepriceResult> {
  return client.request({
    method: 'POST',
    path: REPRICE_PATH,
    body,
    schema: repriceResponseSchema,
    ...(options?.signal ? { signal: options.signal } : {}),
  });
}
