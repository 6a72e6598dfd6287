import { z } from 'zod';
import { instantSchema } from './primitives.js';

/** `POST /bc/v1/admin/reprice` (our extension, issue 19): recompute stored costs with the service's table. */
export const REPRICE_PATH = '/bc/v1/admin/reprice';

export const repriceBodySchema = z
  .object({
    from: instantSchema.optional().describe('reprice turns and usage at or after this time'),
    to: instantSchema.optional().describe('reprice turns and usage before this time'),
  })
  .refine((b) => b.from === undefined || b.to === undefined || Date.parse(b.from) < Date.parse(b.to), {
    path: ['to'],
    message: 'must be after from',
  });
export type RepriceBody = z.infer<typeof repriceBodySchema>;

export const repriceResponseSchema = z.object({
  prices_as_of: z.string().describe('the date of the built-in table the service prices with'),
  events_checked: z.number().int().min(0).describe('turns and usage the service had priced from tokens'),
  events_repriced: z.number().int().min(0).describe('those whose cost or cost_known changed'),
  summaries_checked: z.number().int().min(0),
  summaries_updated: z.number().int().min(0).describe('Conversation Summary events whose cost changed'),
  unknown_models: z.array(z.string()).describe('models without a price (cost_known false), at most 20'),
});
export type RepriceResult = z.infer<typeof repriceResponseSchema>;
