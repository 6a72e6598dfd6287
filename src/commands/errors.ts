/** A bad flag, value or combination: exit 2, with the offending flag named in the message. */
export class UsageError extends Error {
  constructor(
    message: string,
    readonly hint?: string,
  ) {
    super(message);
    this.name = 'UsageError';
  }
}

/** A flag asks for one of our extensions of a service that lacks it (exit 2, naming the flag). */
export class UnsupportedFlagError extends UsageError {
  constructor(message: string, hint?: string) {
    super(message, hint);
    this.name = 'UnsupportedFlagError';
  }
}

/** The user pressed Ctrl-C (or the process got SIGTERM): exit 130 after saving what can be saved. */
export class InterruptedError extends Error {
  constructor(message = 'interrupted') {
    super(message);
    this.name = 'InterruptedError';
  }
}

/**
 * The `cas serve` holding the data directory stayed busy (at its connection or rate limits) for the
 * whole of --retry-time: exit 5, naming it, where the wait used to end as "in use by another process".
 */
export class ServerBusyError extends Error {
  constructor(
    readonly url: string,
    readonly dataDir: string,
    /** The busy answer: a status (503, 429, 408) or the socket's reset. */
    readonly why: string,
    readonly waitedMs: number,
  ) {
    super(
      `the cas serve at ${url} holding the data directory ${dataDir} was busy (${why}) for ${Math.round(waitedMs / 1000)} s (--retry-time)`,
    );
    this.name = 'ServerBusyError';
  }
}

/** `cas serve` over a data directory a running `cas serve` (its server.json, its process alive) serves. */
export class AlreadyServedError extends Error {
  constructor(
    readonly url: string,
    readonly pid: number,
    readonly dataDir: string,
  ) {
    super(`the data directory ${dataDir} is served already, by the cas serve at ${url} (pid ${pid})`);
    this.name = 'AlreadyServedError';
  }
}
