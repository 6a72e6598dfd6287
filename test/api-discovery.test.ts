import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DemoEvent } from '../src/service/db-api/demo-data.js';
import { call, identifies, ingestGenerated, ok, turnsOf, withQuery } from './helpers/api.js';
import { startTestService, type TestService } from './helpers/service.js';

/** The /agg/* discovery routes on generated data: every answer is recomputed here from what was sent. */

let t: TestService;
let sent: DemoEvent[];
beforeAll(async () => {
  t = await startTestService();
  sent = await ingestGenerated(t, { users: 8, seed: 7 });
  // One labelled intent with an attribute (intent_* turn properties become the intent's attributes).
  const res = await call(t, 'POST', '/bc/v1/events/queue', [
    { type: 'start_session', session_id: 'attr-s', user_id: 'attr-user', timestamp: '2025-01-20T10:00:00Z' },
    {
      type: 'track',
      event: 'Conversation Turn',
      session_id: 'attr-s',
      timestamp: '2025-01-20T10:00:10Z',
      properties: { user: 'refund please', assistant: 'ok', intent: 'refund', intent_reason: 'broken' },
    },
    { type: 'end_session', session_id: 'attr-s', timestamp: '2025-01-20T10:01:00Z' },
  ]);
  expect(res.status, JSON.stringify(res.json)).toBe(200);
});
afterAll(() => t.stop());

const sorted = (xs: Iterable<string>) => [...new Set(xs)].sort();

/** Values most frequent first, ties by text, as the routes order them. */
function byFrequency(values: string[]): string[] {
  const counts = new Map<string, number>();
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
  return [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)).map(([v]) => v);
}

