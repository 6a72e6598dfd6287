import { z } from 'zod';

/** Machine words of decisions §1, one per failure a caller can act on. */
export const ERROR_CODES = [
  'invalid_input',
  'unauthorized',
  'forbidden',
  'not_found',
  'method_not_allowed',
  'session_ended',
  'conversation_closed',
  'conflict',
  'payload_too_large',
  'unsupported_media_type',
  'rate_limited',
  'internal',
  'unavailable',
] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

export const issueSchema = z.object({ path: z.string(), message: z.string() });
export type Issue = z.infer<typeof issueSchema>;

/** The error body our service sends. Other servers may send plain text; the client copes with both. */
export const errorBodySchema = z.object({
  status: z.number().int(),
  code: z.enum(ERROR_CODES),
  message: z.string(),
  issues: z.array(issueSchema).optional(),
});
export type ErrorBody = z.infer<typeof errorBodySchema>;

/** The spec's client-side error record (part 7): network failures carry status -1. */
export const errorRecordSchema = z.object({
  errored: z.boolean(),
  status: z.number().int(),
  message: z.string(),
});
export type ErrorRecord = z.infer<typeof errorRecordSchema>;

/** Renders zod issues as `[3].properties.cost`-style paths so a caller can find the offending field. */
export function formatPath(path: ReadonlyArray<PropertyKey>): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else out += out === '' ? String(part) : `.${String(part)}`;
  }
  return out;
}

export function issuesFromZod(error: z.ZodError, prefix: ReadonlyArray<PropertyKey> = []): Issue[] {
  return error.issues.flatMap((issue) =>
    // An unknown key is named at its own path, one issue each: it was one issue at the object's path
    // (`""` for a body) quoting every key, a 10,000-character one twice (found by fuzzing).
    issue.code === 'unrecognized_keys'
      ? issue.keys.map((key) => ({
          path: formatPath([...prefix, ...issue.path, key.length > 100 ? `${key.slice(0, 100)}…` : key]),
          message: 'unknown field',
        }))
      : [{ path: formatPath([...prefix, ...issue.path]), message: issue.message }],
  );
}

/** One line for a person: the first issue with its path, and how many more there are. */
export function summarizeIssues(issues: ReadonlyArray<Issue>): string {
  const first = issues[0];
  if (!first) return 'invalid input';
  const head = first.path ? `${first.path}: ${first.message}` : first.message;
  return issues.length > 1 ? `${head} (and ${issues.length - 1} more)` : head;
}
