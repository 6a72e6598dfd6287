import WebSocket from 'ws';
import type { TestService } from './service.js';

/** A socket opened the way the hosted SDKs open it, with everything it received. */
export interface SdkSocket {
  ws: WebSocket;
  /** Every frame, parsed with JSON.parse as both SDKs do. */
  frames: Array<Record<string, unknown>>;
  closed: Promise<{ code: number; reason: string }>;
  /** Resolves once `n` frames (of any kind) arrived. */
  frameCount(n: number, timeoutMs?: number): Promise<void>;
}

/** `GET /bc/v1/live-events/realtime[?session_id=]` with the tenant's key: the socket's key. */
export async function realtimeKey(t: TestService, sessionId?: string, headers = t.headers): Promise<string> {
  const query = sessionId === undefined ? '' : `?session_id=${encodeURIComponent(sessionId)}`;
  const res = await t.get(`/bc/v1/live-events/realtime${query}`, headers);
  if (res.status !== 200) throw new Error(`realtime answered ${res.status}: ${JSON.stringify(res.json)}`);
  return (res.json as { authorization_key: string }).authorization_key;
}

/** Opens a socket and waits for it to be open; rejects with the refusal's status and body otherwise. */
export function openSocket(url: string, headers: Record<string, string> = {}): Promise<SdkSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers });
    const frames: Array<Record<string, unknown>> = [];
    const waiters: Array<() => void> = [];
    ws.on('message', (data) => {
      frames.push(JSON.parse(data.toString()) as Record<string, unknown>);
      for (const w of waiters.splice(0)) w();
    });
    const closed = new Promise<{ code: number; reason: string }>((done) => {
      ws.on('close', (code, reason) => {
        done({ code, reason: reason.toString() });
        for (const w of waiters.splice(0)) w();
      });
    });
    const frameCount = async (n: number, timeoutMs = 10_000) => {
      const deadline = Date.now() + timeoutMs;
      while (frames.length < n) {
        if (Date.now() > deadline) throw new Error(`${frames.length} of ${n} frames arrived`);
        if (ws.readyState === WebSocket.CLOSED)
          throw new Error(`closed after ${frames.length} of ${n} frames`);
        await new Promise<void>((wake) => {
          waiters.push(wake);
          setTimeout(wake, 200);
        });
      }
    };
    ws.once('open', () => resolve({ ws, frames, closed, frameCount }));
    ws.once('unexpected-response', (_req, res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => {
        text += chunk.toString();
      });
      res.on('end', () => reject(new SocketRefused(res.statusCode ?? 0, text)));
    });
    ws.once('error', (error) => reject(error));
  });
}

export class SocketRefused extends Error {
  constructor(
    readonly status: number,
    readonly body: string,
  ) {
    super(`socket refused: ${status} ${body}`);
  }
}

/** The socket address the JavaScript SDK derives from a base URL (http->ws, root path, :300x->:400x). */
export function sdkSocketUrl(baseUrl: string): string {
  return baseUrl.replace(/^http/, 'ws').replace('//app/', '//wss/').replace(':300', ':400');
}
