import { z } from 'zod';
import { eventFilterSchema, intentFilterSchema, type traitGroupSchema } from './chart-filters.js';

/**
 * chartControls of the charts the hosted service's OpenAPI adds beyond spec 4.1: funnel, intent
 * distribution, conversation analysis, intent analysis and sentiment analysis. Fields are the
 * OpenAPI's; where it is silent (what a step, a conversation or a fulfilled intent is) the rules are
 * ours, written in each field's description, in the README and in the served OpenAPI. Every one of
 * these charts also takes the filters the four spec charts take (`userFilters`, `shownIntents`).
 */

export const CONVERSATION_ANALYSES = [
  'intentConversion',
  'firstIntentFriction',
  'newIntents',
  'sentiment',
  'duration',
  'prompts',
] as const;
export type ConversationAnalyse = (typeof CONVERSATION_ANALYSES)[number];

export const INTENT_ANALYSES = [
  'intentFulfillmentFriction',
  'intentFulfillmentRate',
  'intentFulfillmentSentiment',
  'intentAcceptanceRate',
  'attributeAcceptanceRate',
  'intentFulfillmentEfficiency',
] as const;
export type IntentAnalyse = (typeof INTENT_ANALYSES)[number];

export const FUNNEL_WINDOW_UNITS = ['hour', 'day', 'week'] as const;
const UNIT_MS = { hour: 3_600_000, day: 86_400_000, week: 604_800_000 } as const;

/** Longest conversion window: a year of hours, far beyond any range a chart may have. */
const MAX_WINDOW_NUMBER = 8_784;

export const conversionWindowSchema = z
  .strictObject({
    number: z
      .number()
      .int('must be a whole number')
      .positive('must be greater than 0')
      .max(MAX_WINDOW_NUMBER, `must be at most ${MAX_WINDOW_NUMBER}`),
    unit: z.enum(FUNNEL_WINDOW_UNITS),
  })
  .meta({
    description:
      'Our extension: how long after a person first did step 1 the later steps may come (fixed hours, ' +
      '24-hour days or 7-day weeks). Absent: until the end of the range.',
  });
export type ConversionWindow = z.output<typeof conversionWindowSchema>;

export function windowMs(w: ConversionWindow): number {
  return w.number * UNIT_MS[w.unit];
}

export const FUNNEL_DESCRIPTION =
  'Funnel (ours where the OpenAPI is silent, first-touch like Mixpanel): eventFilters are the ordered ' +
  "steps. A person enters at their first step-1 event in the range (and in that step's within); " +
  'step k counts the first matching event strictly after the step k-1 event the person reached ' +
  '(events at one instant in the order session/conversation start, identify, the rest, conversation ' +
  'end, session end, then by event_id, so one event never serves two steps), ' +
  'within conversionWindow of the entry and before the range end. A later step-1 event never ' +
  're-enters. count = persons reaching the step, percent = 100 x count / step-1 count. number_of, ' +
  'number_of_operator, combine_previous_operation and groupBy of a step do not apply (steps are ' +
  'always in order). groupBy groups the persons by a trait; highlights: number_of_users (step 1), ' +
  'conversion_rate (last step, percent).';

export const INTENT_DISTRIBUTION_DESCRIPTION =
  'Intent distribution (ours where the OpenAPI is silent): one slice per intent (the `intent` of ' +
  '`Intent Informed` events in the range), value = conversations, as (session_id, conversation_id) ' +
  "pairs, that showed it; largest first, ties by label; percent = share of the slices' total. " +
  "groupBy: by the person's trait; persons without it are a last `(none)` group when the values are " +
  'observed, and left out when groupBy lists them (decisions §6). A conversation that showed several ' +
  'intents counts in each of their slices, so the values may add up to more than the conversations.';

export const SENTIMENT_DESCRIPTION =
  'Sentiment analysis (ours where the OpenAPI is silent): conversations, as (session_id, ' +
  'conversation_id) pairs, whose `Conversation Summary` is in the range and whose `Intent Informed` ' +
  'events matching intentFilter (intent, with, within) number number_of_operator number_of (default ' +
  '>= 1; `Any Intent`: any intent), split into positive, neutral and negative slices by the ' +
  "summary's sentiment; percent = share of the three.";

export const CONVERSATION_ANALYSIS_DESCRIPTION =
  'Conversation analysis (ours where the OpenAPI is silent): a conversation is a (session_id, ' +
  'conversation_id) pair with a `Conversation Summary`, in the bin of that summary (its close). ' +
  'intentConversion: count = conversations, conversion = percent with at least one intent. ' +
  'firstIntentFriction: percent of conversations with an intent that had function errors or a ' +
  'negative sentiment (their first intent was not met smoothly). newIntents: new_intents = intent ' +
  'names first seen in the project in the bin, unique_users = persons showing an intent in the bin, ' +
  'average = new_intents / unique_users (the OpenAPI\'s "new intents expressed / unique users"). sentiment: count per bin, totals per label in the ' +
  'highlights. duration: total and mean duration_s. prompts: total turns, average_sec = seconds per turn.';

export const INTENT_ANALYSIS_DESCRIPTION =
  'Intent analysis (ours where the OpenAPI is silent): each `Intent Informed` event of a conversation ' +
  'with a `Conversation Summary`, in the bin of the intent. An intent is fulfilled when its ' +
  'conversation had no function errors; accepted when the conversation went on after it (2 or more ' +
  "turns). intentFulfillmentFriction: turns of the fulfilled intents' conversations (total and per " +
  'intent). intentFulfillmentRate: percent fulfilled. intentFulfillmentSentiment: fulfilled intents, ' +
  "their conversations' sentiment in the highlights. intentAcceptanceRate: percent accepted. " +
  'attributeAcceptanceRate: attributes (properties besides intent and source) of the intents, percent ' +
  'whose intent was accepted. intentFulfillmentEfficiency: percent of fulfilled intents done in one turn.';

/**
 * The controls of the five charts, given the range, user-filter and intent fields of the spec charts.
 * `binless` is the range of the three that draw no time bins (funnel, intents, sentiment): the bin
 * limit refused them a range of years by day, though they never build a bin (found by probing).
 */
export function analysisControlsSchemas<
  R extends z.ZodType,
  B extends z.ZodType,
  U extends z.ZodType,
  S extends z.ZodType,
>(range: R, binless: B, userFilters: U, shownIntents: S, groupBy: typeof traitGroupSchema) {
  const common = { range, userFilters, shownIntents, groupBy: groupBy.optional() };
  const unbinned = { ...common, range: binless };
  return {
    funnel: z
      .strictObject({
        ...unbinned,
        eventFilters: z.array(eventFilterSchema).min(1, 'at least one step is required'),
        conversionWindow: conversionWindowSchema.optional(),
      })
      .meta({ description: FUNNEL_DESCRIPTION }),
    'intent-distribution': z.strictObject(unbinned).meta({ description: INTENT_DISTRIBUTION_DESCRIPTION }),
    'conversation-analysis': z
      .strictObject({ ...common, analyse: z.enum(CONVERSATION_ANALYSES) })
      .meta({ description: CONVERSATION_ANALYSIS_DESCRIPTION }),
    'intent-analysis': z
      .strictObject({ ...common, analyse: z.enum(INTENT_ANALYSES) })
      .meta({ description: INTENT_ANALYSIS_DESCRIPTION }),
    'sentiment-analysis': z
      .strictObject({ ...unbinned, intentFilter: intentFilterSchema })
      .meta({ description: SENTIMENT_DESCRIPTION }),
  };
}
