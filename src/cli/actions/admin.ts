import type { OrderedFlag } from '../../commands/chart-sequence.js';
import { runCohortCreate, runCohortDelete, runCohortList, runCohortShow } from '../../commands/cohorts.js';
import { runIntentAdd, runIntentList, runIntentRemove } from '../../commands/intents.js';
import { runKeyCreate, runKeyList, runKeyRevoke } from '../../commands/keys.js';
import { renderDone, renderIntent, renderIntents, renderKeys, renderNewKey } from '../../render/admin.js';
import { renderCohort, renderCohortList, renderCohortShow } from '../../render/cohorts.js';
import { type Action, withConnection } from '../context.js';
import { EXIT } from '../exit-codes.js';
import { listingOptions } from './discovery.js';

/** `cas cohorts …`, `cas intents …`, `cas keys …`. */

const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);
const texts = (value: unknown): string[] | undefined =>
  Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : undefined;

function orderedFlags(value: unknown): OrderedFlag[] {
  if (!Array.isArray(value)) return [];
  return value.flatMap((item: unknown) => {
    if (item === null || typeof item !== 'object') return [];
    const { flag, value: v } = item as Record<string, unknown>;
    return typeof flag === 'string' && typeof v === 'string' ? [{ flag, value: v }] : [];
  });
}

export const cohortsList: Action = async (ctx) => {
  const result = await withConnection(ctx, (c) => runCohortList({}, c));
  ctx.out(renderCohortList(result, ctx.format, listingOptions(ctx)));
  return EXIT.ok;
};

export const cohortsCreate: Action = async (ctx, args) => {
  const f = ctx.flags;
  const options = {
    name: args[0] ?? '',
    description: text(f.description),
    userWhere: texts(f.userWhere),
    sequence: orderedFlags(f.sequence),
    cohort: texts(f.cohort),
    any: f.any === true,
  };
  const result = await withConnection(ctx, (c) => runCohortCreate(options, c));
  ctx.out(renderCohort(result, ctx.format, listingOptions(ctx)));
  return EXIT.ok;
};

export const cohortsShow: Action = async (ctx, args) => {
  const result = await withConnection(ctx, (c) =>
    runCohortShow({ cohort: args[0] ?? '', members: text(ctx.flags.members) }, c),
  );
  ctx.out(renderCohortShow(result, ctx.format, listingOptions(ctx)));
  return EXIT.ok;
};

export const cohortsDelete: Action = async (ctx, args) => {
  const result = await withConnection(ctx, (c) => runCohortDelete({ cohort: args[0] ?? '' }, c));
  ctx.out(renderDone(result, ctx.format, listingOptions(ctx)));
  return EXIT.ok;
};

export const intentsList: Action = async (ctx) => {
  const result = await withConnection(ctx, (c) => runIntentList({}, c));
  ctx.out(renderIntents(result, ctx.format, listingOptions(ctx)));
  return EXIT.ok;
};

export const intentsAdd: Action = async (ctx, args) => {
  const f = ctx.flags;
  const options = {
    name: args[0] ?? '',
    description: text(f.description),
    pattern: texts(f.pattern),
    attribute: texts(f.attribute),
  };
  const result = await withConnection(ctx, (c) => runIntentAdd(options, c));
  ctx.out(renderIntent(result, ctx.format, listingOptions(ctx)));
  return EXIT.ok;
};

export const intentsRemove: Action = async (ctx, args) => {
  const result = await withConnection(ctx, (c) => runIntentRemove({ intent: args[0] ?? '' }, c));
  ctx.out(renderDone(result, ctx.format, listingOptions(ctx)));
  return EXIT.ok;
};

export const keysList: Action = async (ctx) => {
  const result = await withConnection(ctx, (c) => runKeyList({}, c));
  ctx.out(renderKeys(result, ctx.format, listingOptions(ctx)));
  return EXIT.ok;
};

export const keysCreate: Action = async (ctx) => {
  const f = ctx.flags;
  const result = await withConnection(ctx, (c) =>
    runKeyCreate({ label: text(f.label), rotate: text(f.rotate) }, c),
  );
  ctx.out(renderNewKey(result, ctx.format, listingOptions(ctx)));
  ctx.log('cas: the secret above is shown this once (the service keeps only its hash): store it now');
  return EXIT.ok;
};

export const keysRevoke: Action = async (ctx, args) => {
  const result = await withConnection(ctx, (c) => runKeyRevoke({ key: args[0] ?? '' }, c));
  ctx.out(renderDone(result, ctx.format, listingOptions(ctx)));
  return EXIT.ok;
};
