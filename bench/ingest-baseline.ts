import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { type DuckDBConnection, DuckDBInstance, DuckDBTimestampTZValue } from '@duckdb/node-api';
import { appendColumns } from '../src/service/store/append.js';
import { CHECKPOINT_THRESHOLD } from '../src/service/store/database.js';
import { storedEventName, wireEventSchema } from '../src/shared/events.js';
import { laneEvents } from './ingest-workload.js';

/** The events table's shape, as migration 1 creates it. */
const EVENTS_DDL = `CREATE TABLE events (project_id VARCHAR NOT NULL, event_id VARCHAR NOT NULL, event VARCHAR NOT NULL,
  type VARCHAR NOT NULL, ts TIMESTAMPTZ NOT NULL, user_id VARCHAR, session_id VARCHAR, conversation_id VARCHAR,
  properties JSON, origin_event_id VARCHAR, received_at TIMESTAMPTZ NOT NULL, device_id VARCHAR)`;

interface Row {
  id: string;
  event: string;
  type: string;
  ts: bigint;
  /** The same instant in epoch ms: what the service's append takes. */
  ms: number;
  user: string | null;
  session: string | null;
  properties: string | null;
}

/** The workload's events as events-table rows, built before timing (what the appender gets for free). */
export function baselineRows(lanes: number, eventsPerLane: number, open: number): Row[] {
  const rows: Row[] = [];
  for (let lane = 0; lane < lanes; lane++) {
    for (const raw of laneEvents(lane, eventsPerLane, open)) {
      const e = wireEventSchema.parse(raw);
      const props =
        'properties' in e
          ? e.properties
          : 'attributes' in e
            ? e.attributes
            : 'traits' in e
              ? e.traits
              : undefined;
      rows.push({
        id: e.event_id ?? '',
        event: storedEventName(e),
        type: e.type,
        ts: BigInt(Date.parse(e.timestamp ?? '')) * 1000n,
        ms: Date.parse(e.timestamp ?? ''),
        user: e.user_id ?? e.device_id ?? null,
        session: e.session_id ?? null,
        properties: props === undefined ? null : JSON.stringify(props),
      });
    }
  }
  return rows;
}

/**
 * A bare appender into an events-shaped table in a fresh database file, committing every
 * `commitEvery` rows (the queue's unit of durability) or once at the end (`Infinity`). `values`
 * appends value by value, the appender's classic use; `chunks` hands it whole data chunks built
 * column by column, the service's own path (append.ts), timed with the building of the columns.
 */
export async function bareAppenderRate(
  dir: string,
  rows: readonly Row[],
  commitEvery: number,
  mode: 'values' | 'chunks' = 'values',
): Promise<number> {
  const path = join(dir, `baseline-${mode}-${Number.isFinite(commitEvery) ? commitEvery : 'once'}.duckdb`);
  rmSync(path, { force: true });
  const instance = await DuckDBInstance.create(path);
  const connection = await instance.connect();
  await connection.run(EVENTS_DDL);
  // The service's setting (store/database.ts), so both sides checkpoint alike.
  await connection.run(`SET checkpoint_threshold = '${CHECKPOINT_THRESHOLD}'`);
  const receivedMs = Date.now();
  const received = new DuckDBTimestampTZValue(BigInt(receivedMs) * 1000n);
  const step = Number.isFinite(commitEvery) ? commitEvery : rows.length;
  const started = performance.now();
  for (let from = 0; from < rows.length; from += step) {
    const to = Math.min(rows.length, from + step);
    await connection.run('BEGIN TRANSACTION');
    if (mode === 'chunks') await appendChunks(connection, rows.slice(from, to), receivedMs);
    else await appendValues(connection, rows, from, to, received);
    await connection.run('COMMIT');
  }
  const seconds = (performance.now() - started) / 1000;
  connection.closeSync();
  instance.closeSync();
  return rows.length / seconds;
}

async function appendValues(
  connection: DuckDBConnection,
  rows: readonly Row[],
  from: number,
  to: number,
  received: DuckDBTimestampTZValue,
): Promise<void> {
  const appender = await connection.createAppender('events');
  for (let i = from; i < to; i++) {
    const r = rows[i]!;
    appender.appendVarchar('bench');
    appender.appendVarchar(r.id);
    appender.appendVarchar(r.event);
    appender.appendVarchar(r.type);
    appender.appendTimestampTZ(new DuckDBTimestampTZValue(r.ts));
    if (r.user === null) appender.appendNull();
    else appender.appendVarchar(r.user);
    if (r.session === null) appender.appendNull();
    else appender.appendVarchar(r.session);
    appender.appendNull();
    if (r.properties === null) appender.appendNull();
    else appender.appendVarchar(r.properties);
    appender.appendNull();
    appender.appendTimestampTZ(received);
    appender.appendNull();
    appender.endRow();
  }
  appender.closeSync();
}

function appendChunks(connection: DuckDBConnection, rows: readonly Row[], receivedMs: number): Promise<void> {
  return appendColumns({ use: (fn) => fn(connection) }, 'events', [
    rows.map(() => 'bench'),
    rows.map((r) => r.id),
    rows.map((r) => r.event),
    rows.map((r) => r.type),
    rows.map((r) => r.ms),
    rows.map((r) => r.user),
    rows.map((r) => r.session),
    rows.map(() => null),
    rows.map((r) => r.properties),
    rows.map(() => null),
    rows.map(() => receivedMs),
    rows.map(() => null),
  ]);
}
