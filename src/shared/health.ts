import { z } from 'zod';

/** `GET /healthz` as our service answers it (decisions §1). */
export const healthSchema = z.object({ status: z.literal('ok'), version: z.string() });

/** What the client accepts from any server: other deployments may omit the version or word the status differently. */
export const lenientHealthSchema = z.object({ status: z.string(), version: z.string().optional() });
export type Health = z.infer<typeof lenientHealthSchema>;
