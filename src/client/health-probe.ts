import { request } from 'node:http';

/**
 * One `GET /healthz?challenge=…` to a server that has not yet proved who it is. Deliberately not the
 * API client: that one always sends the key and project headers, and this request must carry
 * nothing a stranger could use. The answer is read to 4 KiB at most, within one deadline.
 */

export type ProbeResult =
  | { kind: 'answered'; status: number; body: unknown }
  | { kind: 'unreachable'; reason: string }
  | { kind: 'timeout' };

const MAX_BYTES = 4096;

export function probeHealth(baseUrl: string, challenge: string, timeoutMs: number): Promise<ProbeResult> {
  return new Promise((resolve) => {
    let settled = false;
    const done = (result: ProbeResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req.destroy();
      resolve(result);
    };
    const url = new URL(`/healthz?challenge=${challenge}`, baseUrl);
    const req = request(
      url,
      { method: 'GET', agent: false, headers: { accept: 'application/json' } },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_BYTES)
            return done({ kind: 'answered', status: res.statusCode ?? 0, body: undefined });
          chunks.push(chunk);
        });
        res.on('end', () => {
          let body: unknown;
          try {
            body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
          } catch {
            body = undefined;
          }
          done({ kind: 'answered', status: res.statusCode ?? 0, body });
        });
        res.on('error', (error) => done({ kind: 'unreachable', reason: error.message }));
      },
    );
    const timer = setTimeout(() => done({ kind: 'timeout' }), timeoutMs);
    req.on('error', (error: NodeJS.ErrnoException) =>
      done({ kind: 'unreachable', reason: error.code ?? error.message }),
    );
    req.end();
  });
}
