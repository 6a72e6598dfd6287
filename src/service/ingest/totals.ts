import type { PropertyValue } from '../../shared/primitives.js';
import { type PricedCost, roundCost, tokenCost } from './costs.js';
import type { ConversationState } from './state.js';

/** The event kinds that count towards a conversation's summary. */
export type CountedKind = 'turn' | 'usage' | 'function';

type Props = Readonly<Record<string, PropertyValue>>;

const INTENT_ATTRIBUTE_PREFIX = 'intent_';

function num(value: PropertyValue | undefined): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : 0;
}

/**
 * decisions §5: a direct `cost` as given, else model + tokens priced from the table. A stored event
 * whose cost the service priced carries `cost_known`, so replaying stored events after a restart
 * keeps an unknown model unknown.
 */
export function costOf(props: Props): PricedCost | undefined {
  const { cost } = props;
  if (typeof cost === 'number') return { cost, known: props.cost_known !== false };
  return tableCost(props);
}

const count = (value: PropertyValue | undefined) => (typeof value === 'number' ? value : undefined);

/**
 * The cost the price table gives model + tokens (with cached, reasoning and batch detail), whatever
 * `cost` says. With one of the two counts missing (a log with `output_tokens` only), the count given
 * is priced and the cost marked unknown: a partial sum, never $0 silently; so are tokens without a
 * model (0, unknown).
 */
export function tableCost(props: Props): PricedCost | undefined {
  const { model, prompt_tokens: prompt, completion_tokens: completion } = props;
  const hasPrompt = typeof prompt === 'number';
  const hasCompletion = typeof completion === 'number';
  if (!hasPrompt && !hasCompletion) return undefined;
  // Tokens spent on a model nobody named cannot be priced: unknown, not a known $0 (found by probing).
  if (typeof model !== 'string') return { cost: 0, known: false };
  const priced = tokenCost(model, {
    prompt: hasPrompt ? prompt : 0,
    completion: hasCompletion ? completion : 0,
    cachedRead: count(props.cached_prompt_tokens),
    cacheWrite: count(props.cache_creation_tokens),
    cacheWriteHour: count(props.cache_creation_1h_tokens),
    reasoning: count(props.reasoning_tokens),
    batch: props.batch === true,
  });
  return hasPrompt && hasCompletion ? priced : { cost: priced.cost, known: false };
}

/** A function call failed when its properties carry an `error` or `success: false` (decisions §5). */
export function isFunctionError(props: Props): boolean {
  const { error, success } = props;
  const hasError = error !== undefined && error !== false && error !== '' && error !== 0;
  return hasError || success === false;
}

/**
 * The intent a turn is labelled with (labelled imports), with its attributes: turn properties named
 * `intent_<attribute>` (e.g. `intent_category`), so they cannot be confused with the turn's own.
 */
export function labelOf(
  props: Props,
): { name: string; attributes: Record<string, PropertyValue> } | undefined {
  const name = props.intent;
  if (typeof name !== 'string' || name.trim() === '') return undefined;
  const attributes: Record<string, PropertyValue> = {};
  for (const [key, value] of Object.entries(props)) {
    if (key.startsWith(INTENT_ATTRIBUTE_PREFIX) && key.length > INTENT_ATTRIBUTE_PREFIX.length) {
      attributes[key.slice(INTENT_ATTRIBUTE_PREFIX.length)] = value;
    }
  }
  return { name: name.trim(), attributes };
}

/** Adds one turn, usage or function event to its conversation's totals; the same code replays stored history. */
export function accumulate(c: ConversationState, kind: CountedKind, props: Props, ts: number): void {
  const t = c.totals;
  if (kind === 'function') {
    t.functionCalls++;
    if (isFunctionError(props)) t.functionErrors++;
    return;
  }
  if (kind === 'turn') {
    t.turns++;
    if (typeof props.user === 'string') c.utterances.push({ text: props.user, ts });
    const label = labelOf(props);
    if (label && !c.labels.has(label.name)) c.labels.set(label.name, label.attributes);
  }
  t.promptTokens += num(props.prompt_tokens);
  t.completionTokens += num(props.completion_tokens);
  const priced = costOf(props);
  if (priced) {
    t.cost = roundCost(t.cost + priced.cost);
    if (!priced.known) t.costKnown = false;
  }
}
