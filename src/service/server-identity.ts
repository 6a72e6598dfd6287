import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { realpathSync } from 'node:fs';
import { resolve } from 'node:path';
import { isLoopbackUrl } from '../shared/loopback-url.js';

/**
 * How a CLI process tells the `cas serve` that wrote `server.json` from whatever else now listens on
 * its port (the server crashed, the port was reused): the file holds a per-run secret that only its
 * owner can read (0600), and `/healthz?challenge=<nonce>` answers with an HMAC of a fresh nonce under
 * that secret. The secret never travels, and a recorded answer is useless for the next nonce.
 */

const HEX_64 = /^[0-9a-f]{64}$/;

/** 32 random bytes as hex: both the per-run secret and each challenge. */
export function randomToken(): string {
  return randomBytes(32).toString('hex');
}

export const isToken = (value: unknown): value is string => typeof value === 'string' && HEX_64.test(value);

/**
 * The proof names the data directory the server holds (its real path): a `server.json` copied with a
 * backup of the directory, or linked into another, proved its server to commands of that other
 * directory, whose data and key then went to the wrong store (found by probing).
 */
export function serverProof(secret: string, challenge: string, dataDir: string): string {
  return createHmac('sha256', secret).update(`cas serve /healthz\n${challenge}\n${dataDir}`).digest('hex');
}

/** Whether `proof` answers `challenge` under `secret` for `dataDir`; compared in constant time. */
export function proofMatches(secret: string, challenge: string, dataDir: string, proof: unknown): boolean {
  if (!isToken(proof)) return false;
  const expected = serverProof(secret, challenge, dataDir);
  return timingSafeEqual(Buffer.from(expected, 'hex'), Buffer.from(proof, 'hex'));
}

/** A data directory as both sides of the proof name it: its real path (links resolved). */
export function dataDirIdentity(dataDir: string): string {
  try {
    return realpathSync(dataDir);
  } catch {
    return resolve(dataDir);
  }
}

/**
 * The loopback URL at which a server listening on `host:port` is reached from this machine: itself
 * for a loopback host, 127.0.0.1 / ::1 for a wildcard; undefined for a specific other interface.
 */
export function loopbackUrlFor(host: string, port: number): string | undefined {
  if (host === '0.0.0.0' || host === '') return `http://127.0.0.1:${port}`;
  if (host === '::' || host === '[::]') return `http://[::1]:${port}`;
  const url = `http://${host.includes(':') && !host.startsWith('[') ? `[${host}]` : host}:${port}`;
  return isLoopbackUrl(url) ? url : undefined;
}
