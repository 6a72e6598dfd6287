import { connect, type Socket } from 'node:net';

/** What a raw connection saw: the bytes the server sent, and when and how it ended. */
export interface RawOutcome {
  text: string;
  /** The HTTP status of the first response, or undefined when none arrived. */
  status: number | undefined;
  /** Milliseconds from connecting until the server ended its side (FIN) or the socket closed. */
  endedAfterMs: number;
  /** When it ended (`Date.now()`), to compare connections opened at different moments. */
  endedAt: number;
  /** The server half-closed (FIN) before we closed: it stopped the conversation, not us. */
  serverEnded: boolean;
}

export interface RawConnection {
  socket: Socket;
  /** Writes and waits for the kernel to take the bytes; false once the server is gone. */
  write(data: string | Buffer): Promise<boolean>;
  /** Resolves when the server ends its side or the socket closes, whichever comes first. */
  ended: Promise<RawOutcome>;
  /** The server has ended its side or the socket is closed. */
  isEnded(): boolean;
}

/**
 * A plain TCP connection to an HTTP server, to misbehave the ways real clients can: headers or a
 * body trickled, a body that never finishes, bytes sent after the answer. `localAddress` picks the
 * client address (127.0.0.2 and the rest of 127/8 are loopback on Linux).
 */
export function openRaw(url: string, localAddress?: string): Promise<RawConnection> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const socket = connect({ host: hostname, port: Number(port), ...(localAddress ? { localAddress } : {}) });
    let text = '';
    let done = false;
    let settle: (outcome: RawOutcome) => void = () => undefined;
    const ended = new Promise<RawOutcome>((r) => {
      settle = r;
    });
    const finish = (serverEnded: boolean) => {
      if (done) return;
      done = true;
      const match = /^HTTP\/1\.1 (\d{3})/.exec(text);
      const now = Date.now();
      settle({
        text,
        status: match ? Number(match[1]) : undefined,
        endedAfterMs: now - started,
        endedAt: now,
        serverEnded,
      });
    };
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (text += chunk));
    socket.on('end', () => finish(true));
    socket.on('close', () => finish(true));
    socket.on('error', () => finish(true));
    socket.once('connect', () => {
      socket.off('error', reject);
      resolve({
        socket,
        isEnded: () => done,
        ended,
        write: (data) =>
          new Promise((r) => {
            if (done || socket.destroyed) return r(false);
            socket.write(data, (error) => r(!error));
          }),
      });
    });
    socket.once('error', reject);
  });
}

/** Resolves with `promise`, or with `fallback` once `ms` have passed. */
export function within<T, F>(promise: Promise<T>, ms: number, fallback: F): Promise<T | F> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(fallback), ms);
    promise.then((value) => {
      clearTimeout(timer);
      resolve(value);
    });
  });
}

/** Open file descriptors and resident memory of a process (Linux /proc). */
export async function processUsage(pid: number): Promise<{ fds: number; rssMiB: number }> {
  const { readdirSync, readFileSync } = await import('node:fs');
  const fds = readdirSync(`/proc/${pid}/fd`).length;
  const rss = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return { fds, rssMiB: Math.round(Number(rss?.[1] ?? 0) / 1024) };
}
