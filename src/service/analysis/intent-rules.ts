import { z } from 'zod';
import { formatPath } from '../../shared/errors.js';
import { listUdis, rulesOf, seedUdis } from '../intents/store.js';
import type { Queryable } from '../store/database.js';
import { rows, text } from '../store/statements.js';

/**
 * A project's user-defined intents (`cas serve --intents <file>`): a JSON array of
 * `{name, description, patterns}`. A user utterance shows the intent when any pattern matches it.
 * Patterns are RE2 regexes run by DuckDB (`regexp_matches`, case-insensitive, anywhere in the text):
 * the same engine and syntax as chart filters, and never JavaScript's regex engine.
 */
export const intentRuleSchema = z.strictObject({
  name: z.string().trim().min(1, 'must not be empty').max(100, 'must be at most 100 characters'),
  description: z.string().max(2000, 'must be at most 2000 characters').optional(),
  patterns: z
    .array(z.string().min(1, 'must not be empty').max(1000, 'must be at most 1000 characters'))
    .min(1, 'needs at least one pattern')
    .max(100, 'at most 100 patterns'),
});
export type IntentRule = z.infer<typeof intentRuleSchema>;

export const intentRulesSchema = z
  .array(intentRuleSchema)
  .max(1000, 'at most 1000 intents')
  .superRefine((rules, ctx) => {
    const seen = new Set<string>();
    rules.forEach((rule, i) => {
      if (seen.has(rule.name)) ctx.addIssue({ code: 'custom', path: [i, 'name'], message: 'duplicate name' });
      seen.add(rule.name);
    });
  });

/** A bad intents file; the message names the file and the JSON path of the problem. */
export class InvalidIntentsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidIntentsError';
  }
}

export function parseIntentRules(value: unknown, source: string): IntentRule[] {
  const parsed = intentRulesSchema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const where = issue ? formatPath(issue.path) : '';
  const more = parsed.error.issues.length > 1 ? ` (and ${parsed.error.issues.length - 1} more)` : '';
  throw new InvalidIntentsError(
    `${source}: ${where ? `${where}: ` : ''}${issue?.message ?? 'invalid'}${more}`,
  );
}

/** One RE2 alternation per rule, so the analyser binds one constant regex per intent. */
export function ruleRegex(rule: IntentRule): string {
  return rule.patterns.map((p) => `(?:${p})`).join('|');
}

/** Compiles every pattern in DuckDB, so a bad regex fails `serve` at start, naming where it is. */
export async function checkPatterns(
  q: Queryable,
  rules: readonly IntentRule[],
  source: string,
): Promise<void> {
  for (const [i, rule] of rules.entries()) {
    for (const [j, pattern] of rule.patterns.entries()) {
      try {
        await rows(q, "SELECT regexp_matches('', $1, 'i') AS ok", [text(pattern)]);
      } catch (error) {
        const detail = error instanceof Error ? (error.message.split('\n')[0] ?? '') : String(error);
        throw new InvalidIntentsError(
          `${source}: ${formatPath([i, 'patterns', j])}: not a valid RE2 regex (${detail})`,
        );
      }
    }
  }
}

export async function storeIntentRules(q: Queryable, projectId: string, rules: readonly IntentRule[]) {
  await q.run('UPDATE projects SET intents = $1::JSON WHERE project_id = $2', [
    JSON.stringify(rules),
    projectId,
  ]);
}

/**
 * The project's rules: its user-defined intents (intents/store.ts) not archived. A data directory
 * whose project has none yet but kept rules in `projects.intents` (before migration 5) still uses
 * those; a column that no longer parses counts as none.
 */
export async function loadIntentRules(q: Queryable, projectId: string): Promise<IntentRule[]> {
  const udis = await listUdis(q, projectId);
  if (udis.length > 0) return rulesOf(udis);
  const row = await q.one<{ intents: string | null }>(
    'SELECT intents::VARCHAR AS intents FROM projects WHERE project_id = $1',
    [projectId],
  );
  if (!row?.intents) return [];
  const parsed = intentRulesSchema.safeParse(JSON.parse(row.intents));
  return parsed.success ? parsed.data : [];
}

/** `cas serve --intents`: validates the file's rules (regexes compiled by DuckDB) and adds them to the project's intents. */
export async function installIntentRules(
  db: { read: Queryable; write<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> },
  projectId: string,
  intents: { value: unknown; source: string },
): Promise<IntentRule[]> {
  const rules = parseIntentRules(intents.value, intents.source);
  await checkPatterns(db.read, rules, intents.source);
  // Seeds the project's user-defined intents: those of the file it does not have by name are added,
  // nothing is replaced (intents added or edited through /udi stay as they are).
  await db.write((tx) => seedUdis(tx, projectId, rules));
  return rules;
}
