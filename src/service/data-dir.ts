import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  type FSWatcher,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  watch,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { isToken } from './server-identity.js';
import { newApiKey } from './store/tenants.js';

/**
 * Files a data directory holds beside the database: the local credentials (created on first use)
 * and, while a `cas serve` runs over it, that server's address, so other CLI processes talk to it
 * instead of failing on DuckDB's one-process lock. Everything in it is private to its owner: the
 * directory 0700, the files 0600 (the database holds key hashes and every stored event).
 */
export const credentialsSchema = z.object({ api_key: z.string().min(1), project_id: z.string().min(1) });
export type Credentials = z.infer<typeof credentialsSchema>;

export const serverFileSchema = z.object({
  url: z.string(),
  pid: z.number().int(),
  /** Per-run secret the server proves it holds on `/healthz` (server-identity.ts). */
  secret: z.string().refine(isToken, 'expected 64 hex digits'),
});
export type ServerFile = z.infer<typeof serverFileSchema>;

export const databasePath = (dataDir: string) => join(dataDir, 'cas.duckdb');
const DATABASE_FILES = ['cas.duckdb', 'cas.duckdb.wal'];
const credentialsPath = (dataDir: string) => join(dataDir, 'credentials.json');
export const serverFilePath = (dataDir: string) => join(dataDir, 'server.json');

