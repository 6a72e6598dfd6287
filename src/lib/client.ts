import { ClientError, NetworkError } from '../client/errors.js';
import { alias, identify, postQueue } from '../client/routes.js';
import { aliasArgs, identifyArgs, parseArgs, sessionOptionsSchema } from './arguments.js';
import { type ClientSettings, resolveSettings } from './config.js';
import { connectLocal, connectRemote, type LibConnection } from './connection.js';
import { DEFAULT_BATCH, QueueBudget } from './delivery-queue.js';
import { ServiceCallError, SessionClosedError } from './errors.js';
import { openLiveEvents } from './live-events.js';
import { QueuedSession } from './session.js';
import type { ClientOptions, Session, SessionOptions, Traits, UserRecord, Who } from './types.js';

/**
 * One `beforeExit` listener for every Client of the process: one each made Node warn of a listener
 * leak (MaxListenersExceededWarning) in the app's output from the eleventh Client on.
 */
const atExit = new Set<() => void>();
const runAtExit = (): void => {
  for (const f of [...atExit]) f();
};
function onBeforeExit(f: () => void): void {
  if (atExit.size === 0) process.on('beforeExit', runAtExit);
  atExit.add(f);
}
function offBeforeExit(f: () => void): void {
  atExit.delete(f);
  if (atExit.size === 0) process.off('beforeExit', runAtExit);
}

/**
 * The library's entry (library.md): user identify and alias, awaited; sessions, whose calls are
 * queued and sent in the background. One HTTP client per Client, shared by its sessions.
 */
export class Client {
  private readonly settings: ClientSettings;
  private readonly log: ((line: string) => void) | undefined;
  private readonly budget: QueueBudget;
  /**
   * The sessions close() and `beforeExit` must reach: those with events in hand or a live socket. A
   * session is let go once it has sent what it was given, and held again at its next call: holding
   * every session made kept ~1.3 KB each for the client's life, so an app that makes a session per
   * chat and never flushes it (flush() ends it for good) grew without bound (found by a soak: 20,000
   * sessions, +27 MB of heap). Let go, a session still refuses calls once the client is closed.
   */
  private readonly sessions = new Set<QueuedSession>();
  private connection: LibConnection | undefined;
  private connecting: Promise<LibConnection> | undefined;
  private closing: Promise<void> | undefined;
  private listening = false;
  /**
   * Pending events go out before the process exits on its own (library.md); signals are the app's.
   * Once nothing is left to send, a local connection (the embedded service, which does not keep the
   * process alive, or a `cas serve`'s) is closed, so the app exits without `close()` and its data
   * directory is checkpointed and unlocked; a later call opens it again.
   */
  private readonly beforeExit = (): void => {
    let sending = false;
    for (const session of this.sessions) {
      if (session.pending === 0) continue;
      sending = true;
      void session.flushAndContinue();
    }
    if (!sending && !this.closing) void this.releaseLocal();
  };

  constructor(options: ClientOptions = {}) {
    this.settings = resolveSettings(options, process.env);
    // Lines of the shared connection code carry the prefix already ("cas: cas: POST …" otherwise).
    this.log = this.settings.debug
      ? (line) => console.error(line.startsWith('cas: ') ? line : `cas: ${line}`)
      : undefined;
    if (this.settings.endpoint !== undefined) this.connection = connectRemote(this.settings, this.log);
    this.budget = new QueueBudget(this.settings.maxQueueSize);
  }

  /** Creates a user or device, or merges traits into it; resolves to the user record (spec part 2). */
  async userIdentify(args: Who & { traits?: Traits }): Promise<UserRecord> {
    const a = parseArgs('client.userIdentify', identifyArgs, args);
    return this.onService('client.userIdentify', ({ http }) =>
      identify(http, {
        ...(a.id === undefined ? {} : { id: a.id }),
        ...(a.deviceId === undefined ? {} : { device_id: a.deviceId }),
        ...(a.traits === undefined ? {} : { traits: a.traits }),
      }),
    ).catch(asServiceCallError);
  }

