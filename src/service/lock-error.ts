/**
 * The data directory's failures a person can act on, told apart from bugs. Dependency-free: the CLI's
 * exit-code mapping loads this module without loading DuckDB (test/startup.test.ts).
 */

/** Raised when another process holds the data directory's database (DuckDB admits one process). */
export class DataDirLockedError extends Error {
  constructor(readonly dataDir: string) {
    super(`the data directory ${dataDir} is in use by another process`);
    this.name = 'DataDirLockedError';
  }
}

/**
 * The store holds migrations this build does not know: a newer cas wrote it. Opened anyway, its reads
 * worked and every write failed with an internal error (a column count this build does not expect),
 * and an import said its checkpoint would resume it (found by probing upgrades).
 */
export class StoreTooNewError extends Error {
  constructor(
    readonly version: number,
    readonly known: number,
  ) {
    super(`its store is at version ${version}; this cas knows versions up to ${known}`);
    this.name = 'StoreTooNewError';
  }
}

/**
 * What stops the data directory from being used: `full` (no space, quota or file-size limit),
 * `read-only` (read-only file system), `denied` (file permissions), `damaged` (DuckDB found the
 * database or its write-ahead log corrupt), `newer` (a newer cas wrote it), `files` (the process may
 * open too few files: store/open-files.ts). The first three and the last are the machine's state and
 * pass when it changes; `damaged` needs a person, `newer` that cas.
 */
export type StorageProblem = 'full' | 'read-only' | 'denied' | 'damaged' | 'newer' | 'files';
export const STORAGE_PROBLEMS: readonly StorageProblem[] = [
  'full',
  'read-only',
  'denied',
  'damaged',
  'newer',
  'files',
];

const CAUSES: Record<StorageProblem, string> = {
  full: 'the disk is full',
  'read-only': 'the file system is read-only',
  denied: 'permission denied',
  damaged: 'the database is damaged',
  newer: 'a newer version of cas wrote it',
  files: 'too few files may be open at once',
};

/** One line naming the data directory, the cause, and (in parentheses) what the system said. */
export class DataDirError extends Error {
  constructor(
    readonly problem: StorageProblem,
    readonly dataDir: string,
    /** What DuckDB or the system said, one line. */
    readonly detail: string,
  ) {
    super(`${describeProblem(problem, dataDir)} (${detail})`);
    this.name = 'DataDirError';
  }
}

/** `dataDir` is empty for a failure outside the data directory (the system's message names the file). */
function describeProblem(problem: StorageProblem, dataDir: string): string {
  if (dataDir === '') {
    if (problem === 'damaged') return 'a database is damaged';
    if (problem === 'newer') return 'a database was written by a newer version of cas';
    if (problem === 'files') return 'a database cannot be used safely';
    return problem === 'denied' ? 'cannot use a file: permission denied' : `cannot write: ${CAUSES[problem]}`;
  }
  if (problem === 'damaged') return `the database in ${dataDir} is damaged`;
  if (problem === 'newer') return `the data directory ${dataDir} was written by a newer version of cas`;
  if (problem === 'files') return `the data directory ${dataDir} cannot be used safely`;
  return `the data directory ${dataDir} cannot be written: ${CAUSES[problem]}`;
}

/** The cause in a few words, for answers to clients that must not learn the server's paths. */
export const causeOf = (problem: StorageProblem): string => CAUSES[problem];

/**
 * The cause of a service's 503 for a storage failure (service/errors.ts `storageUnavailable`), read
 * off the error the HTTP client or the in-process queue raised; undefined for any other failure.
 */
export function storageRefusalOf(error: unknown): StorageProblem | undefined {
  const e = error as { name?: unknown; status?: unknown; message?: unknown } | null;
  if (e?.name !== 'HttpError' || e.status !== 503 || typeof e.message !== 'string') return undefined;
  const cause = /^the service cannot use its storage: (.+?); nothing of this request was stored/.exec(
    e.message,
  )?.[1];
  return STORAGE_PROBLEMS.find((p) => causeOf(p) === cause);
}

const ERRNO: Record<string, StorageProblem> = {
  ENOSPC: 'full',
  EDQUOT: 'full',
  EFBIG: 'full',
  EROFS: 'read-only',
  EACCES: 'denied',
  EPERM: 'denied',
};

// DuckDB reports I/O failures as text (strerror of the errno, or its own words for corruption).
const MESSAGES: Array<[RegExp, StorageProblem]> = [
  [/No space left on device|Disk quota exceeded|File too large/i, 'full'],
  [/Read-only file system/i, 'read-only'],
  [/Permission denied|Operation not permitted/i, 'denied'],
  [
    /Corrupt database file|Corrupt WAL file|Failure while replaying WAL|not a valid DuckDB database/i,
    'damaged',
  ],
  [/WAL does not match database file|WAL checkpoint iteration does not match/i, 'damaged'],
];

/** DuckDB's message when another process holds the file's lock (not just any message saying "lock"). */
const LOCKED = /Could not set lock on file|Conflicting lock is held/;

/** The first line of an error's message, without DuckDB's trailing documentation links. */
export function firstLine(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return (text.split('\n')[0] ?? '').trim();
}

/** The problem an error reports, if it is one of the storage problems above. */
export function storageProblemOf(error: unknown): StorageProblem | undefined {
  if (error instanceof DataDirError) return error.problem;
  if (error instanceof StoreTooNewError) return 'newer';
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && ERRNO[code]) return ERRNO[code];
  const text = firstLine(error);
  return MESSAGES.find(([pattern]) => pattern.test(text))?.[1];
}

/**
 * A failure to open or write the data directory as the typed error the CLI maps to an exit code, or
 * undefined when it is none of ours (then it stays a bug report). DuckDB's lock message is matched
 * exactly: a corrupt block ("... in block at location 4096") once passed for a lock.
 */
export function classifyDataDirError(error: unknown, dataDir: string): Error | undefined {
  if (error instanceof DataDirLockedError || error instanceof DataDirError) return error;
  const text = firstLine(error);
  if (LOCKED.test(text)) return new DataDirLockedError(dataDir);
  const problem = storageProblemOf(error);
  return problem ? new DataDirError(problem, dataDir, text) : undefined;
}
