import type { Action } from '../context.js';

/** Each command's action, loaded only when that command runs (keeps `--help` and `--version` light). */
export const ACTIONS: Record<string, () => Promise<Action>> = {
  identify: async () => (await import('./identify.js')).identify,
  alias: async () => (await import('./identify.js')).alias,
  serve: async () => (await import('./serve.js')).serve,
  import: async () => (await import('./import.js')).importAction,
  chart: async () => (await import('./chart.js')).chart,
  tail: async () => (await import('./tail.js')).tail,
};
