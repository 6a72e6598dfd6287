import { z } from 'zod';
import type { Issue } from '../../shared/errors.js';
import {
  type UdiBody,
  udiBodySchema,
  udiDeletedSchema,
  udiParamsSchema,
  udiRecordSchema,
} from '../../shared/udi.js';
import { invalidInput } from '../errors.js';
import { route } from '../http/route.js';
import type { Scope } from '../identity/identity.js';
import type { Ingestor } from '../ingest/ingestor.js';
import { re2Problem } from '../re2-check.js';
import { leaseRead } from '../read/lease.js';
import type { Database, Queryable } from '../store/database.js';
import { deleteUdi, getUdi, listUdis, rulesOf, saveUdi } from './store.js';

/** Patterns compile in RE2 as the analyser runs them (DuckDB, case-insensitive), or 400 naming each. */
async function patternIssues(q: Queryable, body: UdiBody): Promise<Issue[]> {
  const issues: Issue[] = [];
  for (const [i, pattern] of (body.patterns ?? []).entries()) {
    const problem = await re2Problem(q, pattern, 'i');
    if (problem) issues.push({ path: `patterns[${i}]`, message: problem });
  }
  return issues;
}

const ABOUT =
  'Intents are found in user utterances when a conversation closes (decisions §5; turn intent labels win). patterns (our extension) are RE2, case-insensitive, anywhere in an utterance; without patterns the intent name\'s words are looked for (track_order: "track order"). Archived intents are kept but not found. Names are unique per project (409). A replace (PUT) without patterns keeps the stored ones. Changes apply to conversations closing from then on; stored ones are not re-analysed.';

export function udiRoutes(db: Database, ingestor: Ingestor) {
  /** Writes, then hands the project's new rules to the ingest cache (after the commit). */
  const change = async <T>(tenant: Scope, fn: (tx: Queryable) => Promise<T>): Promise<T> => {
    let rules: ReturnType<typeof rulesOf> = [];
    const value = await db.write(async (tx) => {
      const out = await fn(tx);
      rules = rulesOf(await listUdis(tx, tenant.projectId));
      return out;
    });
    ingestor.intentsChanged(tenant.projectId, rules);
    return value;
  };
  const checked = async (body: UdiBody) => {
    const issues = await patternIssues(db.read, body);
    if (issues.length > 0) throw invalidInput(issues);
  };
  return [
    route({
      method: 'GET',
      url: '/bc/v1/udi',
      tag: 'User Defined Intents',
      summary: "The project's user-defined intents, oldest first",
      description: ABOUT,
      response: z.array(udiRecordSchema),
      handler: ({ tenant, signal }) => leaseRead(db, tenant, (q) => listUdis(q, tenant.projectId), signal),
    }),
    route({
      method: 'POST',
      url: '/bc/v1/udi',
      tag: 'User Defined Intents',
      summary: 'Create a user-defined intent',
      description: ABOUT,
      body: udiBodySchema,
      response: udiRecordSchema,
      refusals: { 409: 'An intent of that name exists' },
      handler: async ({ tenant, body }) => {
        await checked(body);
        return change(tenant, (tx) => saveUdi(tx, tenant.projectId, body, undefined));
      },
    }),
    route({
      method: 'GET',
      url: '/bc/v1/udi/:user_defined_intent_id',
      tag: 'User Defined Intents',
      summary: 'A user-defined intent',
      params: udiParamsSchema,
      response: udiRecordSchema,
      refusals: { 404: 'No such intent' },
      handler: ({ tenant, params, signal }) =>
        leaseRead(db, tenant, (q) => getUdi(q, tenant.projectId, params.user_defined_intent_id), signal),
    }),
    route({
      method: 'PUT',
      url: '/bc/v1/udi/:user_defined_intent_id',
      tag: 'User Defined Intents',
      summary: 'Replace a user-defined intent',
      description: ABOUT,
      params: udiParamsSchema,
      body: udiBodySchema,
      response: udiRecordSchema,
      refusals: { 404: 'No such intent', 409: 'An intent of that name exists' },
      handler: async ({ tenant, params, body }) => {
        await checked(body);
        return change(tenant, (tx) => saveUdi(tx, tenant.projectId, body, params.user_defined_intent_id));
      },
    }),
    route({
      method: 'DELETE',
      url: '/bc/v1/udi/:user_defined_intent_id',
      tag: 'User Defined Intents',
      summary: 'Delete a user-defined intent',
      description: 'Stored Intent Informed events stay; 404 when unknown.',
      params: udiParamsSchema,
      response: udiDeletedSchema,
      refusals: { 404: 'No such intent' },
      handler: async ({ tenant, params }) => {
        await change(tenant, (tx) => deleteUdi(tx, tenant.projectId, params.user_defined_intent_id));
        return { success: true };
      },
    }),
  ];
}
