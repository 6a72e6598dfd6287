/** One line per benchmark: name → module with `run(args)`. */
export const BENCH_LIST: Record<string, () => Promise<{ run(args: string[]): Promise<void> }>> = {
  charts: () => import('./charts.js'),
  import: () => import('./import.js'),
  ingest: () => import('./ingest.js'),
  load: () => import('./load.js'),
  startup: () => import('./startup.js'),
};
