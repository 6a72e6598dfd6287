import { type IncomingMessage, type Server, ServerResponse, STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer } from 'ws';
import type { ErrorBody, ErrorCode } from '../../shared/errors.js';
import { LIMITS } from '../../shared/limits.js';
import { LIVE_CLOSE, LIVE_PING_MS, LIVE_SOCKET_PATH, REALTIME_PATH } from '../../shared/live-events.js';
import { namedOtherTenant } from '../http/auth.js';
import type { LiveHub } from './hub.js';
import { QueueBudget, SocketSubscriber } from './subscriber.js';
import type { LiveScope, LiveTokens } from './token.js';

export interface LiveSocketOptions {
  hub: LiveHub;
  tokens: LiveTokens;
  /** Bytes of frames a socket may have waiting before it is closed (1013). */
  bufferBytes: number;
  /** Bytes waiting for all sockets together. */
  queuedBytes: number;
  /** Open sockets one organization may hold. */
  socketsPerOrganization: number;
  /** Whether the API key a token was issued to (LiveScope.keyTag) is still held by its organization. */
  keyActive: (scope: LiveScope) => boolean;
  /** Whether a project's session has ended already: its socket has nothing more to wait for. */
  sessionEnded: (projectId: string, sessionId: string) => Promise<boolean>;
  log: (line: string) => void;
}

/** RFC 6455 §4.2.1: a base64 nonce of 16 bytes. */
const SEC_KEY = /^[A-Za-z0-9+/]{22}==$/;
/** How long stopping waits for readers to take their close frame (then their sockets are cut). */
const CLOSE_WAIT_MS = 500;
const NO_KEY = `missing authorization key: send "Authorization: Bearer <authorization_key>" (or ?authorization_key=) from GET ${REALTIME_PATH}`;
const BAD_KEY = `the authorization key is invalid, expired or not for this scope; get a fresh one from GET ${REALTIME_PATH}`;