function readJson<T>(path: string, schema: z.ZodType<T>): T | undefined {
  try {
    const parsed = schema.safeParse(JSON.parse(readFileSync(path, 'utf8')));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Takes from `path` the permissions `mode` does not grant (group's and others', for 0700 or 0600),
 * never adding any: a directory its owner made read-only (0500) stays read-only, where chmod 0700 made
 * it writable again. Leaves alone a file that is not there (yet) or not ours to change.
 */
function restrict(path: string, mode: number): void {
  try {
    const current = statSync(path).mode & 0o777;
    if ((current & mode) !== current) chmodSync(path, current & mode);
  } catch {
    // ENOENT: not created yet; EPERM/EROFS: not ours. Opening the store reports real problems.
  }
}

/** Creates the directory 0700, and takes group's and others' permissions from an existing one (mkdir's mode applies only to new ones). */
export function ensureDataDir(dataDir: string): void {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  restrict(dataDir, 0o700);
}

/**
 * Keeps the store's files 0600 while a service has them open. DuckDB creates them with the process
 * umask (which a worker thread cannot change), and deletes the WAL at each checkpoint and creates it
 * again at the next write, so the WAL is restricted each time it appears. The directory being 0700
 * already keeps others out in between.
 */
export function protectDataFiles(dataDir: string): { close(): void } {
  for (const name of [...DATABASE_FILES, 'credentials.json', 'server.json']) {
    restrict(join(dataDir, name), 0o600);
  }
  let watcher: FSWatcher | undefined;
  try {
    // Only on `rename` (created or deleted): a chmod is itself a `change`, and answering those looped.
    watcher = watch(dataDir, { persistent: false }, (event, name) => {
      if (event === 'rename' && name !== null && DATABASE_FILES.includes(String(name))) {
        restrict(join(dataDir, String(name)), 0o600);
      }
    });
    watcher.on('error', () => watcher?.close());
  } catch {
    // No file watching here (some network file systems): the 0700 directory still keeps others out.
  }
  return { close: () => watcher?.close() };
}

export function readCredentials(dataDir: string): Credentials | undefined {
  return readJson(credentialsPath(dataDir), credentialsSchema);
}

/** Written under a temporary name and renamed, 0600 from the start: never half a file, never readable by others. */
function writePrivate(path: string, text: string): void {
  const temporary = `${path}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    writeFileSync(temporary, text, { mode: 0o600, flag: 'wx' });
    renameSync(temporary, path);
  } catch (error) {
    rmSync(temporary, { force: true });
    throw error;
  }
}

/** The prefix of a data directory's own project id (`local_` + 8 hex digits). */
export const LOCAL_PROJECT_PREFIX = 'local_';

/**
 * The local key and project of this data directory, created once (mode 0600: it is a secret). When
 * the file is missing or damaged, or names a project the store does not hold (`holds`: another
 * store's file, as a database restored into a directory already set up gives), `storedProject` is the
 * local project the store already has, if any: it is kept, under a new key (the old key's hash stays
 * in the store, so it still works), where a new project hid every event stored before. `noted` hears
 * what was remade.
 */
export function loadOrCreateCredentials(
  dataDir: string,
  storedProject?: string,
  noted: (line: string) => void = () => undefined,
  holds: (projectId: string) => boolean = () => true,
): Credentials {
  const existing = readCredentials(dataDir);
  const foreign = existing !== undefined && storedProject !== undefined && !holds(existing.project_id);
  if (existing && !foreign) {
    restrict(credentialsPath(dataDir), 0o600);
    return existing;
  }
  const created = {
    api_key: newApiKey(),
    project_id: storedProject ?? `${LOCAL_PROJECT_PREFIX}${randomBytes(4).toString('hex')}`,
  };
  writePrivate(credentialsPath(dataDir), `${JSON.stringify(created, null, 2)}\n`);
  if (storedProject !== undefined) {
    const what = foreign
      ? `named project ${existing.project_id}, which this store does not hold`
      : 'was missing or damaged';
    noted(`credentials.json ${what}: a new local key was made for the stored project ${storedProject}`);
  }
  return created;
}

/**
 * A new key for the data directory's own project, written over credentials.json: the one there was
 * revoked (`cas keys revoke`), and revoking a key must not be undone by the next start.
 */
export function renewCredentials(dataDir: string, projectId: string): Credentials {
  const renewed = { api_key: newApiKey(), project_id: projectId };
  writePrivate(credentialsPath(dataDir), `${JSON.stringify(renewed, null, 2)}\n`);
  return renewed;
}

export type ServerFileState =
  | { kind: 'none' }
  | { kind: 'invalid'; reason: string; pid?: number }
  | { kind: 'valid'; file: ServerFile };

/** What `server.json` holds: nothing, something no current `cas serve` writes, or a server's address. */
export function inspectServerFile(dataDir: string): ServerFileState {
  let text: string;
  try {
    text = readFileSync(serverFilePath(dataDir), 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === 'ENOENT' ? { kind: 'none' } : { kind: 'invalid', reason: `unreadable (${code})` };
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { kind: 'invalid', reason: text.trim() === '' ? 'empty' : 'not JSON' };
  }
  const parsed = serverFileSchema.safeParse(json);
  if (parsed.success) return { kind: 'valid', file: parsed.data };
  const pid = z.object({ pid: z.number().int() }).safeParse(json);
  return {
    kind: 'invalid',
    reason: 'no proof secret (written by an older cas, or not by cas)',
    ...(pid.success ? { pid: pid.data.pid } : {}),
  };
}

export function readServerFile(dataDir: string): ServerFile | undefined {
  return readJson(serverFilePath(dataDir), serverFileSchema);
}

export function writeServerFile(dataDir: string, info: ServerFile): void {
  writePrivate(serverFilePath(dataDir), `${JSON.stringify(info)}\n`);
}

export function removeServerFile(dataDir: string, pid: number): void {
  // Only the process that wrote it removes it, so a second server's file survives the first one's exit.
  if (readServerFile(dataDir)?.pid === pid) rmSync(serverFilePath(dataDir), { force: true });
}

/**
 * Removes a `server.json` found stale, unless it changed since it was read (a new server wrote its
 * own meanwhile): `seen` is the file's text or secret as read.
 */
export function removeStaleServerFile(dataDir: string, seen: { secret?: string | undefined }): void {
  const state = inspectServerFile(dataDir);
  const current = state.kind === 'valid' ? state.file.secret : undefined;
  if (state.kind !== 'none' && current === seen.secret) rmSync(serverFilePath(dataDir), { force: true });
}
