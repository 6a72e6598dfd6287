import type { WireEventOf } from '../../shared/event-bodies.js';
import type { Properties, PropertyValue } from '../../shared/primitives.js';

type End = Pick<WireEventOf<'end_conversation'>, 'conversation_analysis' | 'intent_analysis'>;

/**
 * The analyses an app sent with a conversation's end (the hosted API's `conversation_analysis` and
 * `intent_analysis`), as flat properties of its `Conversation Ended` (properties hold no objects).
 */
export function clientAnalysisProperties(e: End): Properties | undefined {
  const c = e.conversation_analysis;
  const i = e.intent_analysis;
  if (c === undefined && i === undefined) return undefined;
  return {
    ...(c === undefined
      ? {}
      : { analysis_summary: c.summary, analysis_sentiment: c.sentiment, analysis_cost: c.cost }),
    ...(i === undefined
      ? {}
      : {
          intent_summary: i.summary,
          intent_sentiment: i.sentiment,
          intent_fulfilled: i.intent_fulfilled,
          intent_analysis_cost: i.cost,
        }),
  };
}

const SENTIMENTS: ReadonlySet<PropertyValue> = new Set(['positive', 'negative', 'neutral']);

/** The sentiment an app gave its conversation, which the summary takes over the lexical one. */
export function clientSentiment(
  properties: Properties | null,
): 'positive' | 'negative' | 'neutral' | undefined {
  const given = properties?.analysis_sentiment;
  return given !== undefined && SENTIMENTS.has(given)
    ? (given as 'positive' | 'negative' | 'neutral')
    : undefined;
}
