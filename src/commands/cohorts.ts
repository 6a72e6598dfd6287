import { HttpError } from '../client/errors.js';
import type { Client } from '../client/http-client.js';
import {
  createCohort,
  deleteCohort,
  evaluateCohort,
  getCohortById,
  getCohortByName,
  listCohorts,
} from '../client/routes.js';
import { COHORT_ID, type CohortBodyInput, type CohortRecord, cohortBodySchema } from '../shared/cohorts.js';
import { formatPath } from '../shared/errors.js';
import type { UserRecord } from '../shared/users.js';
import { parseWhere } from './chart-expr.js';
import { originOf } from './chart-flags.js';
import { type OrderedFlag, walkSequence } from './chart-sequence.js';
import { UsageError } from './errors.js';
import { namingFlags } from './flag-refusals.js';
import { wholeNumber } from './users.js';

/**
 * `cas cohorts list|create|show|delete`. `create` reads the flags `cas chart` reads for its user
 * filter, with the same parsers: `--user-where` (one trait term holding every condition),
 * `--performed` (an event term each, a `--where` after it filtering that event), `--intent` (OR'd
 * among themselves, as a chart's are), and `--cohort` (another cohort). Terms combine with AND, as a
 * chart's user filter does, so `--cohort <name>` on a chart selects exactly the users those flags
 * select inline; `--any` makes it OR, each `--user-where` then a term of its own.
 */

export interface CohortCreateOptions {
  name: string;
  description?: string | undefined;
  userWhere?: readonly string[] | undefined;
  /** `--performed`, `--where`, `--intent` in command-line order. */
  sequence?: readonly OrderedFlag[] | undefined;
  cohort?: readonly string[] | undefined;
  any?: boolean | undefined;
}

export function cohortBody(options: CohortCreateOptions): CohortBodyInput {
  const seq = walkSequence('users', options.sequence ?? []);
  const operator = options.any === true ? 'or' : 'and';
  const terms: CohortBodyInput['terms'] = [];
  // A chart's intents select users who showed any of them (decisions §6): the intent terms come first,
  // joined by OR, so the terms after them AND with the lot (each was ANDed: found by probing).
  seq.intents.forEach((intent, i) => {
    terms.push({
      operator: i === 0 ? operator : 'or',
      termFilter: { type: 'intent', intent: intent.intent, ...(intent.with ? { with: intent.with } : {}) },
    });
  });
  const userWhere = (options.userWhere ?? []).map((text) => parseWhere(text, '--user-where'));
  // One trait term holds every condition (AND); with --any each is a term of its own, OR'd.
  if (options.any === true) {
    for (const w of userWhere) terms.push({ operator, termFilter: { type: 'trait', with: [w] } });
  } else if (userWhere.length > 0) terms.push({ operator, termFilter: { type: 'trait', with: userWhere } });
  for (const performed of seq.performed) {
    const { event_name, with: where, number_of, number_of_operator } = performed;
    terms.push({
      operator,
      termFilter: {
        type: 'event',
        event_name,
        ...(where ? { with: where } : {}),
        ...(number_of !== undefined ? { number_of } : {}),
        ...(number_of_operator !== undefined ? { number_of_operator } : {}),
      },
    });
  }
  for (const name of options.cohort ?? []) terms.push({ operator, termFilter: { type: 'cohort', name } });
  if (terms.length === 0) {
    throw new UsageError(
      'a cohort needs at least one of --user-where, --performed, --intent or --cohort',
      'e.g. cas cohorts create "Big teams" --user-where "seats >= 5"',
    );
  }
  const body: CohortBodyInput = {
    name: options.name,
    ...(options.description !== undefined ? { description: options.description } : {}),
    terms,
  };
  const parsed = cohortBodySchema.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const path = formatPath(issue?.path ?? []);
    throw new UsageError(`cohort ${path || 'body'}: ${issue?.message ?? 'invalid'}`);
  }
  return body;
}

export async function runCohortCreate(
  options: CohortCreateOptions,
  deps: { client: Client },
): Promise<CohortRecord> {
  const body = cohortBody(options);
  return namingFlags(
    () => createCohort(deps.client, body),
    (path) => termFlag(options, body, path),
  );
}

/**
 * The flag behind `terms[t].termFilter.<rest>` of a body cohortBody built: a trait term's conditions
 * are the `--user-where`s, an event or intent term's those of its `--performed` / `--intent` (found
 * under the chart path walkSequence recorded them at).
 */
function termFlag(options: CohortCreateOptions, body: CohortBodyInput, path: string): string | undefined {
  const match = /^terms\[(\d+)\]\.termFilter(.*)$/.exec(path);
  if (!match) return undefined;
  const t = Number(match[1]);
  const rest = match[2] ?? '';
  const type = body.terms[t]?.termFilter.type;
  const before = body.terms.slice(0, t).filter((term) => term.termFilter.type === type).length;
  if (type === 'trait') {
    const j = /^\.with\[(\d+)\]/.exec(rest)?.[1];
    // One term of them all, or (--any) one each: either way the (before + j)th --user-where.
    const text = j === undefined ? undefined : options.userWhere?.[before + Number(j)];
    return text === undefined ? undefined : `--user-where "${text}"`;
  }
  const origins = walkSequence('users', options.sequence ?? []).origins;
  if (type === 'event') return originOf(`userFilters[0].performed_events[${before}]${rest}`, origins);
  if (type === 'intent') return originOf(`shownIntents[${before}]${rest}`, origins);
  return undefined;
}

export async function runCohortList(_options: unknown, deps: { client: Client }): Promise<CohortRecord[]> {
  return listCohorts(deps.client);
}

/**
 * A cohort by name, or by id (names are what people type; ids what scripts keep; no name of ours
 * looks like one of our ids). Another service's ids have other forms (the hosted one's are 24 hex
 * digits): a name no cohort has is tried as an id before it is unknown.
 */
export async function findCohort(client: Client, nameOrId: string): Promise<CohortRecord> {
  if (COHORT_ID.test(nameOrId)) return getCohortById(client, nameOrId);
  try {
    return await getCohortByName(client, nameOrId);
  } catch (error) {
    if (!(error instanceof HttpError) || error.status !== 404) throw error;
    return getCohortById(client, nameOrId).catch((second: unknown) => {
      throw second instanceof HttpError && second.status === 404 ? error : second;
    });
  }
}

export interface CohortShow {
  cohort: CohortRecord;
  /** The first members (`--members n`); `members_shown < members_limit` means that is all of them. */
  members: UserRecord[];
  members_limit: number;
}

export async function runCohortShow(
  options: { cohort: string; members?: string | undefined },
  deps: { client: Client },
): Promise<CohortShow> {
  const limit = wholeNumber(options.members, '--members', 20, 100_000);
  const cohort = await findCohort(deps.client, options.cohort);
  const members = limit === 0 ? [] : await evaluateCohort(deps.client, cohort.cohort_id, { limit });
  return { cohort, members, members_limit: limit };
}

export async function runCohortDelete(
  options: { cohort: string },
  deps: { client: Client },
): Promise<{ deleted: string; cohort_id: string }> {
  const cohort = await findCohort(deps.client, options.cohort);
  await deleteCohort(deps.client, cohort.cohort_id);
  return { deleted: cohort.name, cohort_id: cohort.cohort_id };
}
