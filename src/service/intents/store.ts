import { randomBytes } from 'node:crypto';
import type { UdiBody, UdiRecord } from '../../shared/udi.js';
import type { IntentRule } from '../analysis/intent-rules.js';
import { conflict, notFound } from '../errors.js';
import type { Queryable } from '../store/database.js';

/** A project's user-defined intents (`user_defined_intents`, migration 5). */

type Row = {
  udi_id: string;
  name: string;
  description: string;
  attributes: string;
  archived: boolean;
  patterns: string;
};

const COLUMNS =
  'udi_id, name, description, attributes::VARCHAR AS attributes, archived, patterns::VARCHAR AS patterns';

function toRecord(r: Row): UdiRecord {
  return {
    user_defined_intent_id: r.udi_id,
    intent: { name: r.name, description: r.description },
    attributes: JSON.parse(r.attributes) as UdiRecord['attributes'],
    archived: r.archived,
    patterns: JSON.parse(r.patterns) as string[],
  };
}

export async function listUdis(q: Queryable, projectId: string): Promise<UdiRecord[]> {
  const rows = await q.all<Row>(
    `SELECT ${COLUMNS} FROM user_defined_intents WHERE project_id = $1 ORDER BY created_at, name`,
    [projectId],
  );
  return rows.map(toRecord);
}

export async function getUdi(q: Queryable, projectId: string, id: string): Promise<UdiRecord> {
  const row = await q.one<Row>(
    `SELECT ${COLUMNS} FROM user_defined_intents WHERE project_id = $1 AND udi_id = $2`,
    [projectId, id],
  );
  if (!row) throw notFound(`no user-defined intent "${id}" in this project`);
  return toRecord(row);
}

async function nameTaken(q: Queryable, projectId: string, name: string, except?: string): Promise<boolean> {
  const row = await q.one<{ n: bigint }>(
    // Patterns match case-insensitively, so "refund" and "Refund" would be one intent found twice.
    'SELECT count(*) AS n FROM user_defined_intents WHERE project_id = $1 AND lower(name) = lower($2) AND udi_id IS DISTINCT FROM $3',
    [projectId, name, except ?? null],
  );
  return Number(row?.n ?? 0) > 0;
}

/** Creates (id undefined) or replaces one; names are unique per project (409). Inside db.write. */
export async function saveUdi(
  tx: Queryable,
  projectId: string,
  body: UdiBody,
  id: string | undefined,
): Promise<UdiRecord> {
  if (id !== undefined) await getUdi(tx, projectId, id);
  if (await nameTaken(tx, projectId, body.intent.name, id)) {
    throw conflict('conflict', `an intent named "${body.intent.name}" already exists in this project`, [
      { path: 'intent.name', message: 'already used by another intent' },
    ]);
  }
  const udiId = id ?? `udi_${randomBytes(12).toString('hex')}`;
  const values = [
    projectId,
    udiId,
    body.intent.name,
    body.intent.description,
    JSON.stringify(body.attributes),
    body.archived,
    // Our extension, which clients of the hosted API do not know: a replace without it keeps the stored ones.
    body.patterns === undefined ? (id === undefined ? '[]' : null) : JSON.stringify(body.patterns),
  ];
  if (id === undefined) {
    await tx.run(
      'INSERT INTO user_defined_intents VALUES ($1, $2, $3, $4, $5::JSON, $6, $7::JSON, now())',
      values,
    );
  } else {
    await tx.run(
      `UPDATE user_defined_intents SET name = $3, description = $4, attributes = $5::JSON, archived = $6,
              patterns = coalesce($7::JSON, patterns)
        WHERE project_id = $1 AND udi_id = $2`,
      values,
    );
  }
  return getUdi(tx, projectId, udiId);
}

export async function deleteUdi(tx: Queryable, projectId: string, id: string): Promise<void> {
  await getUdi(tx, projectId, id);
  await tx.run('DELETE FROM user_defined_intents WHERE project_id = $1 AND udi_id = $2', [projectId, id]);
}

/** `cas serve --intents`: adds the file's intents the project does not have by name; replaces nothing. */
export async function seedUdis(
  tx: Queryable,
  projectId: string,
  rules: readonly IntentRule[],
): Promise<number> {
  let added = 0;
  for (const rule of rules) {
    if (await nameTaken(tx, projectId, rule.name)) continue;
    await saveUdi(
      tx,
      projectId,
      {
        intent: { name: rule.name, description: rule.description ?? '' },
        attributes: [],
        archived: false,
        patterns: rule.patterns,
      },
      undefined,
    );
    added += 1;
  }
  return added;
}

/**
 * RE2 for an intent without patterns: its name's words, in order, as whole words (`track_order` ~
 * "track order"). Whole by letters and digits of any script: RE2's `\b` knows only ASCII word
 * characters, so "café" never matched "un café" (and did match "cafés"), nor "C++" anything.
 */
export function namePattern(name: string): string {
  const words = name.split(/[\s_-]+/).filter((w) => w.length > 0);
  const quoted = words.map((w) => w.replace(/[!-/:-@[-`{-~]/g, (c) => `\\${c}`));
  return `(?:^|[^\\p{L}\\p{N}_])${quoted.join('[\\s_-]+')}(?:$|[^\\p{L}\\p{N}_])`;
}

/** The rules the analyser uses: every intent not archived, in creation order. */
export function rulesOf(udis: readonly UdiRecord[]): IntentRule[] {
  return udis
    .filter((u) => !u.archived)
    .map((u) => ({
      name: u.intent.name,
      ...(u.intent.description === '' ? {} : { description: u.intent.description }),
      patterns: u.patterns.length > 0 ? u.patterns : [namePattern(u.intent.name)],
    }));
}
