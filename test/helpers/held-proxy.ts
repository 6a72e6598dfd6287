import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ControlledProxy {
  url: string;
  /** Requests the upstream has answered (so their effects are committed there). */
  forwarded: number;
  close(): Promise<void>;
}

export interface ProxyBehaviour {
  /** Wait this long before passing an answer back: a service on a slow disk. */
  delayMs?: number;
  /** Only every n-th answer is delayed (default: every one). */
  slowEvery?: number;
  /** Delay at most this many answers (default: no limit). */
  slowAtMost?: number;
  /** From this forwarded request on, keep the upstream's answer and never reply: the ack is lost. */
  holdFrom?: number;
}

async function body(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** A real proxy in front of the real service that slows or swallows its answers on purpose. */
export async function startControlledProxy(
  upstream: string,
  behaviour: ProxyBehaviour,
): Promise<ControlledProxy> {
  const sockets = new Set<import('node:net').Socket>();
  const state = { forwarded: 0, slowed: 0 };
  const server: Server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    const payload = await body(req);
    const headers = Object.fromEntries(
      Object.entries(req.headers).filter(([k]) => !['host', 'content-length', 'connection'].includes(k)),
    ) as Record<string, string>;
    const answer = await fetch(`${upstream}${req.url ?? '/'}`, {
      method: req.method ?? 'GET',
      headers,
      ...(payload.length > 0 ? { body: payload } : {}),
    });
    const text = await answer.text();
    state.forwarded += 1;
    if (behaviour.holdFrom !== undefined && state.forwarded >= behaviour.holdFrom) return;
    if (
      behaviour.delayMs &&
      state.forwarded % (behaviour.slowEvery ?? 1) === 0 &&
      state.slowed < (behaviour.slowAtMost ?? Number.POSITIVE_INFINITY)
    ) {
      state.slowed += 1;
      await new Promise((resolve) => setTimeout(resolve, behaviour.delayMs));
    }
    res.writeHead(answer.status, {
      'content-type': answer.headers.get('content-type') ?? 'application/json',
    });
    res.end(text);
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    get forwarded() {
      return state.forwarded;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
