/** Server defaults of decisions.md §2; every one is configurable on `cas serve`. */
export const LIMITS = {
  bodyBytes: 10 * 1024 * 1024,
  eventsPerRequest: 2_000,
  eventBytes: 1024 * 1024,
  idLength: 100,
  eventIdLength: 128,
  keysPerObject: 200,
  keyLength: 100,
  chartBins: 1_000,
  sessionIdsPerPoint: 1_000,
  drilldownRows: 1_000,
  ingestRatePerSecond: 200,
  ingestBurst: 400,
  chartRatePerSecond: 20,
  chartBurst: 40,
  liveEventsDefault: 150,
  liveEventsMax: 10_000,
} as const;

export type Limits = { -readonly [K in keyof typeof LIMITS]: number };
