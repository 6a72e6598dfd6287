import { StoreTooNewError } from '../lock-error.js';
import type { Queryable } from './database.js';

/**
 * Versioned, append-only schema migrations. Never edit a shipped migration: add the next one.
 * Timestamps are TIMESTAMPTZ (UTC instants, ms precision in practice); JSON columns hold
 * properties/traits with their types intact, which property filters need.
 */
export type Migration = { version: number; name: string; sql: string };

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'tenancy, identity, sessions, events',
    sql: `
      CREATE TABLE organizations (org_id VARCHAR PRIMARY KEY, name VARCHAR NOT NULL, created_at TIMESTAMPTZ NOT NULL);
      CREATE TABLE projects (project_id VARCHAR PRIMARY KEY, org_id VARCHAR NOT NULL, name VARCHAR NOT NULL,
        intents JSON, created_at TIMESTAMPTZ NOT NULL);
      CREATE TABLE api_keys (key_hash VARCHAR PRIMARY KEY, org_id VARCHAR NOT NULL, label VARCHAR,
        created_at TIMESTAMPTZ NOT NULL);

      -- canonical_user_id: the user this one was merged into (itself when not merged). Charts resolve
      -- every event's user through it, so a merge is one small UPDATE, never a rewrite of events.
      CREATE TABLE users (project_id VARCHAR NOT NULL, user_id VARCHAR NOT NULL, canonical_user_id VARCHAR NOT NULL,
        primary_id VARCHAR NOT NULL, anonymous BOOLEAN NOT NULL, traits JSON NOT NULL, created_at TIMESTAMPTZ NOT NULL,
        PRIMARY KEY (project_id, user_id));
      -- Every caller id a user has had, in order of first use (aliases).
      CREATE TABLE user_ids (project_id VARCHAR NOT NULL, id VARCHAR NOT NULL, user_id VARCHAR NOT NULL,
        seq BIGINT NOT NULL, PRIMARY KEY (project_id, id));
      CREATE SEQUENCE user_id_seq;
      CREATE TABLE devices (project_id VARCHAR NOT NULL, device_id VARCHAR NOT NULL, user_id VARCHAR NOT NULL,
        traits JSON, PRIMARY KEY (project_id, device_id));

      CREATE TABLE sessions (project_id VARCHAR NOT NULL, session_id VARCHAR NOT NULL, user_id VARCHAR NOT NULL,
        device_id VARCHAR, started_at TIMESTAMPTZ NOT NULL, ended_at TIMESTAMPTZ, last_event_at TIMESTAMPTZ NOT NULL,
        attributes JSON, PRIMARY KEY (project_id, session_id));
      CREATE TABLE conversations (project_id VARCHAR NOT NULL, conversation_id VARCHAR NOT NULL,
        session_id VARCHAR NOT NULL, started_at TIMESTAMPTZ NOT NULL, ended_at TIMESTAMPTZ, properties JSON,
        PRIMARY KEY (project_id, conversation_id));

      -- Every stored row, caller-sent and generated. user_id is the service user at ingest time;
      -- resolve through users.canonical_user_id for the person.
      CREATE TABLE events (project_id VARCHAR NOT NULL, event_id VARCHAR NOT NULL, event VARCHAR NOT NULL,
        type VARCHAR NOT NULL, ts TIMESTAMPTZ NOT NULL, user_id VARCHAR, session_id VARCHAR, conversation_id VARCHAR,
        properties JSON, origin_event_id VARCHAR, received_at TIMESTAMPTZ NOT NULL);
    `,
  },
  {
    // The single serialized writer and its project cache already guarantee one row per key (the
    // planner never appends a key the filters or memory know), so these indexes only cost: each
    // append paid an ART insert and constraint check (measured: ~7 µs a row, 8x an events row) and each
    // checkpoint rewrote them, which is why the WAL threshold had to be huge. DuckDB cannot drop a
    // primary key in place, so each table is rebuilt.
    version: 2,
    name: 'no primary-key indexes on identity and state tables',
    sql: [
      `users (project_id VARCHAR NOT NULL, user_id VARCHAR NOT NULL, canonical_user_id VARCHAR NOT NULL,
        primary_id VARCHAR NOT NULL, anonymous BOOLEAN NOT NULL, traits JSON NOT NULL, created_at TIMESTAMPTZ NOT NULL)`,
      `user_ids (project_id VARCHAR NOT NULL, id VARCHAR NOT NULL, user_id VARCHAR NOT NULL, seq BIGINT NOT NULL)`,
      `devices (project_id VARCHAR NOT NULL, device_id VARCHAR NOT NULL, user_id VARCHAR NOT NULL, traits JSON)`,
      `sessions (project_id VARCHAR NOT NULL, session_id VARCHAR NOT NULL, user_id VARCHAR NOT NULL,
        device_id VARCHAR, started_at TIMESTAMPTZ NOT NULL, ended_at TIMESTAMPTZ, last_event_at TIMESTAMPTZ NOT NULL,
        attributes JSON)`,
      `conversations (project_id VARCHAR NOT NULL, conversation_id VARCHAR NOT NULL,
        session_id VARCHAR NOT NULL, started_at TIMESTAMPTZ NOT NULL, ended_at TIMESTAMPTZ, properties JSON)`,
    ]
      .map((definition) => {
        const table = definition.slice(0, definition.indexOf(' '));
        return `
      CREATE TABLE ${table}_v2 ${definition.slice(table.length)};
      INSERT INTO ${table}_v2 SELECT * FROM ${table};
      DROP TABLE ${table};
      ALTER TABLE ${table}_v2 RENAME TO ${table};`;
      })
      .join(''),
  },
  {
    // Drilldown ids name their chart's query by hash (charts/drilldown-store.ts), so a response no
    // longer repeats the whole chartControls in every point; the queries live here, per project.
    version: 3,
    name: 'drilldown queries',
    sql: `CREATE TABLE drilldown_queries (project_id VARCHAR NOT NULL, query_hash VARCHAR NOT NULL,
      query JSON NOT NULL, created_at TIMESTAMPTZ NOT NULL);`,
  },
  {
    // Import extensions (decisions §4): an end the importer added is provisional (provisional_end is
    // the id of its Session Ended row, null for open or finally ended sessions), and a session derived
    // from activity records whose activity it is (derived_key), so later runs can reopen or join it.
    version: 4,
    name: 'provisional session ends and derived-session keys',
    sql: `ALTER TABLE sessions ADD COLUMN provisional_end VARCHAR;
      ALTER TABLE sessions ADD COLUMN derived_key VARCHAR;`,
  },
  {
    // Issue 18: named cohorts (terms as sent, validated) and user-defined intents, per project.
    // `cas serve --intents` seeds user_defined_intents; projects.intents is only read as a fallback.
    version: 5,
    name: 'cohorts and user-defined intents',
    sql: `CREATE TABLE cohorts (project_id VARCHAR NOT NULL, cohort_id VARCHAR NOT NULL, name VARCHAR NOT NULL,
        description VARCHAR, terms JSON NOT NULL, created_at TIMESTAMPTZ NOT NULL, updated_at TIMESTAMPTZ NOT NULL);
      CREATE TABLE user_defined_intents (project_id VARCHAR NOT NULL, udi_id VARCHAR NOT NULL, name VARCHAR NOT NULL,
        description VARCHAR NOT NULL, attributes JSON NOT NULL, archived BOOLEAN NOT NULL, patterns JSON NOT NULL,
        created_at TIMESTAMPTZ NOT NULL);`,
  },
  {
    // The device a caller event named, so that a session replayed with new history (ingest/replan.ts)
    // is opened, or split, with the devices of its own events, as one run over all of them would be.
    version: 6,
    name: 'the device of each caller event',
    sql: 'ALTER TABLE events ADD COLUMN device_id VARCHAR;',
  },
  {
    // When each trait was written, and the alias that made the primary id primary (identity/rules.ts):
    // the later write wins whatever the order writes arrive in, as an import of an older export after
    // a newer one needs. Null: no trait has a time; the id the user was made with.
    version: 7,
    name: 'the times of traits and of the primary id',
    sql: `ALTER TABLE users ADD COLUMN trait_times JSON;
      ALTER TABLE users ADD COLUMN primary_at TIMESTAMPTZ;`,
  },
  {
    // When a device was linked to its user (identity/rules.ts claimDevice): the latest claim wins
    // whatever the order claims arrive in. Null: linked before link times were kept (any claim wins).
    version: 8,
    name: 'the time of each device link',
    sql: 'ALTER TABLE devices ADD COLUMN linked_at TIMESTAMPTZ;',
  },
  {
    // When each caller id was first used (the earliest record naming it, whatever order records
    // arrive in): a user's aliases are listed in that order (decisions §3). Null: ids stored before,
    // listed first, in the order they were stored.
    version: 9,
    name: 'the time each caller id was first used',
    sql: 'ALTER TABLE user_ids ADD COLUMN used_at TIMESTAMPTZ;',
  },
  {
    // Keys revoked or rotated away (hash only, as api_keys): provisioning a key (the data
    // directory's own from credentials.json at every start, or `cas serve --api-key`) brought a
    // revoked one back with the same secret (found by probing). Keys revoked before are not known.
    version: 10,
    name: 'revoked api keys',
    sql: 'CREATE TABLE revoked_keys (key_hash VARCHAR NOT NULL, org_id VARCHAR NOT NULL, revoked_at TIMESTAMPTZ NOT NULL);',
  },
  {
    // Migrations 7 and 8 left the times of traits, primary ids and device links null on the rows
    // they found, and null is older than any time: the next import of an older export put back old
    // traits, ids and device owners (found by probing upgrades). Each is now the time of the latest
    // stored event that could have written it: a user's User Identified events naming the trait, the
    // User Aliased event naming the primary id, the events (and sessions) of the device with its user.
    // Only null times are filled, so rows written since migration 7 keep their own.
    version: 11,
    name: 'times of traits, primary ids and device links stored before they were kept',
    sql: `
      UPDATE users SET trait_times = t.times
        FROM (SELECT project_id, user_id, json_group_object(key, last_ms) AS times
                FROM (SELECT e.project_id, u.canonical_user_id AS user_id, k.key, max(epoch_ms(e.ts)) AS last_ms
                        FROM events e
                        JOIN users u ON u.project_id = e.project_id AND u.user_id = e.user_id
                        CROSS JOIN LATERAL (SELECT unnest(json_keys(e.properties)) AS key) k
                       WHERE e.event = 'User Identified' AND e.properties IS NOT NULL
                       GROUP BY ALL)
               GROUP BY ALL) t
       WHERE users.project_id = t.project_id AND users.user_id = t.user_id AND users.trait_times IS NULL;
      UPDATE users SET primary_at = t.last_at
        FROM (SELECT e.project_id, u.canonical_user_id AS user_id, e.properties->>'id' AS id, max(e.ts) AS last_at
                FROM events e
                JOIN users u ON u.project_id = e.project_id AND u.user_id = e.user_id
               WHERE e.event = 'User Aliased'
               GROUP BY ALL) t
       WHERE users.project_id = t.project_id AND users.user_id = t.user_id AND users.primary_id = t.id
         AND users.primary_at IS NULL;
      UPDATE devices SET linked_at = t.last_at
        FROM (SELECT project_id, device_id, user_id, max(seen_at) AS last_at
                FROM (SELECT e.project_id, e.device_id, u.canonical_user_id AS user_id, e.ts AS seen_at
                        FROM events e
                        JOIN users u ON u.project_id = e.project_id AND u.user_id = e.user_id
                       WHERE e.device_id IN (SELECT device_id FROM devices WHERE linked_at IS NULL)
                      UNION ALL
                      SELECT s.project_id, s.device_id, u.canonical_user_id, s.last_event_at
                        FROM sessions s
                        JOIN users u ON u.project_id = s.project_id AND u.user_id = s.user_id
                       WHERE s.device_id IN (SELECT device_id FROM devices WHERE linked_at IS NULL))
               GROUP BY ALL) t
        JOIN users owner ON owner.project_id = t.project_id AND owner.canonical_user_id = t.user_id
       WHERE devices.project_id = t.project_id AND devices.device_id = t.device_id
         AND devices.user_id = owner.user_id AND devices.linked_at IS NULL;`,
  },
  {
    // Each caller event's id hashed as the ingest's filter hashes it (ingest/known-ids.ts hashId), so
    // that a project's filter of stored event ids loads as one numeric column: the ids as text cost
    // ~0.7 s at 350k ids, mostly making and hashing their strings in JS (issue 16, the incremental
    // import). Null for generated rows (never in the filter) and for rows stored before: those are
    // still read as text.
    version: 12,
    name: 'the hash of each caller event id',
    sql: 'ALTER TABLE events ADD COLUMN id_hash DOUBLE;',
  },
];

/**
 * Applies the pending migrations in one transaction, so an upgrade is applied whole or not at all.
 * A new store took a commit per migration, each writing and syncing the WAL: opening one took
 * 81-102 ms, 55-68 ms in one transaction (`migrations` runs for every new data directory).
 */
export async function migrate(db: Queryable, migrations: readonly Migration[] = MIGRATIONS): Promise<void> {
  await db.run('BEGIN TRANSACTION');
  try {
    await db.run(
      'CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name VARCHAR, applied_at TIMESTAMPTZ)',
    );
    const rows = await db.all<{ version: number }>('SELECT version FROM schema_migrations');
    const applied = new Set(rows.map((r) => Number(r.version)));
    const newest = Math.max(0, ...applied);
    const known = Math.max(0, ...migrations.map((m) => m.version));
    if (newest > known) throw new StoreTooNewError(newest, known);
    for (const migration of migrations) {
      if (applied.has(migration.version)) continue;
      await db.run(migration.sql);
      await db.run('INSERT INTO schema_migrations VALUES ($1, $2, now())', [
        migration.version,
        migration.name,
      ]);
    }
    await db.run('COMMIT');
  } catch (error) {
    await db.run('ROLLBACK').catch(() => undefined);
    throw error;
  }
}
