import type { WebSocket } from 'ws';
import { LIVE_CLOSE } from '../../shared/live-events.js';
import type { OutFrame, Subscriber } from './hub.js';
import type { LiveScope } from './token.js';

/** How long a socket closed for being slow may take to read its close frame before it is cut. */
const CLOSE_GRACE_MS = 5_000;
/** Bytes handed to the socket and not yet written out; the rest waits in the queue. */
const IN_FLIGHT_BYTES = 1024 * 1024;

/** Bytes queued for all sockets together (each socket's queue counted whole, shared frames too). */
export class QueueBudget {
  used = 0;
  constructor(readonly max: number) {}
}

/**
 * One accepted socket. Frames are handed to the socket while less than 1 MiB of them is unwritten
 * (a fast reader takes a commit of thousands of rows in stride); the rest wait in a queue of the
 * frames themselves, which are shared by every socket that gets them. The queue is bounded: a reader
 * whose queue passes `bufferBytes`, or whose frames would take all sockets' queues past the service's
 * budget, is closed (1013, with the reason) and cut if it does not read even the close frame soon. A
 * single frame larger than the bound still goes to a reader that has nothing else waiting.
 */
export class SocketSubscriber implements Subscriber {
  private closing = false;
  private readonly queue: OutFrame[] = [];
  private queued = 0;
  private inFlight = 0;
  /** Its session ended: close normally once every queued frame is handed over. */
  private ending = false;

  constructor(
    readonly scope: LiveScope,
    private readonly ws: WebSocket,
    private readonly bufferBytes: number,
    private readonly budget: QueueBudget,
    private readonly gone: () => void,
  ) {
    ws.on('close', () => {
      this.release();
      this.closing = true;
      gone();
    });
  }

  deliver(frames: readonly OutFrame[]): void {
    if (this.closing || this.ending) return;
    for (const frame of frames) {
      this.queue.push(frame);
      this.queued += frame.bytes;
      this.budget.used += frame.bytes;
      if (frame.endsSession && this.scope.sessionId !== undefined) this.ending = true;
    }
    this.pump();
    const over = this.queued > this.bufferBytes || this.budget.used > this.budget.max;
    if (!this.closing && over && this.queue.length > 1) {
      this.close(
        LIVE_CLOSE.tooSlow,
        `reader too slow: ${this.queued} bytes waiting; reconnect and read missed events from /bc/v1/live-events/events`,
      );
    }
  }

  close(code: number, reason: string): void {
    if (this.closing) return;
    this.closing = true;
    this.release();
    // Off the hub at once: a closing socket gets no more frames, so its memory stops growing now.
    this.gone();
    this.ws.close(code, reason.slice(0, 120));
    setTimeout(() => this.ws.terminate(), CLOSE_GRACE_MS).unref();
  }

  private pump(): void {
    while (!this.closing && this.inFlight < IN_FLIGHT_BYTES) {
      const frame = this.queue.shift();
      if (!frame) break;
      this.queued -= frame.bytes;
      this.budget.used -= frame.bytes;
      this.inFlight += frame.bytes;
      this.ws.send(frame.text, () => {
        this.inFlight -= frame.bytes;
        this.pump();
      });
    }
    // After the whole batch: a Conversation Summary committed with the end still reaches the reader.
    if (this.ending && this.queue.length === 0) this.close(LIVE_CLOSE.normal, 'session ended');
  }

  private release(): void {
    this.budget.used -= this.queued;
    this.queued = 0;
    this.queue.length = 0;
  }
}
