import { z } from 'zod';
import { ALL_USERS, type ChartRange } from '../../shared/chart-filters.js';
import {
  type CohortBody,
  cohortBodySchema,
  cohortDeletedSchema,
  cohortEvaluateQuerySchema,
  cohortIdQuerySchema,
  cohortMembersSchema,
  cohortNameQuerySchema,
  cohortRecordSchema,
} from '../../shared/cohorts.js';
import type { Issue } from '../../shared/errors.js';
import { makeContext } from '../charts/context.js';
import { Query } from '../charts/sql.js';
import { userSelection } from '../charts/user-selection.js';
import { invalidInput } from '../errors.js';
import { route } from '../http/route.js';
import type { Scope } from '../identity/identity.js';
import { re2Problem } from '../re2-check.js';
import { leaseRead } from '../read/lease.js';
import type { Database, Queryable } from '../store/database.js';
import { list } from '../store/statements.js';
import { userRecords } from '../users/records.js';
import { cohortDefinitions, deleteCohort, findCohort, listCohorts, saveCohort } from './store.js';

/** Regexes (asked of DuckDB, the engine that runs them) and zones that the schema cannot check. */
async function termIssues(q: Queryable, body: CohortBody): Promise<Issue[]> {
  const issues: Issue[] = [];
  for (const [i, term] of body.terms.entries()) {
    const f = term.termFilter;
    if (f.type === 'cohort') continue;
    for (const [k, w] of (f.with ?? []).entries()) {
      if (w.operator !== 'regex' && w.operator !== 'not_regex') continue;
      const problem = await re2Problem(q, String(w.values[0]));
      if (problem) issues.push({ path: `terms[${i}].termFilter.with[${k}].values[0]`, message: problem });
    }
    if (f.type !== 'trait' && f.within?.period) {
      const tz = f.within.period.tz;
      const ok = await q.run("SELECT TIMESTAMPTZ '2000-01-01 00:00:00+00' AT TIME ZONE $1", [tz]).then(
        () => true,
        () => false,
      );
      if (!ok) issues.push({ path: `terms[${i}].termFilter.within.period.tz`, message: 'unknown time zone' });
    }
  }
  return issues;
}

/**
 * Members of a cohort over all time (no chart range): `within.period` is measured back from now.
 * The range is month bins from 1970 so the shared compiler can be used as is.
 */
async function members(q: Queryable, scope: Scope, name: string, skip: number, limit: number) {
  const range: ChartRange = {
    start: '1970-01-01T00:00:00Z',
    end: new Date(Date.now() + 1000).toISOString(),
    period: 'month',
    tz: 'UTC',
  };
  const ctx = makeContext(q, scope.projectId, range, {}, 0, {
    cohorts: await cohortDefinitions(q, scope.projectId),
  });
  const query = new Query();
  const selected = userSelection(query, ctx, [{ cohort: name, combine_previous_operation: 'or' }], undefined);
  // Two statements: the selection's parameters and userRecords' are numbered independently.
  const persons = await q.all<{ person: string }>(
    query.sql(`SELECT person FROM ${selected ?? '(SELECT NULL AS person)'}`),
    query.params.values,
  );
  const ids = persons.map((p) => p.person);
  if (ids.length === 0) return [];
  const { users } = await userRecords(q, scope, {
    // A semi-join on the unnested list (a hash table): list_contains compared every user with every
    // member, 9 s for a 60k-member cohort whatever the page size (found by probing).
    where: 'b.user_id IN (SELECT unnest($2))',
    params: [list(ids)],
    limit,
    offset: skip,
  });
  return users;
}

