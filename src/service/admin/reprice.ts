import { EVENT_NAMES } from '../../shared/event-names.js';
import type { PropertyValue } from '../../shared/primitives.js';
import type { RepriceBody, RepriceResult } from '../../shared/reprice.js';
import { roundCost, tokenCost } from '../ingest/costs.js';
import { PRICES_AS_OF } from '../ingest/price-table.js';
import { costOf, tableCost } from '../ingest/totals.js';
import type { Database, Queryable } from '../store/database.js';
import { exec, type Param, rows as select, text, texts } from '../store/statements.js';

type Props = Record<string, PropertyValue>;

type EventRow = {
  event_id: string;
  event: string;
  session_id: string;
  conversation_id: string | null;
  properties: string;
};

const COUNTED = [EVENT_NAMES.conversationTurn, EVENT_NAMES.conversationUsage];
const MAX_UNKNOWN = 20;

/** `AND ts >= $n AND ts < $n+1` for the bounds given, parameters numbered from `first`. */
function rangeSql(range: RepriceBody, first: number): { sql: string; params: Param[] } {
  const parts: string[] = [];
  const params: Param[] = [];
  for (const [bound, op] of [
    [range.from, '>='],
    [range.to, '<'],
  ] as const) {
    if (bound === undefined) continue;
    params.push(text(bound));
    parts.push(`AND ts ${op} $${first + params.length - 1}::TIMESTAMPTZ`);
  }
  return { sql: parts.join(' '), params };
}

async function updateProperties(q: Queryable, project: string, rows: ReadonlyArray<[string, Props]>) {
  if (rows.length === 0) return;
  await exec(
    q,
    `UPDATE events e SET properties = m.p::JSON
       FROM (SELECT unnest($2) AS id, unnest($3) AS p) m
      WHERE e.project_id = $1 AND e.event_id = m.id`,
    [text(project), texts(rows.map(([id]) => id)), texts(rows.map(([, p]) => JSON.stringify(p)))],
  );
}

/** Whether the price table has the model (under its name or an alias). */
const hasPrice = (model: string): boolean => tokenCost(model, { prompt: 0, completion: 0 }).known;

/**
 * The costs the service priced from tokens (a stored `cost_known` says so; a cost the caller sent has
 * none and is left alone), priced again with the current table.
 */
async function repriceEvents(q: Queryable, project: string, range: RepriceBody, result: RepriceResult) {
  const where = rangeSql(range, 3);
  const rows = await select<EventRow>(
    q,
    `SELECT event_id, event, session_id, conversation_id, properties::VARCHAR AS properties FROM events
      WHERE project_id = $1 AND event IN (SELECT unnest($2)) ${where.sql}
        AND json_exists(properties, '$.cost_known')`,
    [text(project), texts(COUNTED), ...where.params],
  );
  const changed: Array<[string, Props]> = [];
  const unknown = new Set<string>();
  for (const row of rows) {
    const props = JSON.parse(row.properties) as Props;
    if (typeof props.cost_known !== 'boolean') continue;
    const priced = tableCost(props);
    if (!priced) continue;
    result.events_checked++;
    // A model the table prices, on an event lacking one of its two token counts, is no model without
    // a price: it was listed as one (found by probing).
    const { model } = props;
    if (!priced.known && typeof model === 'string' && !hasPrice(model) && unknown.size < MAX_UNKNOWN)
      unknown.add(model);
    if (priced.cost !== props.cost || priced.known !== props.cost_known) {
      changed.push([row.event_id, { ...props, cost: priced.cost, cost_known: priced.known }]);
    }
  }
  await updateProperties(q, project, changed);
  result.events_repriced = changed.length;
  result.unknown_models = [...unknown].sort();
  return rows;
}

/**
 * Each conversation the range touches gets its summary's cost summed again from its turns and
 * usage, as the ingest core sums them (totals.ts), in time order. Summaries are updated in place:
 * running twice changes nothing the second time.
 */
async function resummarise(
  q: Queryable,
  project: string,
  touched: readonly EventRow[],
  result: RepriceResult,
) {
  const keys = new Map<string, [string, string]>();
  for (const row of touched) {
    if (row.conversation_id !== null)
      keys.set(`${row.session_id}\n${row.conversation_id}`, [row.session_id, row.conversation_id]);
  }
  if (keys.size === 0) return;
  const sessions = [...keys.values()].map(([s]) => s);
  const conversations = [...keys.values()].map(([, c]) => c);
  // As cache-load.ts replays a conversation: the caller's events in stored order.
  const rows = await select<EventRow>(
    q,
    `SELECT e.event_id, e.event, e.session_id, e.conversation_id, e.properties::VARCHAR AS properties
       FROM events e JOIN (SELECT unnest($2) AS s, unnest($3) AS c) k
         ON e.session_id = k.s AND e.conversation_id = k.c
      WHERE e.project_id = $1 AND (
        (e.event IN (SELECT unnest($4)) AND e.origin_event_id IS NULL) OR e.event = $5)
      ORDER BY e.ts, e.rowid`,
    [
      text(project),
      texts(sessions),
      texts(conversations),
      texts(COUNTED),
      text(EVENT_NAMES.conversationSummary),
    ],
  );
  const totals = new Map<string, { cost: number; known: boolean }>();
  const summaries: Array<[string, string, Props]> = [];
  for (const row of rows) {
    const key = `${row.session_id}\n${row.conversation_id}`;
    const props = JSON.parse(row.properties) as Props;
    if (row.event === EVENT_NAMES.conversationSummary) {
      summaries.push([key, row.event_id, props]);
      continue;
    }
    const priced = costOf(props);
    if (!priced) continue;
    const t = totals.get(key) ?? { cost: 0, known: true };
    t.cost = roundCost(t.cost + priced.cost);
    if (!priced.known) t.known = false;
    totals.set(key, t);
  }
  const changed: Array<[string, Props]> = [];
  for (const [key, id, props] of summaries) {
    result.summaries_checked++;
    const t = totals.get(key) ?? { cost: 0, known: true };
    if (props.cost !== t.cost || props.cost_known !== t.known) {
      changed.push([id, { ...props, cost: t.cost, cost_known: t.known }]);
    }
  }
  await updateProperties(q, project, changed);
  result.summaries_updated = changed.length;
}

/**
 * `cas reprice` (issue 19): stored usage costs and conversation summaries recomputed with the price
 * table the service runs with, in one write transaction. Conversations still open keep the running
 * totals the ingest core holds in memory: their summaries, made when they close, use those.
 */
export function reprice(db: Database, project: string, range: RepriceBody): Promise<RepriceResult> {
  return db.write(async (q) => {
    const result: RepriceResult = {
      prices_as_of: PRICES_AS_OF,
      events_checked: 0,
      events_repriced: 0,
      summaries_checked: 0,
      summaries_updated: 0,
      unknown_models: [],
    };
    const touched = await repriceEvents(q, project, range, result);
    await resummarise(q, project, touched, result);
    return result;
  });
}
