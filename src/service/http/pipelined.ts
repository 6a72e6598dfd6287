import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/**
 * HTTP/1.1 pipelining: Node hands a connection's next request to the routes as soon as it is parsed,
 * while the one before is still being answered, and writes a parse error's answer at once. Found by
 * probing, with requests written back to back on one connection:
 * - an answer that closed the connection (fastify closes it after any body-parse refusal) left the
 *   next request to run and store its events, unanswered: a retry of an event without an id stored it
 *   twice;
 * - a malformed request after a valid one got its 400 written first, where the client reads the
 *   valid one's answer, though that one was stored.
 * So a connection's requests take turns: one runs once the answer before it is sent, and none runs
 * once an answer closed the connection (its client got no answer for it, and nothing of it was done);
 * a parse error's answer waits its turn too.
 */
interface Turns {
  busy: boolean;
  waiting: Array<() => void>;
  /** The request whose turn it is. */
  current: IncomingMessage | undefined;
  /** Node's parser failed on the connection: a request it left incomplete never completes. */
  broken: boolean;
}

const connections = new WeakMap<Socket, Turns>();

function turnsOf(socket: Socket): Turns {
  let turns = connections.get(socket);
  if (!turns) {
    turns = { busy: false, waiting: [], current: undefined, broken: false };
    connections.set(socket, turns);
  }
  return turns;
}

/** The connection's answers may go on: it is open and no answer closed it. */
const open = (socket: Socket): boolean => !socket.destroyed && !socket.writableEnded;

function next(turns: Turns): void {
  turns.busy = false;
  turns.waiting.shift()?.();
}

/**
 * Waits until the request's turn on its connection; false when an answer before it closed the
 * connection, and the request must not run.
 */
export async function takeTurn(req: IncomingMessage, res: ServerResponse): Promise<boolean> {
  const socket = req.socket;
  const turns = turnsOf(socket);
  if (turns.busy) await new Promise<void>((resolve) => turns.waiting.push(resolve));
  if (!open(socket) || (turns.broken && !req.complete)) {
    // Nothing of it will be answered: let the next turn see the same.
    next(turns);
    return false;
  }
  turns.busy = true;
  turns.current = req;
  let done = false;
  const release = () => {
    if (done) return;
    done = true;
    next(turns);
  };
  // Node ends a connection its answer closes in its own 'finish' listener, added before this one.
  res.once('finish', release);
  res.once('close', release);
  return true;
}

/**
 * Runs `answer` (a parse error's, which ends the connection) once the answers owed to requests
 * received whole before it are sent, so it is never read as theirs.
 */
export function afterOwedAnswers(socket: Socket, answer: () => void): void {
  const turns = connections.get(socket);
  // A request still being received is the one the error is about (a body cut short, say): answered now.
  if (!turns?.busy || turns.current?.complete !== true) {
    answer();
    return;
  }
  // Node's parser stays failed and reports every later chunk again: one answer is queued.
  if (turns.broken) return;
  turns.broken = true;
  turns.waiting.push(() => {
    if (open(socket)) answer();
    else socket.destroy();
    next(turns);
  });
}
