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

/** The user pressed Ctrl-C (or the process got SIGTERM): exit 130 after saving what can be saved. */
export class InterruptedError extends Error {
  constructor(message = 'interrupted') {
    super(message);
    this.name = 'InterruptedError';
  }
}
