/**
 * The chart names of `cas chart`, `cas report --chart` and `cas cohorts create`'s flag grammar. A
 * module of its own with no imports: the command tree reads it to build `--help`, which loads nothing
 * else (test/startup.test.ts).
 */
export const CLI_CHARTS = [
  'segmentation',
  'retention',
  'sessions',
  'users',
  'funnel',
  'intents',
  'sentiment',
  'conversations',
] as const;
export type CliChart = (typeof CLI_CHARTS)[number];