export function cohortRoutes(db: Database) {
  const write = (fn: (tx: Queryable) => Promise<unknown>) => db.write(fn);
  const validate = async (body: CohortBody) => {
    const issues = await termIssues(db.read, body);
    if (issues.length > 0) throw invalidInput(issues);
  };
  return [
    route({
      method: 'GET',
      url: '/bc/v1/cohorts',
      tag: 'Cohorts',
      summary: "The project's cohorts, by name",
      response: z.array(cohortRecordSchema),
      handler: ({ tenant, signal }) => leaseRead(db, tenant, (q) => listCohorts(q, tenant), signal),
    }),
    route({
      method: 'POST',
      url: '/bc/v1/cohorts',
      tag: 'Cohorts',
      summary: 'Create a cohort',
      description: `Names are unique per project (409 otherwise); "${ALL_USERS}" is reserved. Terms combine left to right with their operator (the first term's is ignored). A nested cohort term must name an existing cohort and may not lead back to this one (400), and no cohort may come to more than 1,000 terms and property filters once nested cohorts are inlined (400, whichever save would make it so). Event and intent terms count within their within, else the chart's range (so a cohort filters a chart exactly as the same filters inline); /cohorts/evaluate counts over all time. within on a trait term is refused: traits have no history.`,
      body: cohortBodySchema,
      response: cohortRecordSchema,
      refusals: { 409: 'A cohort of that name exists' },
      handler: async ({ tenant, body }) => {
        await validate(body);
        return write((tx) => saveCohort(tx, tenant, body, undefined));
      },
    }),
    route({
      method: 'PUT',
      url: '/bc/v1/cohorts',
      tag: 'Cohorts',
      summary: 'Replace a cohort (name, description and terms)',
      description: 'Renaming a cohort that other cohorts contain is a 409; an unknown cohort_id is 404.',
      query: cohortIdQuerySchema,
      body: cohortBodySchema,
      response: cohortRecordSchema,
      refusals: {
        404: 'No such cohort',
        409: 'A cohort of that name exists, or another cohort uses the name this one gives up',
      },
      handler: async ({ tenant, body, query }) => {
        await validate(body);
        return write((tx) => saveCohort(tx, tenant, body, query.cohort_id));
      },
    }),
    route({
      method: 'DELETE',
      url: '/bc/v1/cohorts',
      tag: 'Cohorts',
      summary: 'Delete a cohort',
      description:
        'Answers {status: "ok", cohort_id}; 404 when unknown, 409 while another cohort contains it.',
      query: cohortIdQuerySchema,
      response: cohortDeletedSchema,
      refusals: { 404: 'No such cohort', 409: 'Another cohort uses it' },
      handler: async ({ tenant, query }) => {
        await write((tx) => deleteCohort(tx, tenant, query.cohort_id));
        return { status: 'ok' as const, cohort_id: query.cohort_id };
      },
    }),
    route({
      method: 'GET',
      url: '/bc/v1/cohorts/byName',
      tag: 'Cohorts',
      summary: 'A cohort by name',
      query: cohortNameQuerySchema,
      response: cohortRecordSchema,
      refusals: { 404: 'No such cohort' },
      handler: ({ tenant, query, signal }) =>
        leaseRead(db, tenant, (q) => findCohort(q, tenant, { name: query.name }), signal),
    }),
    route({
      method: 'GET',
      url: '/bc/v1/cohorts/byId',
      tag: 'Cohorts',
      summary: 'A cohort by id',
      query: cohortIdQuerySchema,
      response: cohortRecordSchema,
      refusals: { 404: 'No such cohort' },
      handler: ({ tenant, query, signal }) =>
        leaseRead(db, tenant, (q) => findCohort(q, tenant, { id: query.cohort_id }), signal),
    }),
    route({
      method: 'GET',
      url: '/bc/v1/cohorts/evaluate',
      tag: 'Cohorts',
      summary: 'The users in a cohort now',
      description:
        'Evaluated over all stored data (within.period measured back from now); users in order of created_at, then user_id; skip 0 and limit 1000 by default (at most 100,000).',
      query: cohortEvaluateQuerySchema,
      response: cohortMembersSchema,
      refusals: { 404: 'No such cohort' },
      rate: 'chart',
      handler: ({ tenant, query, signal }) =>
        leaseRead(
          db,
          tenant,
          async (q) => {
            const cohort = await findCohort(q, tenant, { id: query.cohort_id });
            return members(q, tenant, cohort.name, query.skip, query.limit);
          },
          signal,
        ),
    }),
  ];
}