describe('/agg discovery', () => {
  it('property-names: the keys of matching events, regex run by DuckDB (RE2 (?i) flag)', async () => {
    const names = await ok<string[]>(t, '/bc/v1/agg/property-names', {
      event_regex: '(?i)^conversation turn$',
    });
    // The service prices turns that carry a model and token counts (decisions §5): cost, cost_known.
    const priced = turnsOf(sent).some((e) => e.properties.model !== undefined) ? ['cost', 'cost_known'] : [];
    const expected = sorted(
      turnsOf(sent)
        .flatMap((e) => Object.keys(e.properties))
        .concat('intent_reason', ...priced),
    );
    expect(names).toEqual(expected);
    const narrowed = await ok<string[]>(t, '/bc/v1/agg/property-names', {
      event_regex: '^Conversation Turn$',
      property_regex: 'tokens$',
    });
    expect(narrowed).toEqual(['completion_tokens', 'prompt_tokens']);
  });

  it('property-names with picks: only events whose picked property (then trait) matches', async () => {
    const names = await ok<string[]>(t, '/bc/v1/agg/property-names', {
      picks: [{ name: 'intent_reason', value: 'broken' }],
    });
    expect(names).toEqual(['assistant', 'intent', 'intent_reason', 'user']);
  });

  it('property-values: values of the named properties, most frequent first', async () => {
    const models = await ok<string[]>(t, '/bc/v1/agg/property-values', {
      event_regex: '^Conversation Turn$',
      property_name_regex: '^model$',
    });
    expect(models).toEqual(byFrequency(turnsOf(sent).map((e) => String(e.properties.model))));
    const filtered = await ok<string[]>(t, '/bc/v1/agg/property-values', {
      property_name_regex: '^model$',
      property_value_regex: '^gpt',
    });
    expect(filtered).toEqual(models.filter((m) => m.startsWith('gpt')));
  });

  it('trait-names and trait-values: traits of users who performed matching events', async () => {
    expect(await ok(t, '/bc/v1/agg/trait-names', { event_regex: '^Conversation Turn$' })).toEqual([
      'beta',
      'country',
      'plan',
    ]);
    const plans = await ok<string[]>(t, '/bc/v1/agg/trait-values', { trait_name_regex: '^plan$' });
    expect(plans).toEqual(byFrequency(identifies(sent).map((e) => String(e.traits.plan))));
    const beta = await ok<string[]>(t, '/bc/v1/agg/trait-values', { trait_name_regex: '^beta$' });
    expect(beta.sort()).toEqual(sorted(identifies(sent).map((e) => String(e.traits.beta))));
  });

  it('trait-names with picks narrows the users; an event matching nobody gives none', async () => {
    const anyPlan = String(identifies(sent)[0]!.traits.plan);
    const names = await ok<string[]>(t, '/bc/v1/agg/trait-names', {
      picks: [{ name: 'plan', value: anyPlan }],
      trait_regex: '^(plan|country)$',
    });
    expect(names).toEqual(['country', 'plan']);
    expect(await ok(t, '/bc/v1/agg/trait-names', { event_regex: '^No Such Event$' })).toEqual([]);
  });

  it('user-trait-names and values: by the users id regex', async () => {
    const [first] = identifies(sent);
    const names = await ok<string[]>(t, '/bc/v1/agg/user-trait-names', { id_regex: `^${first!.user_id}$` });
    expect(names).toEqual(sorted(Object.keys(first!.traits)));
    const values = await ok<string[]>(t, '/bc/v1/agg/user-trait-values', {
      id_regex: `^${first!.user_id}$`,
      trait_regex: '^country$',
    });
    expect(values).toEqual([String(first!.traits.country)]);
  });

  it('intent-names, intent-attribute-names and values from Intent Informed events', async () => {
    const intents = await ok<string[]>(t, '/bc/v1/agg/intent-names');
    expect(intents).toEqual(
      sorted(
        turnsOf(sent)
          .map((e) => String(e.properties.intent))
          .concat('refund'),
      ),
    );
    expect(await ok(t, '/bc/v1/agg/intent-names', { intent_regex: '^track' })).toEqual(
      intents.filter((i) => i.startsWith('track')),
    );
    expect(await ok(t, '/bc/v1/agg/intent-attribute-names', { intent_regex: '^refund$' })).toEqual([
      'reason',
      'source',
    ]);
    expect(await ok(t, '/bc/v1/agg/intent-attribute-values', { attribute_name_regex: '^reason$' })).toEqual([
      'broken',
    ]);
    expect(
      await ok(t, '/bc/v1/agg/intent-attribute-names', { picks: [{ name: 'reason', value: 'broken' }] }),
    ).toEqual(['reason', 'source']);
  });

  it('session_id scopes an answer; a bad regex is a 400 naming the parameter', async () => {
    expect(await ok(t, '/bc/v1/agg/property-names', { session_id: 'attr-s', event_regex: 'Turn' })).toEqual([
      'assistant',
      'intent',
      'intent_reason',
      'user',
    ]);
    const bad = await call(t, 'GET', withQuery('/bc/v1/agg/trait-values', { trait_value_regex: '(' }));
    expect(bad.status).toBe(400);
    expect(bad.json).toMatchObject({ code: 'invalid_input', issues: [{ path: 'trait_value_regex' }] });
    // RE2's own reason, as the chart and db routes give it, not just "invalid".
    expect((bad.json as { issues: Array<{ message: string }> }).issues[0]?.message).toMatch(
      /^not a valid RE2 regular expression \(.*missing \).*\)$/,
    );
    const badPick = await call(
      t,
      'GET',
      withQuery('/bc/v1/agg/property-names', { picks: [{ name: 'x', value: 1, operator: 'regex' }] }),
    );
    expect(badPick.status).toBe(400);
    // A pick's regex that RE2 refuses was DuckDB's error, a 500 (found by probing).
    for (const url of [
      '/bc/v1/agg/property-names',
      '/bc/v1/agg/trait-names',
      '/bc/v1/agg/user-trait-names',
      '/bc/v1/agg/intent-attribute-names',
    ]) {
      for (const operator of ['regex', 'not_regex']) {
        const res = await call(t, 'GET', withQuery(url, { picks: [{ name: 'x', value: '(', operator }] }));
        expect(res.status, `${url} ${operator}: ${JSON.stringify(res.json)}`).toBe(400);
        expect(res.json).toMatchObject({ issues: [{ path: 'picks[0].value' }] });
      }
    }
  });

  it('accepts picks in bracket form too', async () => {
    const res = await call(
      t,
      'GET',
      '/bc/v1/agg/property-names?picks[0][name]=intent_reason&picks[0][value]=broken',
    );
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    expect(res.json).toEqual(['assistant', 'intent', 'intent_reason', 'user']);
  });

  // Bracket values arrive as text: a number or boolean pick matched nothing, and gte was a 400.
  it('reads bracket-form pick values that are numbers or booleans as such, and a regex as text', async () => {
    const same = async (route: string, bracket: string, picks: unknown[]) => {
      const asBrackets = await call(t, 'GET', `/bc/v1/agg/${route}?${bracket}`);
      const asJson = await call(t, 'GET', withQuery(`/bc/v1/agg/${route}`, { picks }));
      expect(asBrackets.status, JSON.stringify(asBrackets.json)).toBe(200);
      expect(asBrackets.json, bracket).toEqual(asJson.json);
      return asJson.json as string[];
    };
    const tokens = Number(turnsOf(sent)[0]!.properties.prompt_tokens);
    expect(
      await same('property-names', `picks[0][name]=prompt_tokens&picks[0][value]=${tokens}`, [
        { name: 'prompt_tokens', value: tokens },
      ]),
    ).toContain('prompt_tokens');
    expect(
      await same(
        'property-names',
        `picks[0][name]=prompt_tokens&picks[0][value]=${tokens}&picks[0][operator]=gte`,
        [{ name: 'prompt_tokens', value: tokens, operator: 'gte' }],
      ),
    ).toContain('prompt_tokens');
    const beta = identifies(sent).some((e) => e.traits.beta === true);
    expect(
      await same('trait-names', `picks[0][name]=beta&picks[0][value]=${beta}`, [
        { name: 'beta', value: beta },
      ]),
    ).toContain('beta');
    await same('trait-names', 'picks[0][name]=plan&picks[0][value]=%5Ep&picks[0][operator]=regex', [
      { name: 'plan', value: '^p', operator: 'regex' },
    ]);
  });
});
