import type { FastifyReply, FastifyRequest } from 'fastify';
import { BodyBudget } from './body-budget.js';

/** Smaller answers are not counted: a socket's kernel buffers take them whole at once. */
const SMALL_ANSWER_BYTES = 64 * 1024;

/**
 * Bytes of answers the service holds for clients that have not read them yet. A client that never
 * reads keeps its answer in the process until its connection closes: 40-100 of them asking for a
 * 16 MiB live-events answer took the service from 360 MB to 780-900 MB (found by probing). An answer
 * is charged from the moment it is sent until its last byte has left for the kernel ('finish') or
 * its connection closes; past the budget (one address at most half of it) the request is answered
 * 503 with Retry-After instead, and an address holding nothing is always let through, so a budget
 * below one answer slows large answers down instead of refusing them forever.
 */
export class AnswerBudget {
  private readonly budget: BodyBudget;

  constructor(bytes: number) {
    this.budget = new BodyBudget(bytes, 'answers its clients have not read yet');
  }

  /** Charges `payload` to the request's address until it is written out; throws the 503 beyond the budget. */
  hold(request: FastifyRequest, reply: FastifyReply, payload: unknown): void {
    // A UTF-16 unit is at most 3 bytes: most answers (the queue's) are told small without counting.
    const bytes =
      typeof payload === 'string'
        ? payload.length * 3 < SMALL_ANSWER_BYTES
          ? 0
          : Buffer.byteLength(payload)
        : Buffer.isBuffer(payload)
          ? payload.length
          : 0;
    if (bytes < SMALL_ANSWER_BYTES) return;
    const reservation = this.budget.reserve(bytes, request.ip);
    reply.raw.once('finish', reservation.release);
    reply.raw.once('close', reservation.release);
  }

  get inFlight(): number {
    return this.budget.inFlight;
  }
}
