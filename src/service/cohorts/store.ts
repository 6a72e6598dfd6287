import { randomBytes } from 'node:crypto';
import { ALL_USERS } from '../../shared/chart-filters.js';
import {
  type CohortBody,
  type CohortRecord,
  type CohortTerm,
  cohortTermSchema,
} from '../../shared/cohorts.js';
import type { Issue } from '../../shared/errors.js';
import { conflict, invalidInput, notFound } from '../errors.js';
import type { Scope } from '../identity/identity.js';
import type { Queryable } from '../store/database.js';
import { sizeIssues } from './size.js';

/** A project's cohort definitions by name, what charts compile a `cohort` filter from. */
export type CohortDefinitions = ReadonlyMap<string, readonly CohortTerm[]>;

type Row = {
  cohort_id: string;
  name: string;
  description: string | null;
  terms: string;
  created_at: Date;
  updated_at: Date;
};

const COLUMNS = 'cohort_id, name, description, terms::VARCHAR AS terms, created_at, updated_at';

function parseTerms(text: string): CohortTerm[] {
  // Stored terms were validated when written; parsing again gives the defaults their types.
  return (JSON.parse(text) as unknown[]).map((t) => cohortTermSchema.parse(t));
}

function toRecord(scope: Scope, r: Row): CohortRecord {
  return {
    organization_id: scope.orgId,
    app_id: scope.projectId,
    cohort_id: r.cohort_id,
    created_at: r.created_at.toISOString(),
    updated_at: r.updated_at.toISOString(),
    name: r.name,
    ...(r.description === null ? {} : { description: r.description }),
    terms: parseTerms(r.terms),
  };
}

export async function listCohorts(q: Queryable, scope: Scope): Promise<CohortRecord[]> {
  const rows = await q.all<Row>(`SELECT ${COLUMNS} FROM cohorts WHERE project_id = $1 ORDER BY name`, [
    scope.projectId,
  ]);
  return rows.map((r) => toRecord(scope, r));
}

export async function findCohort(
  q: Queryable,
  scope: Scope,
  by: { id: string } | { name: string },
): Promise<CohortRecord> {
  const [column, value] = 'id' in by ? ['cohort_id', by.id] : ['name', by.name];
  const row = await q.one<Row>(`SELECT ${COLUMNS} FROM cohorts WHERE project_id = $1 AND ${column} = $2`, [
    scope.projectId,
    value,
  ]);
  if (!row) throw notFound(`no cohort with ${'id' in by ? 'id' : 'name'} "${value}" in this project`);
  return toRecord(scope, row);
}

export async function cohortDefinitions(q: Queryable, projectId: string): Promise<CohortDefinitions> {
  const rows = await q.all<{ name: string; terms: string }>(
    'SELECT name, terms::VARCHAR AS terms FROM cohorts WHERE project_id = $1',
    [projectId],
  );
  return new Map(rows.map((r) => [r.name, parseTerms(r.terms)]));
}

/**
 * What a chart needs to compile its user filters: the project's cohorts, read only when a filter
 * names one other than "All Users" (one small query; most charts name none).
 */
export async function cohortsFor(
  q: Queryable,
  projectId: string,
  controls: { userFilters?: ReadonlyArray<{ cohort?: string | undefined }> | undefined },
): Promise<CohortDefinitions | undefined> {
  const named = (controls.userFilters ?? []).some((f) => f.cohort !== undefined && f.cohort !== ALL_USERS);
  return named ? cohortDefinitions(q, projectId) : undefined;
}

/**
 * Nested cohort terms must name cohorts that exist, and no cohort may reach itself through them:
 * a definition must stay compilable for every chart that uses it.
 */
