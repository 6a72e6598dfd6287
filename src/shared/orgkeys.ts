import { z } from 'zod';

/**
 * The organization's API keys (`/orgkeys`). Keys are stored as SHA-256 only, so a secret is shown
 * once, when created; lists show `apikey` as the key's id (`key_` + 16 hex digits of its hash), which
 * revoke and rotate accept as well as the secret. A key manages only its own organization (there is
 * no super-admin key locally).
 */

export const orgKeyRecordSchema = z.object({
  organization_id: z.string(),
  apikey: z.string().describe('the secret when just created; otherwise the key id'),
  key_id: z.string(),
  created_at: z.string(),
  label: z.string().nullable(),
  current: z.boolean().describe('true for the key that made this request'),
});
export type OrgKeyRecord = z.output<typeof orgKeyRecordSchema>;

/**
 * What a client takes from `/orgkeys`: the hosted service's answer is `{organization_id, apikey}`
 * alone (its list gives each key's secret), so our fields are optional; every valid hosted answer
 * failed `cas keys` (found by probing).
 */
export const orgKeyAnswerSchema = orgKeyRecordSchema.partial({
  key_id: true,
  created_at: true,
  label: true,
  current: true,
});
export type OrgKeyAnswer = z.output<typeof orgKeyAnswerSchema>;

export const orgKeyCreateSchema = z.strictObject({
  organization_id: z.string().min(1).max(100),
  label: z.string().max(100).optional(),
  rotate: z
    .string()
    .min(1)
    .max(200)
    .optional()
    .describe('our extension: a key (secret or id) that the new key replaces, revoked in the same step'),
});
export type OrgKeyCreate = z.output<typeof orgKeyCreateSchema>;

/**
 * Why a secret could never sign in, if so. A request's Authorization value is read trimmed, a leading
 * `Bearer ` as its scheme, and its bytes as Latin-1: a key with surrounding spaces, that prefix or a
 * character outside printable ASCII was stored, and then refused at every request (found by probing).
 */
export function apiKeyProblem(secret: string): string | undefined {
  if (!/^[\x20-\x7e]*$/.test(secret)) return 'must be printable ASCII: a request header carries no other';
  if (secret.trim() !== secret) return 'must not begin or end with a space';
  if (/^bearer(\s|$)/i.test(secret))
    return 'must not begin with "Bearer ": a request reads that as its scheme';
  return undefined;
}

export const orgKeyAssociateSchema = z.strictObject({
  organization_id: z.string().min(1).max(100),
  apikey: z
    .string()
    .min(16, 'must be at least 16 characters')
    .max(200, 'must be at most 200 characters')
    .superRefine((secret, ctx) => {
      const problem = apiKeyProblem(secret);
      if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
    }),
  label: z.string().max(100).optional(),
});

export const orgKeyDeleteQuerySchema = z.object({
  apikey: z
    .string()
    // An empty value read as absent revoked every other key of the organization (found by probing).
    .min(1, "must not be empty: leave apikey out to revoke every key but the caller's")
    .max(200)
    .optional()
    .describe('secret or key id; absent: every key of the organization but the one making the request'),
  organization_id: z.string().optional(),
  app_id: z.string().optional(),
});

export const orgKeysDeletedSchema = z.object({ status: z.literal('ok'), revoked: z.array(z.string()) });
/** The hosted service's DELETE answers 200 with no body. */
export const orgKeysDeletedAnswerSchema = orgKeysDeletedSchema.optional();
