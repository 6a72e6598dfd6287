import { EVENT_NAMES } from '../../shared/event-names.js';
import type { ConversationAnalyser, ConversationAnalysis } from '../analysis/analyser.js';
import type { Queryable } from '../store/database.js';
import { clientSentiment } from './client-analysis.js';
import type { PendingClose, Planner } from './planner.js';
import type { ProjectCache } from './project-cache.js';
import { type EventRow, generatedId } from './rows.js';

/** decisions §5: the `Conversation Summary` of a closed conversation, then one `Intent Informed` per intent. */
function analysisRows(p: PendingClose, result: ConversationAnalysis): EventRow[] {
  const c = p.conversation;
  const t = c.totals;
  const base = {
    type: 'track' as const,
    ts: p.ts,
    userId: p.userId,
    sessionId: p.session.id,
    conversationId: c.id,
    originEventId: p.origin,
    owner: p.owner,
  };
  const summary: EventRow = {
    ...base,
    eventId: generatedId(p.origin, `summary:${c.id}`),
    event: EVENT_NAMES.conversationSummary,
    properties: {
      turns: t.turns,
      duration_s: Math.max(0, Math.round(p.ts - c.startedAt) / 1000),
      cost: t.cost,
      prompt_tokens: t.promptTokens,
      completion_tokens: t.completionTokens,
      function_calls: t.functionCalls,
      function_errors: t.functionErrors,
      intents: result.intents.map((i) => i.name),
      // The app's own analysis, sent with the end, over the lexical one (client-analysis.ts).
      sentiment: clientSentiment(c.properties) ?? result.sentiment,
      sentiment_score: result.sentimentScore,
      cost_known: t.costKnown,
    },
  };
  const intents = result.intents.map(
    (intent): EventRow => ({
      ...base,
      eventId: generatedId(p.origin, `intent:${c.id}:${intent.name}`),
      event: EVENT_NAMES.intentInformed,
      properties: { ...intent.attributes, intent: intent.name },
    }),
  );
  return [summary, ...intents];
}

/**
 * Runs the analyser over every conversation the planned requests closed (one call for all of them)
 * and lays each request's rows out in order, the analysis rows where each conversation closed.
 */
export async function analyseAndLayOut(
  q: Queryable,
  cache: ProjectCache,
  planners: readonly Planner[],
  analyser: ConversationAnalyser,
): Promise<EventRow[][]> {
  const closes = planners.flatMap((p) => p.closes);
  const inputs = closes.map((p) => ({
    conversationId: p.conversation.id,
    utterances: p.conversation.utterances.map((u) => u.text),
    labels: p.conversation.labels,
  }));
  const results = inputs.length > 0 ? await analyser.analyse(q, cache.intents, inputs) : [];
  const byClose = new Map(closes.map((p, i) => [p, results[i]]));
  return planners.map((planner) => {
    const rows: EventRow[] = [];
    for (const slot of planner.slots) {
      if (!('close' in slot)) {
        rows.push(slot);
        continue;
      }
      const result = byClose.get(slot.close);
      if (!result)
        throw new Error(`the analyser returned no result for conversation ${slot.close.conversation.id}`);
      rows.push(...analysisRows(slot.close, result));
    }
    return rows;
  });
}
