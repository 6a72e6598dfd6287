import type { z } from 'zod';
import { HttpError } from '../client/errors.js';
import {
  endConversationArgs,
  endSessionArgs,
  functionCallArgs,
  parseArgs,
  type SessionOptionsInput,
  sessionAliasArgs,
  sessionIdentifyArgs,
  trackEventArgs,
  turnArgs,
  usageArgs,
} from './arguments.js';
import { DeliveryQueue, type DeliveryQueueOptions } from './delivery-queue.js';
import { SessionClosedError } from './errors.js';
import type { LiveHandlers, LiveListener } from './live-events.js';
import type {
  Attributes,
  LiveEvent,
  Properties,
  ServiceError,
  Session,
  TimestampInput,
  Traits,
  Usage,
} from './types.js';
import { checkWire, type SessionContext, type WireObject, wire } from './wire.js';

/** What a Session needs from its Client: where batches go and the shared bounds. */
export interface SessionDeps {
  queue: Omit<DeliveryQueueOptions, 'onError'>;
  /** Opens the live socket; resolves once it listens (or failed, reported through onError). */
  listen?: (sessionId: string, handlers: LiveHandlers) => LiveListener;
  log?: ((line: string) => void) | undefined;
  now?: () => Date;
  /** Called once when the session is flushed for good, so the client stops tracking it. */
  onClosed?: (session: QueuedSession) => void;
  /** The session has events in hand (true) or has none left (false), so the client holds it only meanwhile. */
  busy?: (session: QueuedSession, busy: boolean) => void;
  /** Whether the client was closed: a session it did not hold then refuses calls as a flushed one does. */
  clientClosed?: () => boolean;
}

/** Errors kept for getErrors(); past it the oldest go (hasErrors() stays true). */
const MAX_ERRORS = 10_000;

/**
 * One session of one user or device (spec part 1): each call validates, enqueues and returns; the
 * queue's worker sends. Obtained from `Client.createSession`.
 */
export class QueuedSession implements Session {
  readonly sessionId: string;
  private readonly ctx: SessionContext;
  /**
   * Whether the session's own conversation (`conversationId` of createSession) is open: a
   * conversation call opened it and no endConversation closed it since. Only then does a custom
   * event join it, as with the hosted SDKs: each event after endConversation was refused (409), and
   * one before any turn opened the conversation (found by probing).
   */
  private defaultOpen = false;
  private readonly queue: DeliveryQueue;
  private readonly errors: ServiceError[] = [];
  private readonly now: () => Date;
  private readonly live: LiveListener | undefined;
  private closed: Promise<void> | undefined;
  private startAttributes: Attributes | undefined;

  constructor(
    options: SessionOptionsInput,
    private readonly deps: SessionDeps,
  ) {
    this.sessionId = options.sessionId;
    this.ctx = {
      sessionId: options.sessionId,
      conversationId: options.conversationId,
      id: options.id,
      deviceId: options.deviceId,
    };
    this.now = deps.now ?? (() => new Date());
    const onError = options.onError as ((error: ServiceError) => void) | undefined;
    const onEvent = options.onEvent as ((event: LiveEvent) => void) | undefined;
    const live =
      onEvent && deps.listen
        ? deps.listen(options.sessionId, {
            onEvent: (event) => guard(() => onEvent(event), deps.log),
            onError: (error) => this.record(error, onError),
          })
        : undefined;
    this.live = live;
    const send = deps.queue.send;
    this.queue = new DeliveryQueue({
      ...deps.queue,
      send: live
        ? async (events) => {
            // Events sent before the socket listens would never reach onEvent.
            await live.ready();
            live.sending(events.map((e) => e.event_id));
            try {
              await send(events);
            } catch (error) {
              if (error instanceof HttpError && (error.status === 400 || error.status === 409)) {
                live.refusedRequest(error.status, error.message);
              }
              throw error;
            }
            live.acknowledged(events.map((e) => e.event_id));
          }
        : send,
      onError: (error) => this.record(error, onError),
      onIdle: () => deps.busy?.(this, false),
    });
    this.startAttributes = options.attributes;
  }

  userIdentify(args: { timestamp?: TimestampInput; id: string; deviceId?: string; traits?: Traits }): void {
    const a = this.args('session.userIdentify', sessionIdentifyArgs, args);
    this.send('session.userIdentify', wire.identify(this.ctx, a, this.now));
  }

  userAlias(args: { timestamp?: TimestampInput; id: string; previousId: string }): void {
    const a = this.args('session.userAlias', sessionAliasArgs, args);
    this.send('session.userAlias', wire.alias(this.ctx, a, this.now));
  }

  trackEvent(args: {
    event: string;
    timestamp?: TimestampInput;
    conversationId?: string;
    properties?: Properties;
  }): void {
    const a = this.args('session.trackEvent', trackEventArgs, args);
    const ctx = this.defaultOpen ? this.ctx : { ...this.ctx, conversationId: undefined };
    this.send('session.trackEvent', wire.event(ctx, a, this.now));
  }

