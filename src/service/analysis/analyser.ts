import type { PropertyValue } from '../../shared/primitives.js';
import type { Queryable } from '../store/database.js';
import type { IntentRule } from './intent-rules.js';

/**
 * Post-conversation analysis (decisions §5) behind one interface, so a model-backed analyser can
 * replace the lexical one without touching ingestion. It runs inside the ingest transaction, once per
 * batch for every conversation the batch closed.
 */
export type SentimentLabel = 'positive' | 'neutral' | 'negative';

export interface AnalysisInput {
  conversationId: string;
  /** The user's utterances in turn order. */
  utterances: readonly string[];
  /** Intents labelled on turns (`intent` property), first occurrence first, with their attributes. */
  labels: ReadonlyMap<string, Readonly<Record<string, PropertyValue>>>;
}

export interface IntentFinding {
  name: string;
  /** Properties of the `Intent Informed` event besides `intent`. */
  attributes: Record<string, PropertyValue>;
}

export interface ConversationAnalysis {
  intents: IntentFinding[];
  sentiment: SentimentLabel;
  /** The scorer's own number behind the label (comparative AFINN score for the lexical analyser). */
  sentimentScore: number;
}

export interface ConversationAnalyser {
  /** One result per input, in the same order. */
  analyse(
    q: Queryable,
    rules: readonly IntentRule[],
    conversations: readonly AnalysisInput[],
  ): Promise<ConversationAnalysis[]>;
}
