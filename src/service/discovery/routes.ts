import {
  AGG_VALUES_LIMIT,
  intentAttributeNamesQuerySchema,
  intentAttributeValuesQuerySchema,
  intentNamesQuerySchema,
  namesResponseSchema,
  type Pick,
  pickBracketTypes,
  propertyNamesQuerySchema,
  propertyValuesQuerySchema,
  traitNamesQuerySchema,
  traitValuesQuerySchema,
  userTraitNamesQuerySchema,
  userTraitValuesQuerySchema,
} from '../../shared/agg.js';
import type { Issue } from '../../shared/errors.js';
import { INTENT_EVENT } from '../charts/event-filter.js';
import { all, Params } from '../charts/sql.js';
import { invalidInput } from '../errors.js';
import { route } from '../http/route.js';
import type { Scope as Tenant } from '../identity/identity.js';
import { re2Problem } from '../re2-check.js';
import { leaseRead } from '../read/lease.js';
import type { Database, Queryable } from '../store/database.js';
import { eventProperties, intentAttributes, namesSql, personTraits, valuesSql } from './sources.js';

type Query = Record<string, unknown>;

/** Each named parameter that holds a regex must compile in RE2 (asked of DuckDB): 400 naming it. */
async function checkRegexes(q: Queryable, query: Query): Promise<void> {
  const issues: Issue[] = [];
  for (const [name, value] of Object.entries(query)) {
    if (!name.endsWith('regex') || typeof value !== 'string') continue;
    const problem = await re2Problem(q, value);
    if (problem) issues.push({ path: name, message: problem });
  }
  // A pick's regex too: `(` reached DuckDB and came back a 500 (found by probing).
  const picks: ReadonlyArray<Pick> = Array.isArray(query.picks) ? query.picks : [];
  for (const [i, pick] of picks.entries()) {
    if (pick.operator !== 'regex' && pick.operator !== 'not_regex') continue;
    for (const value of Array.isArray(pick.value) ? pick.value : [pick.value]) {
      const problem = typeof value === 'string' ? await re2Problem(q, value) : undefined;
      if (problem) issues.push({ path: `picks[${i}].value`, message: problem });
    }
  }
  if (issues.length > 0) throw invalidInput(issues);
}

async function run(
  db: Database,
  tenant: Tenant,
  query: Query,
  build: (p: Params) => string,
  signal: AbortSignal,
): Promise<string[]> {
  await checkRegexes(db.read, query);
  const p = new Params();
  const sql = build(p);
  const rows = await leaseRead(db, tenant, (q) => q.all<{ name: string }>(sql, p.values), signal);
  return rows.map((r) => r.name);
}

const scopeOf = (q: { session_id?: string | undefined; conversation_id?: string | undefined }) => ({
  session_id: q.session_id,
  conversation_id: q.conversation_id,
});

const NAMES = 'Names sorted; every regex is RE2 run by DuckDB, matched anywhere (anchor with ^ and $).';
const VALUES = `Values as text (true, 1.5; lists as JSON), most frequent first, ties by text, at most ${AGG_VALUES_LIMIT}; every regex is RE2 run by DuckDB.`;
const PICKS = 'picks narrow the objects first (chart property-filter rules; operator eq by default).';

