import type { Client } from '../client/http-client.js';
import { getUser, listUsers } from '../client/routes.js';
import type { UserDetailsAnswer, UserList } from '../shared/users-api.js';
import { UsageError } from './errors.js';
import { namingFlags } from './flag-refusals.js';

/**
 * `cas users list [--like <re>] [--limit n] [--offset n]` and `cas users show <id>`: the project's
 * people (`/user/list`, `/user/details`). `<id>` is the caller's id (current or alias) or the
 * service's `u_…` id.
 */

export interface UsersListOptions {
  like?: string | undefined;
  limit?: string | undefined;
  offset?: string | undefined;
}

export function wholeNumber(value: string | undefined, flag: string, fallback: number, max: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(n) || n > max) {
    throw new UsageError(`${flag} must be a whole number up to ${max}, got "${value}"`);
  }
  return n;
}

export async function runUsersList(options: UsersListOptions, deps: { client: Client }): Promise<UserList> {
  const limit = wholeNumber(options.limit, '--limit', 100, 100_000);
  const offset = wholeNumber(options.offset, '--offset', 0, 10_000_000);
  const query = { limit, offset, ...(options.like !== undefined ? { regex: options.like } : {}) };
  return namingFlags(
    () => listUsers(deps.client, query),
    (path) => (path === 'regex' ? `--like "${options.like}"` : undefined),
  );
}

export interface UserShowOptions {
  id: string;
  /** Sessions to include (the service lists them oldest first). */
  sessions?: string | undefined;
}

const MAX_SESSIONS = 100_000;

export interface UserShown {
  user: UserDetailsAnswer;
  /** The person has sessions beyond the ones shown (--sessions). */
  more: boolean;
}

export async function runUserShow(options: UserShowOptions, deps: { client: Client }): Promise<UserShown> {
  if (options.id.trim() === '')
    throw new UsageError('cas users show needs a user id', 'e.g. cas users show u1');
  const limit = wholeNumber(options.sessions, '--sessions', 20, MAX_SESSIONS);
  // One session more than shown tells whether there are more, without a count the route lacks.
  const asked = Math.min(limit + 1, MAX_SESSIONS);
  const user = await getUser(deps.client, options.id, { limit: asked });
  const more = user.sessions.length > limit;
  return { user: more ? { ...user, sessions: user.sessions.slice(0, limit) } : user, more };
}
