import type { DuckDBValue } from '@duckdb/node-api';
import type { Queryable } from '../../src/service/store/database.js';

/**
 * Writes rows straight into the storage tables (migration 1's columns), for chart tests that need
 * exact data without going through ingestion. Each table gets one multi-row INSERT with bound values.
 */

export type Json = string | number | boolean | null | Json[] | { [key: string]: Json };

export interface SeedUser {
  user_id: string;
  /** The user this one was merged into; itself when absent. */
  canonical_user_id?: string;
  primary_id?: string;
  anonymous?: boolean;
  traits?: Record<string, Json>;
  created_at?: string;
}

export interface SeedSession {
  session_id: string;
  user_id: string;
  started_at: string;
  ended_at?: string | null;
  /** Defaults to started_at. */
  last_event_at?: string;
}

export interface SeedConversation {
  conversation_id: string;
  session_id: string;
  started_at?: string;
}

export interface SeedEvent {
  event: string;
  ts: string;
  user_id?: string | null;
  session_id?: string | null;
  conversation_id?: string | null;
  properties?: Record<string, Json> | null;
}

export interface SeedData {
  users?: SeedUser[];
  sessions?: SeedSession[];
  conversations?: SeedConversation[];
  events?: SeedEvent[];
}

async function insert(
  tx: Queryable,
  table: string,
  placeholders: string,
  rows: ReadonlyArray<DuckDBValue[]>,
): Promise<void> {
  if (rows.length === 0) return;
  const width = rows[0]!.length;
  const values: DuckDBValue[] = [];
  const tuples = rows.map((row, r) => {
    values.push(...row);
    // `placeholders` uses ?1..?n for one row; renumber them for row r.
    return placeholders.replace(/\?(\d+)/g, (_, n: string) => `$${r * width + Number(n)}`);
  });
  await tx.run(`INSERT INTO ${table} VALUES ${tuples.join(', ')}`, values);
}

const EPOCH = '2000-01-01T00:00:00Z';

export async function seedRows(tx: Queryable, project: string, data: SeedData): Promise<void> {
  await insert(
    tx,
    'users',
    '(?1, ?2, ?3, ?4, ?5, ?6::JSON, ?7::TIMESTAMPTZ, NULL, NULL)',
    (data.users ?? []).map((u) => [
      project,
      u.user_id,
      u.canonical_user_id ?? u.user_id,
      u.primary_id ?? u.user_id,
      u.anonymous ?? false,
      JSON.stringify(u.traits ?? {}),
      u.created_at ?? EPOCH,
    ]),
  );
  await insert(
    tx,
    'sessions',
    '(?1, ?2, ?3, NULL, ?4::TIMESTAMPTZ, ?5::TIMESTAMPTZ, ?6::TIMESTAMPTZ, NULL, NULL, NULL)',
    (data.sessions ?? []).map((s) => [
      project,
      s.session_id,
      s.user_id,
      s.started_at,
      s.ended_at ?? null,
      s.last_event_at ?? s.started_at,
    ]),
  );
  await insert(
    tx,
    'conversations',
    '(?1, ?2, ?3, ?4::TIMESTAMPTZ, NULL, NULL)',
    (data.conversations ?? []).map((c) => [project, c.conversation_id, c.session_id, c.started_at ?? EPOCH]),
  );
  await insert(
    tx,
    'events',
    "(?1, ?2, ?3, 'track', ?4::TIMESTAMPTZ, ?5, ?6, ?7, ?8::JSON, NULL, ?4::TIMESTAMPTZ, NULL, NULL)",
    (data.events ?? []).map((e, i) => [
      project,
      `ev-${i}`,
      e.event,
      e.ts,
      e.user_id ?? null,
      e.session_id ?? null,
      e.conversation_id ?? null,
      e.properties === undefined || e.properties === null ? null : JSON.stringify(e.properties),
    ]),
  );
}

/** Seeds inside one transaction of the service's writer, so a chart read sees all or nothing. */
export function seed(
  db: { write<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> },
  project: string,
  data: SeedData,
): Promise<void> {
  return db.write((tx) => seedRows(tx, project, data));
}
