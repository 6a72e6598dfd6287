import type { UserDetailsAnswer, UserList } from '../shared/users-api.js';
import { type ListingOptions, renderListing } from './listing.js';
import { keyValueTable, type OutputFormat } from './output.js';

/** `cas users list` (one row per user, traits as `key=value`; in CSV, traits and aliases as JSON) and `cas users show` (record + sessions). */

function traitsText(traits: Record<string, string | number | boolean>): string {
  return Object.entries(traits)
    .map(([k, v]) => `${k}=${String(v)}`)
    .join(', ');
}

export function renderUserList(list: UserList, format: OutputFormat, options: ListingOptions): string {
  const shown = list.users.length;
  return renderListing(
    list,
    {
      columns: ['id', 'user_id', 'created_at', 'aliases', 'traits'],
      rows: list.users.map((u) => [
        u.id,
        u.user_id,
        u.created_at,
        // CSV gives each value whole: in `b=a, c=d` a trait holding ", c=d" read as two traits, and
        // the number 5 as the text "5" (found by probing); JSON keeps both apart.
        format === 'csv' ? JSON.stringify(u.aliases) : u.aliases.join(', '),
        format === 'csv' ? JSON.stringify(u.traits) : traitsText(u.traits),
      ]),
      // A page past the end (or --limit 0) of a store that has users: "no users" read as none at all.
      empty: list.total > 0 ? `none of the ${list.total} users on this page (--limit, --offset)` : 'no users',
      records: list.users,
      note:
        shown < list.total
          ? `${shown} of ${list.total} users (--limit, --offset for more)`
          : `${list.total} ${list.total === 1 ? 'user' : 'users'}`,
    },
    format,
    options,
  );
}

const sessionCount = (n: number): string => `${n} session${n === 1 ? '' : 's'}`;

const seconds = (ms: number) => `${Math.round(ms / 100) / 10} s`;

export function renderUserShow(
  user: UserDetailsAnswer,
  format: OutputFormat,
  options: ListingOptions,
  /** The person has sessions beyond these: the table says so. */
  more = false,
): string {
  const shown = user.sessions.length;
  const sessions = {
    columns: ['session_id', 'started_at', 'ended_at', 'duration', 'events'],
    rows: user.sessions.map((s) => [
      s.session_id,
      s.started_at,
      s.ended_at,
      // CSV gives every value whole, as --json does (ms): it gave the table's rounded "229.3 s".
      // The hosted service may leave a session's duration out.
      s.duration === undefined ? null : format === 'table' ? seconds(s.duration) : s.duration,
      s.events.length,
    ]),
    empty: more ? 'sessions not shown; there are some (--sessions <n>)' : 'no sessions',
    records: user.sessions,
    note: more
      ? `the first ${sessionCount(shown)}, oldest first; there are more (--sessions <n>)`
      : sessionCount(shown),
  };
  if (format !== 'table') {
    // CSV / JSONL: one row per session (the record's own fields are in --json). JSON says whether
    // sessions were left out, as the table does: a script could not tell (found by probing).
    return renderListing({ ...user, sessions_truncated: more }, sessions, format, options);
  }
  const { sessions: _sessions, ...record } = user;
  return `${keyValueTable(record, options)}${renderListing(user, sessions, format, options)}`;
}
