import type { WebSocket } from 'ws';
import { LIVE_CLOSE } from '../../shared/live-events.js';
import type { OutFrame, Subscriber } from './hub.js';
import type { LiveScope } from './token.js';

/** How long a socket closed for being slow may take to read its close frame before it is cut. */
const CLOSE_GRACE_MS = 5_000;

/**
 * One accepted socket. Frames are written as they come; what the reader has not taken yet waits in
 * `bufferedAmount`, which is bounded: a frame that would take it past `bufferBytes` closes the socket
 * instead (1013, with the reason), and the socket is cut if even the close frame is not read soon.
 * A frame larger than the bound still goes to a reader that has taken everything else.
 */
export class SocketSubscriber implements Subscriber {
  private closing = false;

  constructor(
    readonly scope: LiveScope,
    private readonly ws: WebSocket,
    private readonly bufferBytes: number,
    private readonly gone: () => void,
  ) {
    ws.on('close', () => {
      this.closing = true;
      gone();
    });
  }

  deliver(frames: readonly OutFrame[]): void {
    if (this.closing) return;
    let ended = false;
    for (const frame of frames) {
      const buffered = this.ws.bufferedAmount;
      if (buffered > 0 && buffered + frame.bytes > this.bufferBytes) {
        this.close(
          LIVE_CLOSE.tooSlow,
          `reader too slow: ${buffered} bytes unread; reconnect and read missed events from /bc/v1/live-events/events`,
        );
        return;
      }
      this.ws.send(frame.text);
      if (frame.endsSession && this.scope.sessionId !== undefined) ended = true;
    }
    // After the whole batch: a Conversation Summary committed with the end still reaches the reader.
    if (ended) this.close(LIVE_CLOSE.normal, 'session ended');
  }

  close(code: number, reason: string): void {
    if (this.closing) return;
    this.closing = true;
    // Off the hub at once: a closing socket gets no more frames, so its memory stops growing now.
    this.gone();
    this.ws.close(code, reason.slice(0, 120));
    setTimeout(() => this.ws.terminate(), CLOSE_GRACE_MS).unref();
  }
}
