/** Raised when another process holds the data directory's database (DuckDB admits one process). */
export class DataDirLockedError extends Error {
  constructor(readonly dataDir: string) {
    super(`the data directory ${dataDir} is in use by another process`);
    this.name = 'DataDirLockedError';
  }
}