/** `/agg/*` but event-names (read/index.ts): what names and values exist, for pickers and `cas properties`. */
export function discoveryRoutes(db: Database) {
  const agg = 'Aggregation';
  return [
    route({
      method: 'GET',
      url: '/bc/v1/agg/property-names',
      tag: agg,
      summary: 'Property names of events whose name matches event_regex',
      description: `${NAMES} ${PICKS} A pick names an event property, else the user's current trait.`,
      query: propertyNamesQuerySchema,
      bracketQuery: pickBracketTypes,
      response: namesResponseSchema,
      handler: ({ tenant, query, signal }) =>
        run(
          db,
          tenant,
          query,
          (p) =>
            namesSql(
              p,
              eventProperties(p, tenant.projectId, {
                eventRegex: query.event_regex,
                picks: query.picks,
                scope: scopeOf(query),
              }),
              query.property_regex,
            ),
          signal,
        ),
    }),
    route({
      method: 'GET',
      url: '/bc/v1/agg/property-values',
      tag: agg,
      summary: 'Values of the properties whose name matches property_name_regex',
      description: VALUES,
      query: propertyValuesQuerySchema,
      response: namesResponseSchema,
      handler: ({ tenant, query, signal }) =>
        run(
          db,
          tenant,
          query,
          (p) =>
            valuesSql(
              p,
              eventProperties(p, tenant.projectId, { eventRegex: query.event_regex, scope: scopeOf(query) }),
              query.property_name_regex,
              query.property_value_regex,
              AGG_VALUES_LIMIT,
            ),
          signal,
        ),
    }),
    route({
      method: 'GET',
      url: '/bc/v1/agg/trait-names',
      tag: agg,
      summary: 'Trait names of the users who performed events matching event_regex',
      description: `${NAMES} ${PICKS} Traits are users' current traits (merged users counted once).`,
      query: traitNamesQuerySchema,
      bracketQuery: pickBracketTypes,
      response: namesResponseSchema,
      handler: ({ tenant, query, signal }) =>
        run(
          db,
          tenant,
          query,
          (p) =>
            namesSql(
              p,
              personTraits(p, tenant.projectId, {
                eventRegex: query.event_regex,
                picks: query.picks,
                scope: scopeOf(query),
              }),
              query.trait_regex,
            ),
          signal,
        ),
    }),
    route({
      method: 'GET',
      url: '/bc/v1/agg/trait-values',
      tag: agg,
      summary: 'Values of the traits (name matching trait_name_regex) of users who performed matching events',
      description: `${VALUES} Each user counts once per value.`,
      query: traitValuesQuerySchema,
      response: namesResponseSchema,
      handler: ({ tenant, query, signal }) =>
        run(
          db,
          tenant,
          query,
          (p) =>
            valuesSql(
              p,
              personTraits(p, tenant.projectId, { eventRegex: query.event_regex, scope: scopeOf(query) }),
              query.trait_name_regex,
              query.trait_value_regex,
              AGG_VALUES_LIMIT,
            ),
          signal,
        ),
    }),
    route({
      method: 'GET',
      url: '/bc/v1/agg/user-trait-names',
      tag: agg,
      summary: 'Trait names of users whose id matches id_regex',
      description: `${NAMES} ${PICKS} id_regex matches the primary caller id or the service id (u_…).`,
      query: userTraitNamesQuerySchema,
      bracketQuery: pickBracketTypes,
      response: namesResponseSchema,
      handler: ({ tenant, query, signal }) =>
        run(
          db,
          tenant,
          query,
          (p) =>
            namesSql(
              p,
              personTraits(p, tenant.projectId, {
                idRegex: query.id_regex,
                picks: query.picks,
                scope: scopeOf(query),
              }),
              query.trait_regex,
            ),
          signal,
        ),
    }),
    route({
      method: 'GET',
      url: '/bc/v1/agg/user-trait-values',
      tag: agg,
      summary: 'Values of traits (name matching trait_regex) of users whose id matches id_regex',
      description: VALUES,
      query: userTraitValuesQuerySchema,
      response: namesResponseSchema,
      handler: ({ tenant, query, signal }) =>
        run(
          db,
          tenant,
          query,
          (p) =>
            valuesSql(
              p,
              personTraits(p, tenant.projectId, { idRegex: query.id_regex, scope: scopeOf(query) }),
              query.trait_regex,
              query.trait_value_regex,
              AGG_VALUES_LIMIT,
            ),
          signal,
        ),
    }),
    route({
      method: 'GET',
      url: '/bc/v1/agg/intent-names',
      tag: agg,
      summary: 'Names of the intents found in conversations (Intent Informed events)',
      description: `${NAMES} Only intents that occurred; /udi lists the defined ones.`,
      query: intentNamesQuerySchema,
      response: namesResponseSchema,
      handler: ({ tenant, query, signal }) =>
        run(
          db,
          tenant,
          query,
          (p) => {
            const name = "json_extract_string(e.properties, '/intent')";
            const conditions = [
              `e.project_id = ${p.bind(tenant.projectId)}`,
              `e.event = ${p.bind(INTENT_EVENT)}`,
              `${name} IS NOT NULL`,
              ...(query.intent_regex === undefined
                ? []
                : [`regexp_matches(${name}, ${p.bind(query.intent_regex)})`]),
              ...(query.session_id === undefined ? [] : [`e.session_id = ${p.bind(query.session_id)}`]),
              ...(query.conversation_id === undefined
                ? []
                : [`e.conversation_id = ${p.bind(query.conversation_id)}`]),
            ];
            return `SELECT DISTINCT ${name} AS name FROM events e WHERE ${all(conditions)} ORDER BY name`;
          },
          signal,
        ),
    }),
    route({
      method: 'GET',
      url: '/bc/v1/agg/intent-attribute-names',
      tag: agg,
      summary: 'Attribute names of intents whose name matches intent_regex',
      description: `${NAMES} ${PICKS} Attributes are the Intent Informed properties besides intent (source included).`,
      query: intentAttributeNamesQuerySchema,
      bracketQuery: pickBracketTypes,
      response: namesResponseSchema,
      handler: ({ tenant, query, signal }) =>
        run(
          db,
          tenant,
          query,
          (p) =>
            namesSql(
              p,
              intentAttributes(p, tenant.projectId, {
                intentRegex: query.intent_regex,
                picks: query.picks,
                scope: scopeOf(query),
              }),
              query.attribute_regex,
              ['intent'],
            ),
          signal,
        ),
    }),
    route({
      method: 'GET',
      url: '/bc/v1/agg/intent-attribute-values',
      tag: agg,
      summary: 'Values of intent attributes (name matching attribute_name_regex)',
      description: VALUES,
      query: intentAttributeValuesQuerySchema,
      response: namesResponseSchema,
      handler: ({ tenant, query, signal }) =>
        run(
          db,
          tenant,
          query,
          (p) =>
            valuesSql(
              p,
              intentAttributes(p, tenant.projectId, {
                intentRegex: query.intent_regex,
                scope: scopeOf(query),
              }),
              query.attribute_name_regex,
              query.attribute_value_regex,
              AGG_VALUES_LIMIT,
              ['intent'],
            ),
          signal,
        ),
    }),
  ];
}
