import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { newApiKey } from './store/tenants.js';

/**
 * Files a data directory holds beside the database: the local credentials (created on first use)
 * and, while a `cas serve` runs over it, that server's address, so other CLI processes talk to it
 * instead of failing on DuckDB's one-process lock.
 */
export const credentialsSchema = z.object({ api_key: z.string().min(1), project_id: z.string().min(1) });
export type Credentials = z.infer<typeof credentialsSchema>;

export const serverFileSchema = z.object({ url: z.string(), pid: z.number().int() });
export type ServerFile = z.infer<typeof serverFileSchema>;

export const databasePath = (dataDir: string) => join(dataDir, 'cas.duckdb');
const credentialsPath = (dataDir: string) => join(dataDir, 'credentials.json');
const serverPath = (dataDir: string) => join(dataDir, 'server.json');

function readJson<T>(path: string, schema: z.ZodType<T>): T | undefined {
  try {
    const parsed = schema.safeParse(JSON.parse(readFileSync(path, 'utf8')));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

export function ensureDataDir(dataDir: string): void {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
}

export function readCredentials(dataDir: string): Credentials | undefined {
  return readJson(credentialsPath(dataDir), credentialsSchema);
}

/** The local key and project of this data directory, created once (mode 0600: it is a secret). */
export function loadOrCreateCredentials(dataDir: string): Credentials {
  const existing = readCredentials(dataDir);
  if (existing) return existing;
  const created = { api_key: newApiKey(), project_id: `local_${randomBytes(4).toString('hex')}` };
  writeFileSync(credentialsPath(dataDir), `${JSON.stringify(created, null, 2)}\n`, { mode: 0o600 });
  return created;
}

export function readServerFile(dataDir: string): ServerFile | undefined {
  return readJson(serverPath(dataDir), serverFileSchema);
}

export function writeServerFile(dataDir: string, info: ServerFile): void {
  writeFileSync(serverPath(dataDir), `${JSON.stringify(info)}\n`, { mode: 0o600 });
}

export function removeServerFile(dataDir: string, pid: number): void {
  // Only the process that wrote it removes it, so a second server's file survives the first one's exit.
  if (readServerFile(dataDir)?.pid === pid) rmSync(serverPath(dataDir), { force: true });
}
