import { z } from 'zod';

/**
 * Our extensions of the wire, named in /healthz so a client can tell our service from one that lacks
 * them (the hosted service): `import-provisional-ends`, ends an import adds are reopened by later
 * history; `import-derived-sessions`, sessions derived from activity join stored ones of the same key;
 * `usage-token-details`, turns and usage carry cached/cache-written/reasoning tokens and `batch`;
 * `chart-extensions`, a segmentation series' `measure` and a funnel's `conversionWindow`;
 * `intent-patterns`, a user-defined intent's RE2 `patterns`.
 */
export const SERVICE_FEATURES = [
  'import-provisional-ends',
  'import-derived-sessions',
  'usage-token-details',
  'chart-extensions',
  'intent-patterns',
] as const;

/** `GET /healthz` as our service answers it (decisions §1). */
export const healthSchema = z.object({
  status: z.literal('ok'),
  version: z.string(),
  features: z.array(z.string()).describe('wire extensions this service implements'),
});

/** What the client accepts from any server: other deployments may omit the version or word the status differently. */
export const lenientHealthSchema = z.object({
  status: z.string(),
  version: z.string().optional(),
  features: z.array(z.string()).optional(),
});
export type Health = z.infer<typeof lenientHealthSchema>;