class Refusal extends Error {
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

/** Our error body on a socket that never became a websocket; nothing is read from it afterwards. */
function refuse(socket: Duplex, r: Refusal): void {
  const body: ErrorBody = { status: r.status, code: r.code, message: r.message };
  const text = JSON.stringify(body);
  const extra = Object.entries(r.headers).map(([k, v]) => `${k}: ${v}\r\n`);
  if (socket.writable) {
    socket.end(
      `HTTP/1.1 ${r.status} ${STATUS_CODES[r.status] ?? ''}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(text)}\r\n${extra.join('')}Connection: close\r\n\r\n${text}`,
    );
  }
  setTimeout(() => socket.destroy(), 1_000).unref();
}

function header(req: IncomingMessage, name: string): string {
  const value = req.headers[name];
  return (Array.isArray(value) ? value[0] : value)?.trim() ?? '';
}

/** The socket's scope from its key and query, or a refusal that says no more than "not this key". */
function scopeOf(
  req: IncomingMessage,
  url: URL,
  tokens: LiveTokens,
  keyActive: (scope: LiveScope) => boolean,
): LiveScope {
  const bearer = header(req, 'authorization').replace(/^bearer(\s+|$)/i, '');
  const key = bearer !== '' ? bearer : (url.searchParams.get('authorization_key') ?? '');
  if (key === '') throw new Refusal(401, 'unauthorized', NO_KEY);
  const scope = tokens.verify(key);
  if (!scope || !keyActive(scope)) {
    throw new Refusal(401, 'unauthorized', BAD_KEY);
  }
  // A client naming its project (the hosted SDKs' X-App-ID) must name the key's own.
  const project = header(req, 'x-app-id');
  if (project !== '' && project !== scope.projectId) throw new Refusal(401, 'unauthorized', BAD_KEY);
  // As every HTTP route answers them (README): the socket opened anyway (found by probing).
  const other = namedOtherTenant(
    {
      app_id: url.searchParams.getAll('app_id'),
      organization_id: url.searchParams.getAll('organization_id'),
    },
    scope,
  );
  if (other !== undefined) throw new Refusal(403, 'forbidden', other);
  // As the HTTP routes refuse them: an empty session_id opened a socket on the whole project, and a
  // second one was ignored (found by probing).
  const sessions = url.searchParams.getAll('session_id');
  if (sessions.length > 1)
    throw new Refusal(400, 'invalid_input', `session_id: given ${sessions.length} times; give it once`);
  const [session] = sessions;
  if (session === undefined) return scope;
  if (session === '') throw new Refusal(400, 'invalid_input', 'session_id: must not be empty');
  if (session.length > LIMITS.idLength) {
    throw new Refusal(400, 'invalid_input', `session_id: must be at most ${LIMITS.idLength} characters`);
  }
  if (scope.sessionId !== undefined && scope.sessionId !== session) {
    throw new Refusal(401, 'unauthorized', BAD_KEY);
  }
  return { ...scope, sessionId: session };
}

/** A handshake ws would refuse with its own plain-text body gets ours instead. */
function checkHandshake(req: IncomingMessage, path: string): void {
  if (path !== '/' && path !== LIVE_SOCKET_PATH) {
    throw new Refusal(404, 'not_found', `no websocket at ${path}; use / or ${LIVE_SOCKET_PATH}`);
  }
  if (req.method !== 'GET') {
    throw new Refusal(405, 'method_not_allowed', `${req.method} is not allowed on ${path}`, { Allow: 'GET' });
  }
  if (!SEC_KEY.test(header(req, 'sec-websocket-key'))) {
    throw new Refusal(400, 'invalid_input', 'Sec-WebSocket-Key: missing or not a base64 nonce of 16 bytes');
  }
  if (header(req, 'sec-websocket-version') !== '13') {
    throw new Refusal(426, 'invalid_input', 'Sec-WebSocket-Version: only 13 is supported', {
      'Sec-WebSocket-Version': '13',
    });
  }
}

/** A request with an Upgrade header other than websocket (`curl --http2`'s h2c) is served as plain HTTP. */
function serveAsHttp(server: Server, req: IncomingMessage, socket: Duplex): void {
  const length = Number(header(req, 'content-length') || '0');
  if (header(req, 'transfer-encoding') !== '' || length > 0) {
    refuse(socket, new Refusal(400, 'invalid_input', `Upgrade: ${header(req, 'upgrade')} is not supported`));
    return;
  }
  const res = new ServerResponse(req);
  res.shouldKeepAlive = false;
  res.assignSocket(socket as never);
  res.on('finish', () => socket.end());
  server.emit('request', req, res);
}

export interface LiveSockets {
  /** Accepts live-event sockets on a server; `http` says whether other upgrades reach its routes. */
  attach(server: Server, http: boolean): void;
  /** Closes every socket (1001; cut after a moment if the reader does not answer): the service is stopping. */
  close(): Promise<void>;
}

/**
 * The websocket side of live events (issue 17): an upgrade to `/` or `/bc/v1/live-events/ws` with an
 * `authorization_key` from `GET /bc/v1/live-events/realtime` becomes a subscriber of the hub. Every
 * refusal is our error body, sent before anything of the socket is used; nothing is said about a
 * key beyond "not valid here".
 */
export function liveSockets(options: LiveSocketOptions): LiveSockets {
  // Clients send nothing the service reads: a tiny payload limit makes sending a way to be closed.
  const wss = new WebSocketServer({ noServer: true, maxPayload: 1024, perMessageDeflate: false });
  const alive = new WeakMap<object, boolean>();
  const budget = new QueueBudget(options.queuedBytes);
  const ping = setInterval(() => {
    for (const ws of wss.clients) {
      if (alive.get(ws) === false) ws.terminate();
      else {
        alive.set(ws, false);
        ws.ping();
      }
    }
  }, LIVE_PING_MS);
  ping.unref();

  const upgrade = (server: Server, http: boolean) => (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => socket.destroy());
    try {
      if (header(req, 'upgrade').toLowerCase() !== 'websocket') {
        if (http) return serveAsHttp(server, req, socket);
        throw new Refusal(400, 'invalid_input', 'this port serves only websocket upgrades');
      }
      let url: URL;
      try {
        url = new URL(req.url ?? '/', 'http://localhost');
      } catch {
        throw new Refusal(400, 'invalid_input', 'the request target is not a valid URL');
      }
      const path = url.pathname.length > 1 ? url.pathname.replace(/\/+$/, '') : url.pathname;
      checkHandshake(req, path);
      const scope = scopeOf(req, url, options.tokens, options.keyActive);
      if (options.hub.size(scope.orgId) >= options.socketsPerOrganization) {
        throw new Refusal(
          429,
          'rate_limited',
          `${options.socketsPerOrganization} live-event sockets of this organization are open, the limit`,
          { 'Retry-After': '5' },
        );
      }
      wss.handleUpgrade(req, socket, head, (ws) => {
        alive.set(ws, true);
        ws.on('pong', () => alive.set(ws, true));
        ws.on('error', () => ws.terminate());
        // Anything a client sends is ignored (frames over maxPayload close the socket, 1009).
        ws.on('message', () => undefined);
        let remove: () => void = () => undefined;
        const subscriber = new SocketSubscriber(scope, ws, options.bufferBytes, budget, () => remove());
        remove = options.hub.add(subscriber);
        // A session's socket closes after its Session Ended (decisions §7); one opened after that
        // end would otherwise wait for nothing, forever. Asked once it is subscribed, so an end
        // committed meanwhile reaches it either way.
        const session = scope.sessionId;
        if (session !== undefined) {
          options.sessionEnded(scope.projectId, session).then(
            (ended) => {
              if (ended) subscriber.close(LIVE_CLOSE.normal, 'session ended');
            },
            (error: unknown) =>
              options.log(
                `live events: could not tell whether session ${JSON.stringify(session)} ended (${error instanceof Error ? error.message : String(error)})`,
              ),
          );
        }
      });
    } catch (error) {
      if (error instanceof Refusal) refuse(socket, error);
      else {
        options.log(`live events: upgrade failed: ${error instanceof Error ? error.message : String(error)}`);
        refuse(socket, new Refusal(500, 'internal', 'internal error; the service logged it'));
      }
    }
  };

  return {
    attach(server, http) {
      server.on('upgrade', upgrade(server, http));
    },
    async close() {
      clearInterval(ping);
      options.hub.closeAll(LIVE_CLOSE.goingAway, 'the service is stopping');
      const open = [...wss.clients];
      const closed = open.map((ws) => new Promise((resolve) => ws.once('close', resolve)));
      await Promise.race([Promise.all(closed), new Promise((resolve) => setTimeout(resolve, CLOSE_WAIT_MS))]);
      for (const ws of wss.clients) ws.terminate();
      wss.close();
    },
  };
}
