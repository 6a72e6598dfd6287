import { z } from 'zod';
import { idSchema, traitsSchema } from './primitives.js';

export const identifyBodySchema = z
  .object({
    id: idSchema.optional(),
    device_id: idSchema.optional(),
    traits: traitsSchema.optional(),
  })
  .refine((b) => b.id !== undefined || b.device_id !== undefined, {
    message: 'at least one of id and device_id is required',
    path: ['id'],
  });
export type IdentifyBody = z.infer<typeof identifyBodySchema>;

export const aliasBodySchema = z.object({ id: idSchema, previous_id: idSchema });
export type AliasBody = z.infer<typeof aliasBodySchema>;

/** The user record of spec part 2, as identify and alias return it. */
export const userRecordSchema = z.object({
  organization_id: z.string(),
  app_id: z.string(),
  user_id: z.string(),
  id: z.string(),
  aliases: z.array(z.string()),
  created_at: z.string(),
  traits: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])),
});
export type UserRecord = z.infer<typeof userRecordSchema>;