  trackConversationTurn(args: {
    timestamp?: TimestampInput;
    conversationId?: string;
    user: string;
    assistant: string;
    assistantId?: string;
    properties?: Properties;
    usage?: Usage;
  }): void {
    const a = this.args('session.trackConversationTurn', turnArgs, args);
    this.opens(a.conversationId);
    this.send('session.trackConversationTurn', wire.turn(this.ctx, a, this.now));
  }

  trackConversationUsage(args: { timestamp?: TimestampInput; conversationId?: string; cost: Usage }): void {
    const a = this.args('session.trackConversationUsage', usageArgs, args);
    this.opens(a.conversationId);
    this.send('session.trackConversationUsage', wire.usage(this.ctx, a, this.now));
  }

  trackFunctionCall(args: {
    name: string;
    /** JSON text; any other value is JSON-encoded. */
    args?: unknown;
    result?: unknown;
    /** Milliseconds. */
    runtime?: number;
    properties?: Properties;
    conversationId?: string;
    timestamp?: TimestampInput;
  }): void {
    const a = this.args('session.trackFunctionCall', functionCallArgs, args);
    this.opens(a.conversationId);
    this.send('session.trackFunctionCall', wire.functionCall(this.ctx, a, this.now));
  }

  endConversation(
    args: { timestamp?: TimestampInput; conversationId?: string; properties?: Properties } = {},
  ): void {
    const a = this.args('session.endConversation', endConversationArgs, args);
    if ((a.conversationId ?? this.ctx.conversationId) === this.ctx.conversationId) this.defaultOpen = false;
    this.send('session.endConversation', wire.endConversation(this.ctx, a, this.now));
  }

  /** A conversation call naming `conversationId` (or none): the session's own conversation is open. */
  private opens(conversationId: string | undefined): void {
    const own = this.ctx.conversationId;
    if (own !== undefined && (conversationId ?? own) === own) this.defaultOpen = true;
  }

  endSession(args: { timestamp?: TimestampInput; attributes?: Attributes } = {}): void {
    const a = this.args('session.endSession', endSessionArgs, args);
    this.send('session.endSession', wire.endSession(this.ctx, a, this.now));
  }

  /** Resolves when everything enqueued so far is stored or reported; the session goes on. */
  flushAndContinue(): Promise<void> {
    return this.queue.drained();
  }

  /**
   * Like flushAndContinue, then the session refuses further calls (SessionClosedError). Its live
   * socket, if any, is given a moment to deliver the session's last events, then closed.
   */
  flush(): Promise<void> {
    this.closed ??= (async () => {
      await this.queue.drained();
      await this.live?.close();
      this.deps.onClosed?.(this);
    })();
    return this.closed;
  }

  hasErrors(): boolean {
    return this.errorCount > 0;
  }

  getErrors(): ServiceError[] {
    return this.errors.map((e) => ({ ...e }));
  }

  /** Events enqueued and not yet stored or reported. */
  get pending(): number {
    return this.queue.pending;
  }

  /** Whether the session has a live socket (onEvent), which only flush() or the client's close() closes. */
  get listening(): boolean {
    return this.live !== undefined;
  }

  private errorCount = 0;

  private args<S extends z.ZodType>(call: string, schema: S, value: unknown): z.output<S> {
    if (this.closed) throw new SessionClosedError(`${call}: session ${this.sessionId} was flushed`);
    if (this.deps.clientClosed?.()) throw new SessionClosedError(`${call}: the client is closed`);
    return parseArgs(call, schema, value);
  }

  private send(call: string, event: WireObject): void {
    checkWire(call, event);
    const attributes = this.startAttributes;
    if (attributes !== undefined) {
      // An explicit start only to carry the attributes, at the first event's time (a session of past
      // data starts in the past). Without attributes the first event opens the session, and a
      // session continued by another Session object gets no second `Session Started`.
      this.startAttributes = undefined;
      const start = wire.startSession(this.ctx, attributes, this.now);
      this.queue.enqueue({ ...start, timestamp: event.timestamp });
    }
    if (this.queue.enqueue(event) || this.queue.pending > 0) this.deps.busy?.(this, true);
  }

  private record(error: ServiceError, onError: ((error: ServiceError) => void) | undefined): void {
    this.errorCount++;
    this.errors.push(error);
    if (this.errors.length > MAX_ERRORS) this.errors.shift();
    if (onError) guard(() => onError({ ...error }), this.deps.log);
  }
}

/** An app's callback that throws must not stop the worker that called it. */
function guard(run: () => void, log: ((line: string) => void) | undefined): void {
  try {
    run();
  } catch (error) {
    log?.(`a callback threw: ${error instanceof Error ? error.message : String(error)}`);
  }
}
