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
  /** Failed authentications per remote address (a bucket of failures; empty: 429 for that address). */
  authFailureRatePerSecond: 1,
  authFailureBurst: 20,
  /** Time to receive a request's headers, and the whole request (headers and body): 408 after. */
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  /** Open connections, in all and from one remote address; beyond them a new connection gets 503. */
  maxConnections: 1_000,
  maxConnectionsPerAddress: 100,
  /** Request bodies being read or processed at once, in bytes; beyond it 503 with Retry-After. */
  bodyBytesInFlight: 64 * 1024 * 1024,
  /** Bytes of answers not yet written out to their clients (slow or stalled readers); beyond it 503. */
  answerBytesInFlight: 256 * 1024 * 1024,
  liveEventsDefault: 150,
  liveEventsMax: 10_000,
} as const;

export type Limits = { -readonly [K in keyof typeof LIMITS]: number };
