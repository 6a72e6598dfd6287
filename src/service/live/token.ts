import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { LIVE_TOKEN_TTL_MS } from '../../shared/live-events.js';
import type { Scope } from '../identity/identity.js';

/** What a socket may see: one project, or one session of it. */
export interface LiveScope extends Scope {
  sessionId?: string;
  /**
   * The public name (Tenants.keyId) of the API key the token is issued to: revoking that key voids
   * the token and closes its sockets.
   */
  keyId?: string;
  /** What a verified token says of that key: `LiveTokens.keyTag` of its id (see there). */
  keyTag?: string;
}

const payloadSchema = z.object({
  v: z.literal(1),
  o: z.string(),
  p: z.string(),
  s: z.string().optional(),
  k: z.string().optional(),
  /** Expiry, epoch ms. */
  e: z.number().int(),
});

const PREFIX = 'lv1';

/**
 * `authorization_key`s: the scope and an expiry, HMAC-signed under a secret drawn when the service
 * starts, so nothing is stored per key and a restart voids every key (clients ask for a fresh one
 * when they reconnect). A key is not secret from its holder (its payload is readable base64url), only
 * unforgeable; it is short-lived because it travels in browser URLs (`?authorization_key=`).
 */
export class LiveTokens {
  private readonly secret = randomBytes(32);

  constructor(
    private readonly ttlMs = LIVE_TOKEN_TTL_MS,
    private readonly now: () => number = Date.now,
  ) {}

  issue(scope: LiveScope): string {
    const payload = {
      v: 1,
      o: scope.orgId,
      p: scope.projectId,
      ...(scope.sessionId === undefined ? {} : { s: scope.sessionId }),
      ...(scope.keyId === undefined ? {} : { k: this.keyTag(scope.keyId) }),
      e: this.now() + this.ttlMs,
    };
    const body = Buffer.from(JSON.stringify(payload)).toString('base64url');
    return `${PREFIX}.${body}.${this.sign(body)}`;
  }

  /** The key's scope, or undefined for anything not issued by this service or expired. */
  verify(token: string): LiveScope | undefined {
    const parts = token.split('.');
    if (parts.length !== 3 || parts[0] !== PREFIX) return undefined;
    const [, body = '', signature = ''] = parts;
    const expected = Buffer.from(this.sign(body), 'base64url');
    const given = Buffer.from(signature, 'base64url');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
    let json: unknown;
    try {
      json = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
    } catch {
      return undefined;
    }
    const parsed = payloadSchema.safeParse(json);
    if (!parsed.success || parsed.data.e <= this.now()) return undefined;
    const { o, p, s, k } = parsed.data;
    return {
      orgId: o,
      projectId: p,
      ...(s === undefined ? {} : { sessionId: s }),
      ...(k === undefined ? {} : { keyTag: k }),
    };
  }

  /**
   * The key's mark in a token: an HMAC of its id under this service's secret. The id itself is 16 hex
   * digits of the key's unsalted SHA-256, and a token travels in browser URLs: a short or guessable
   * API key was found again offline from it (found by probing).
   */
  keyTag(keyId: string): string {
    return createHmac('sha256', this.secret)
      .update(`cas live key\n${keyId}`)
      .digest('base64url')
      .slice(0, 22);
  }

  private sign(body: string): string {
    return createHmac('sha256', this.secret).update(`cas live events\n${body}`).digest('base64url');
  }
}
