import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { answerOf, knownKeysOnly } from './answer-keys.js';
import { cohortRecordSchema } from './cohorts.js';

describe('knownKeysOnly', () => {
  it('drops unknown keys at every depth: objects, arrays, optionals, defaults, pipes and unions', () => {
    const schema = z.strictObject({
      a: z.string(),
      list: z.array(z.strictObject({ n: z.number().default(1) })).optional(),
      name: z.string().trim().pipe(z.string()),
      pick: z.discriminatedUnion('type', [
        z.strictObject({ type: z.literal('x'), x: z.number() }),
        z.strictObject({ type: z.literal('y'), y: z.string() }),
      ]),
    });
    const value = {
      a: 'a',
      _id: 1,
      list: [{ n: 2, extra: true }, { extra: 'x' }],
      name: ' n ',
      pick: { type: 'y', y: 'yes', _id: 'z' },
    };
    expect(schema.safeParse(value).success).toBe(false);
    expect(knownKeysOnly(schema, value)).toEqual({
      a: 'a',
      list: [{ n: 2 }, {}],
      name: ' n ',
      pick: { type: 'y', y: 'yes' },
    });
    expect(answerOf(schema).parse(value)).toEqual({
      a: 'a',
      list: [{ n: 2 }, { n: 1 }],
      name: 'n',
      pick: { type: 'y', y: 'yes' },
    });
    // What no option fits is left as it is, for the schema to refuse.
    expect(answerOf(schema).safeParse({ ...value, pick: { type: 'q' } }).success).toBe(false);
  });

  it("reads a hosted cohort whose terms carry a stored document's _id", () => {
    const hosted = {
      organization_id: 'o',
      app_id: 'p',
      cohort_id: '665f0c2ab1c2d3e4f5a6b7c8',
      created_at: '2025-01-01T00:00:00Z',
      updated_at: '2025-01-01T00:00:00Z',
      name: 'Pro',
      terms: [
        {
          _id: 't1',
          operator: 'and',
          termFilter: {
            _id: 'f1',
            type: 'trait',
            with: [{ _id: 'w1', property_name: 'plan', values: ['pro'] }],
          },
        },
      ],
    };
    expect(cohortRecordSchema.safeParse(hosted).success).toBe(false);
    const read = answerOf(cohortRecordSchema).parse(hosted);
    expect(read.terms[0]?.termFilter).toMatchObject({
      type: 'trait',
      with: [{ property_name: 'plan', values: ['pro'] }],
    });
    expect(JSON.stringify(read)).not.toContain('"_id"');
  });
});
