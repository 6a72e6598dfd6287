import Sentiment from 'sentiment';
import type { PropertyValue } from '../../shared/primitives.js';
import type { Queryable } from '../store/database.js';
import { int, ints, type Param, rows, text, texts } from '../store/statements.js';
import type {
  AnalysisInput,
  ConversationAnalyser,
  ConversationAnalysis,
  IntentFinding,
  SentimentLabel,
} from './analyser.js';
import { type IntentRule, ruleRegex } from './intent-rules.js';

/**
 * Lexicon sentiment with the `sentiment` package (AFINN-165 word list, negation-aware). Its
 * comparative score is the sum of word valences per token; a small dead zone around 0 keeps a
 * conversation with one mildly coloured word among many neutral ones neutral.
 */
const scorer = new Sentiment();
const DEAD_ZONE = 0.05;

export function scoreSentiment(utterances: readonly string[]): { label: SentimentLabel; score: number } {
  if (utterances.length === 0) return { label: 'neutral', score: 0 };
  const result = scorer.analyze(utterances.join('\n'));
  const score = Number.isFinite(result.comparative) ? Math.round(result.comparative * 1000) / 1000 : 0;
  const label = score >= DEAD_ZONE ? 'positive' : score <= -DEAD_ZONE ? 'negative' : 'neutral';
  return { label, score };
}

const RULES_PER_QUERY = 100;

/**
 * For each conversation (by input index), the rules any of its utterances match, ordered by the first
 * matching utterance, then by rule order. One query per hundred rules for the whole batch; each rule
 * is one bound RE2 constant, so DuckDB compiles it once, not once per utterance.
 */
async function matchRules(
  q: Queryable,
  rules: readonly IntentRule[],
  inputs: ReadonlyArray<{ index: number; utterances: readonly string[] }>,
): Promise<Map<number, string[]>> {
  const owners: number[] = [];
  const texts_: string[] = [];
  for (const input of inputs) {
    for (const utterance of input.utterances) {
      owners.push(input.index);
      texts_.push(utterance);
    }
  }
  const first = new Map<number, Map<number, number>>(); // conversation → rule → first utterance
  for (let from = 0; from < rules.length; from += RULES_PER_QUERY) {
    const chunk = rules.slice(from, from + RULES_PER_QUERY);
    const tests = chunk.map((_, i) => `regexp_matches(u.t, $${i + 4}, 'i')`).join(', ');
    const params: Param[] = [int(0), ints(owners), texts(texts_), ...chunk.map((r) => text(ruleRegex(r)))];
    const found = await rows<{ k: number; hits: boolean[] }>(
      q,
      `SELECT u.k::DOUBLE AS k, list_value(${tests}) AS hits
         FROM (SELECT unnest($2) AS c, unnest($3) AS t, unnest(range($1, len($2))) AS k) u`,
      params,
    );
    for (const { k, hits } of found) {
      const owner = owners[k]!;
      const byRule = first.get(owner) ?? new Map<number, number>();
      first.set(owner, byRule);
      hits.forEach((hit, i) => {
        if (hit && !byRule.has(from + i)) byRule.set(from + i, k);
      });
    }
  }
  const result = new Map<number, string[]>();
  for (const [owner, byRule] of first) {
    const ordered = [...byRule].sort(([ra, ka], [rb, kb]) => ka - kb || ra - rb);
    result.set(
      owner,
      ordered.map(([rule]) => rules[rule]!.name),
    );
  }
  return result;
}

function labelled(labels: AnalysisInput['labels']): IntentFinding[] {
  return [...labels].map(([name, attributes]) => ({
    name,
    attributes: { ...(attributes as Record<string, PropertyValue>), source: 'label' },
  }));
}

/**
 * decisions §5: intents from turn labels, else from the project's rules, else none; sentiment from
 * the AFINN lexicon over the user's utterances.
 */
export class LexicalAnalyser implements ConversationAnalyser {
  async analyse(
    q: Queryable,
    rules: readonly IntentRule[],
    conversations: readonly AnalysisInput[],
  ): Promise<ConversationAnalysis[]> {
    const unlabelled = conversations
      .map((c, index) => ({ index, utterances: c.utterances, labelled: c.labels.size > 0 }))
      .filter((c) => !c.labelled && c.utterances.length > 0);
    const byRule =
      rules.length > 0 && unlabelled.length > 0
        ? await matchRules(q, rules, unlabelled)
        : new Map<number, string[]>();
    return conversations.map((c, index) => {
      const intents =
        c.labels.size > 0
          ? labelled(c.labels)
          : (byRule.get(index) ?? []).map((name) => ({ name, attributes: { source: 'rule' } }));
      const { label, score } = scoreSentiment(c.utterances);
      return { intents, sentiment: label, sentimentScore: score };
    });
  }
}
