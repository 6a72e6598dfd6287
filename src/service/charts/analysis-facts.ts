import type { IntentFilter, TraitGroup, UserFilter } from '../../shared/chart-filters.js';
import { EVENT_NAMES } from '../../shared/event-names.js';
import type { ChartContext } from './context.js';
import { INTENT_EVENT } from './event-filter.js';
import { listedRowsOnly, traitGroupKey } from './groups.js';
import { binExpr, eventScan, personsCte } from './scan.js';
import { all, type Query } from './sql.js';
import { selectedCondition, userSelection } from './user-selection.js';

/**
 * The stored analysis as rows, for the conversation and intent analyses (analysis-controls.ts): a
 * conversation is a (session_id, conversation_id) pair with a `Conversation Summary` in the range
 * (its latest, should there be several), binned by that summary; an intent is an `Intent Informed`
 * event of such a conversation, binned by its own time. Persons pass the user filters; `grp` is the
 * person's groupBy trait (NULL, the `(none)` group, for persons without it; with listed values,
 * persons in none of them are left out).
 */

export interface AnalysisFilters {
  userFilters?: UserFilter[] | undefined;
  shownIntents?: IntentFilter[] | undefined;
  groupBy?: TraitGroup | undefined;
}

const num = (name: string) =>
  `coalesce(TRY_CAST(json_extract_string(s.properties, '/${name}') AS DOUBLE), 0)`;

/** The figures of a conversation's summary that the analyses read. */
export type SummaryField = 'turns' | 'duration_s' | 'function_errors' | 'sentiment' | 'n_intents';

const SUMMARY_FIELDS: Record<SummaryField, string> = {
  turns: num('turns'),
  duration_s: num('duration_s'),
  function_errors: num('function_errors'),
  sentiment: "json_extract_string(s.properties, '/sentiment')",
  n_intents: "coalesce(json_array_length(s.properties, '/intents'), 0)",
};
const ALL_FIELDS = Object.keys(SUMMARY_FIELDS) as SummaryField[];

/**
 * CTE `convs`: session_id, conversation_id, person, bin, grp and the `fields` asked for (all by
 * default). Only those are read out of the JSON: the CTE is materialized, so DuckDB cannot drop an
 * unused column, and each extraction costs about as much as the scan (measured on 1M events).
 * `persons: false` (a caller that reads no `person`) leaves the column out, and with it the join
 * resolving it when neither user filters nor groupBy need it.
 */
export function conversationFacts(
  q: Query,
  ctx: ChartContext,
  c: AnalysisFilters,
  fields: readonly SummaryField[] = ALL_FIELDS,
  options: { persons?: boolean } = {},
): string {
  const p = q.params;
  const selected = userSelection(q, ctx, c.userFilters, c.shownIntents);
  const g = c.groupBy;
  const persons = (options.persons ?? true) || selected !== undefined || g !== undefined;
  const where = [
    `s.event = ${p.bind(EVENT_NAMES.conversationSummary)}`,
    's.conversation_id IS NOT NULL',
    persons ? 's.person IS NOT NULL' : 's.user_id IS NOT NULL',
    ...selectedCondition(selected, 's.person'),
  ];
  const scan = `${eventScan(q, ctx, ctx.window, undefined, { persons })} s WHERE ${all(where)}`;
  // The latest summary of each conversation. With no person and at most one field, as arg_max of
  // that field by time: DuckDB turns the QUALIFY into an arg_max too, but of the whole properties
  // text, extracting after, and that payload made the grouping 15% of intent analysis on 1M events.
  // Two fields keep the QUALIFY, so that both always come from one summary when times tie.
  const latest = q.cte(
    'summaries',
    !persons && fields.length <= 1
      ? `SELECT s.session_id, s.conversation_id, ${binExpr(q, ctx, 'max(s.ts)')} AS bin${fields
          .map((f) => `, arg_max(${SUMMARY_FIELDS[f]}, s.ts) AS ${f}`)
          .join('')}
         FROM ${scan} GROUP BY s.session_id, s.conversation_id`
      : `SELECT s.session_id, s.conversation_id${persons ? ', s.person' : ''}, ${binExpr(q, ctx, 's.ts')} AS bin${fields
          .map((f) => `, ${SUMMARY_FIELDS[f]} AS ${f}`)
          .join('')}
         FROM ${scan}
         QUALIFY row_number() OVER (PARTITION BY s.session_id, s.conversation_id ORDER BY s.ts DESC) = 1`,
  );
  return q.cte(
    'convs',
    `SELECT * FROM (SELECT x.*, ${traitGroupKey(q.params, g)} AS grp FROM ${latest} x
       ${g ? `LEFT JOIN ${personsCte(q, ctx)} t ON t.person = x.person` : ''}) ${listedRowsOnly(g?.trait_values)}`,
  );
}

/**
 * CTE `intents`: one row per `Intent Informed` event in the range whose conversation is in `convs`:
 * session_id, conversation_id, person (unless `persons: false`, as for conversationFacts), bin,
 * grp, intent, attrs (its attribute names besides intent and source; listed only `withAttrs`, else
 * empty) and the summary `fields` of its conversation (turns, function_errors and sentiment by default).
 */
export function intentFacts(
  q: Query,
  ctx: ChartContext,
  c: AnalysisFilters,
  withAttrs = false,
  fields: readonly SummaryField[] = ['turns', 'function_errors', 'sentiment'],
  options: { persons?: boolean } = {},
): string {
  const p = q.params;
  const persons = options.persons ?? true;
  const convs = conversationFacts(q, ctx, c, fields, { persons });
  // `=`, not IS NOT DISTINCT FROM: an event with a conversation_id always has a session (the wire
  // schemas require it of track events), and the plain equality is a faster hash join (~20%).
  return q.cte(
    'intents',
    `SELECT s.session_id, s.conversation_id${persons ? ', s.person' : ''}, ${binExpr(q, ctx, 's.ts')} AS bin, cv.grp,
       json_extract_string(s.properties, '/intent') AS intent,
       ${withAttrs ? "list_filter(coalesce(json_keys(s.properties), []), lambda k: k NOT IN ('intent', 'source'))" : '[]::VARCHAR[]'} AS attrs,
       ${fields.map((f) => `cv.${f}`).join(', ') || 'NULL AS none'}
     FROM ${eventScan(q, ctx, ctx.window, undefined, { persons })} s
     JOIN ${convs} cv ON cv.session_id = s.session_id AND cv.conversation_id = s.conversation_id
     WHERE ${all([`s.event = ${p.bind(INTENT_EVENT)}`, "json_extract_string(s.properties, '/intent') IS NOT NULL"])}`,
  );
}

/** The first time each intent name was seen in the project (all of its history, any scope). */
export function firstSeenCte(q: Query, ctx: ChartContext): string {
  const p = q.params;
  return q.cte(
    'first_seen',
    `SELECT json_extract_string(properties, '/intent') AS intent, min(ts) AS first FROM events
     WHERE project_id = ${p.bind(ctx.project)} AND event = ${p.bind(INTENT_EVENT)} GROUP BY 1`,
  );
}
