import type { Action } from '../context.js';

/** Each command's action, loaded only when that command runs (keeps `--help` and `--version` light). */
export const ACTIONS: Record<string, () => Promise<Action>> = {
  identify: async () => (await import('./identify.js')).identify,
  alias: async () => (await import('./identify.js')).alias,
  serve: async () => (await import('./serve.js')).serve,
  import: async () => (await import('./import.js')).importAction,
  reprice: async () => (await import('./reprice.js')).reprice,
  chart: async () => (await import('./chart.js')).chart,
  report: async () => (await import('./report.js')).report,
  events: async () => (await import('./discovery.js')).events,
  properties: async () => (await import('./discovery.js')).properties,
  'users-list': async () => (await import('./discovery.js')).usersList,
  'users-show': async () => (await import('./discovery.js')).usersShow,
  'cohorts-list': async () => (await import('./admin.js')).cohortsList,
  'cohorts-create': async () => (await import('./admin.js')).cohortsCreate,
  'cohorts-show': async () => (await import('./admin.js')).cohortsShow,
  'cohorts-delete': async () => (await import('./admin.js')).cohortsDelete,
  'intents-list': async () => (await import('./admin.js')).intentsList,
  'intents-add': async () => (await import('./admin.js')).intentsAdd,
  'intents-remove': async () => (await import('./admin.js')).intentsRemove,
  'keys-list': async () => (await import('./admin.js')).keysList,
  'keys-create': async () => (await import('./admin.js')).keysCreate,
  'keys-revoke': async () => (await import('./admin.js')).keysRevoke,
  config: async () => (await import('./config.js')).config,
  tail: async () => (await import('./tail.js')).tail,
};