  /** Gives the user found by `previousId` the new primary id `id`. */
  async userAlias(args: { id: string; previousId: string }): Promise<UserRecord> {
    const a = parseArgs('client.userAlias', aliasArgs, args);
    return this.onService('client.userAlias', ({ http }) =>
      alias(http, { id: a.id, previous_id: a.previousId }),
    ).catch(asServiceCallError);
  }

  createSession(options: SessionOptions): Session {
    if (this.closing) throw new SessionClosedError('client.createSession: the client is closed');
    const o = parseArgs('client.createSession', sessionOptionsSchema, options);
    const session = new QueuedSession(o, {
      queue: {
        send: async (events) => {
          await this.onService('send', ({ http }) => postQueue(http, events));
        },
        budget: this.budget,
        batch: DEFAULT_BATCH,
        log: this.log,
      },
      listen: (sessionId, handlers) =>
        openLiveEvents(
          { connect: () => this.connect('onEvent'), refresh: (used) => this.refresh(used) },
          sessionId,
          handlers,
          this.log,
        ),
      log: this.log,
      onClosed: (s) => this.sessions.delete(s),
      busy: (s, busy) => {
        if (busy) this.sessions.add(s);
        else if (!s.listening) this.sessions.delete(s);
      },
      clientClosed: () => this.closing !== undefined,
    });
    if (session.listening) this.sessions.add(session);
    if (!this.listening) {
      this.listening = true;
      onBeforeExit(this.beforeExit);
    }
    return session;
  }

  /** Flushes every session, closes their sockets, the HTTP client and the embedded service, if any. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      await Promise.all([...this.sessions].map((s) => s.flush()));
      if (this.listening) offBeforeExit(this.beforeExit);
      const connection = this.connection ?? (await this.connecting?.catch(() => undefined));
      await connection?.close();
    })();
    return this.closing;
  }

  /**
   * Runs a call on the connection. A local one that fails on the network after its retries (the
   * `cas serve` that server.json named stopped, or restarted on another port) is let go, and the
   * call made once more on the one found now (or the embedded service): kept, it failed every later
   * call, the user routes' too (found by probing).
   */
  private async onService<T>(call: string, run: (connection: LibConnection) => Promise<T>): Promise<T> {
    const connection = await this.connect(call);
    try {
      return await run(connection);
    } catch (error) {
      if (!(error instanceof NetworkError) || connection.local !== true) throw error;
      await this.forget(connection);
      return run(await this.connect(call));
    }
  }

  /**
   * For a live socket that failed on the network over `used`: the connection the client's own calls
   * found since (a send or user call that let go of a dead local one), else undefined. The socket
   * never connects by itself: it would start an embedded service the app let go as it exited (which
   * then never exited), or take the data directory from a `cas serve` about to start (CI found both).
   */
  private async refresh(used: LibConnection): Promise<LibConnection | undefined> {
    return this.connection !== undefined && this.connection !== used ? this.connection : undefined;
  }

  /** Lets go of a local connection that failed, so the next call finds the service afresh. */
  private async forget(connection: LibConnection): Promise<void> {
    if (this.connection !== connection) return;
    this.connection = undefined;
    this.connecting = undefined;
    await connection.close().catch(() => undefined);
  }

  private async releaseLocal(): Promise<void> {
    const connection = this.connection;
    if (connection?.local !== true) return;
    this.connection = undefined;
    this.connecting = undefined;
    await connection.close();
  }

  /** The remote connection, or the local one started on first use (and tried again after a failure). */
  private async connect(call: string): Promise<LibConnection> {
    // Sessions' last batches still go out while the client closes; nothing new starts.
    if (this.closing && call !== 'send') throw new SessionClosedError(`${call}: the client is closed`);
    if (this.connection) return this.connection;
    this.connecting ??= connectLocal(this.settings, this.log).then(
      (connection) => {
        this.connection = connection;
        return connection;
      },
      (error: unknown) => {
        this.connecting = undefined;
        throw error;
      },
    );
    return this.connecting;
  }
}

/** The HTTP client's refusal or network failure as the spec's error record, an Error of our own. */
function asServiceCallError(error: unknown): never {
  if (error instanceof ClientError) {
    const r = error.toRecord();
    throw new ServiceCallError(r.status, r.message);
  }
  throw error;
}