function referenceIssues(name: string, terms: readonly CohortTerm[], defs: CohortDefinitions): Issue[] {
  const issues: Issue[] = [];
  const reaches = (from: string, seen: Set<string>): boolean => {
    if (from === name) return true;
    if (seen.has(from)) return false;
    seen.add(from);
    return (defs.get(from) ?? []).some(
      (t) => t.termFilter.type === 'cohort' && reaches(t.termFilter.name, seen),
    );
  };
  terms.forEach((t, i) => {
    if (t.termFilter.type !== 'cohort' || t.termFilter.name === ALL_USERS) return;
    const path = `terms[${i}].termFilter.name`;
    if (t.termFilter.name === name) issues.push({ path, message: 'a cohort cannot contain itself' });
    else if (!defs.has(t.termFilter.name)) {
      issues.push({ path, message: `unknown cohort "${t.termFilter.name}"` });
    } else if (reaches(t.termFilter.name, new Set())) {
      issues.push({ path, message: `cohort "${t.termFilter.name}" contains this one` });
    }
  });
  return issues;
}

function newCohortId(): string {
  return `coh_${randomBytes(12).toString('hex')}`;
}

/**
 * Creates (id undefined) or replaces a cohort. Names are unique per project (409); "All Users" is
 * reserved (400). Runs inside db.write, so the checks and the write see one state.
 */
export async function saveCohort(
  tx: Queryable,
  scope: Scope,
  body: CohortBody,
  id: string | undefined,
): Promise<CohortRecord> {
  // In any case, as "Any Intent" is: a cohort "all users" made `--cohort "all users"` mean it.
  if (body.name.toLowerCase() === ALL_USERS.toLowerCase()) {
    throw invalidInput([{ path: 'name', message: `"${ALL_USERS}" is reserved for every user, in any case` }]);
  }
  const defs = new Map(await cohortDefinitions(tx, scope.projectId));
  let previousName: string | undefined;
  if (id !== undefined) {
    const existing = await findCohort(tx, scope, { id });
    previousName = existing.name;
    defs.delete(existing.name);
  }
  const issues = referenceIssues(body.name, body.terms, defs);
  if (issues.length > 0) throw invalidInput(issues);
  const size = sizeIssues(body.name, body.terms, defs);
  if (size.length > 0) throw invalidInput(size);
  if (defs.has(body.name)) {
    throw conflict('conflict', `a cohort named "${body.name}" already exists in this project`, [
      { path: 'name', message: 'already used by another cohort' },
    ]);
  }
  if (previousName !== undefined && previousName !== body.name) {
    const users = [...defs].filter(([, terms]) =>
      terms.some((t) => t.termFilter.type === 'cohort' && t.termFilter.name === previousName),
    );
    if (users.length > 0) {
      throw conflict(
        'conflict',
        `cohort "${previousName}" is used by ${users.map(([n]) => `"${n}"`).join(', ')}`,
        [{ path: 'name', message: 'other cohorts refer to the current name' }],
      );
    }
  }
  const terms = JSON.stringify(body.terms);
  const description = body.description ?? null;
  const cohortId = id ?? newCohortId();
  if (id === undefined) {
    await tx.run('INSERT INTO cohorts VALUES ($1, $2, $3, $4, $5::JSON, now(), now())', [
      scope.projectId,
      cohortId,
      body.name,
      description,
      terms,
    ]);
  } else {
    await tx.run(
      'UPDATE cohorts SET name = $3, description = $4, terms = $5::JSON, updated_at = now() WHERE project_id = $1 AND cohort_id = $2',
      [scope.projectId, cohortId, body.name, description, terms],
    );
  }
  return findCohort(tx, scope, { id: cohortId });
}

/** 404 when absent; 409 while another cohort contains it. */
export async function deleteCohort(tx: Queryable, scope: Scope, id: string): Promise<void> {
  const existing = await findCohort(tx, scope, { id });
  const users = [...(await cohortDefinitions(tx, scope.projectId))].filter(([, terms]) =>
    terms.some((t) => t.termFilter.type === 'cohort' && t.termFilter.name === existing.name),
  );
  if (users.length > 0) {
    throw conflict(
      'conflict',
      `cohort "${existing.name}" is used by ${users.map(([n]) => `"${n}"`).join(', ')}`,
    );
  }
  await tx.run('DELETE FROM cohorts WHERE project_id = $1 AND cohort_id = $2', [scope.projectId, id]);
}
