import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, type TestContext } from 'vitest';
import { runCli } from './helpers/cli.js';
import { hasSharedData, ingestAvailable, listInDataDir, SHARED_DATA } from './helpers/import.js';
import { tempDir } from './helpers/temp.js';

/**
 * Exports nobody here wrote, imported with the command lines the README shows. The data sets live
 * in ../shared/data beside the checkout; without it (a user's machine) these tests skip.
 */
const BITEXT = 'bitext-customer-support-4514.csv';
const ARENA = 'arena-hard-v0.1-gpt-4-0613.jsonl';
let ready = false;
const dir = tempDir('cas-real-');
beforeAll(async () => {
  ready = await ingestAvailable();
});
afterAll(() => dir.cleanup());

function need(ctx: TestContext, file: string): void {
  if (!hasSharedData(file)) ctx.skip(`../shared/data/${file} is not here`);
}

const BITEXT_ARGS = [
  '--kind',
  'turn',
  '--map',
  'user=instruction',
  '--map',
  'assistant=response',
  '--set',
  'user_id=bitext-{line}',
];
const ARENA_ARGS = [
  '--kind',
  'turn',
  '--map',
  'user=messages.0.content',
  '--map',
  'assistant=messages.1.content.answer',
  '--map',
  'timestamp=tstamp',
  '--set',
  'user_id=arena',
];

describe('real exports', () => {
  it('maps the Bitext customer-support CSV to turns carrying its intent column (dry run)', async (ctx) => {
    need(ctx, BITEXT);
    const run = await runCli(['import', join(SHARED_DATA, BITEXT), ...BITEXT_ARGS, '--dry-run', '--json']);
    expect(run.code).toBe(0);
    const events = run.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const turns = events.filter((e) => e.event === 'Conversation Turn');
    expect(turns).toHaveLength(4514);
    expect(new Set(turns.map((e) => e.properties.intent)).size).toBe(27);
    // The import sends sessions in sorted order, not file order: find the file's second row by content.
    const second = turns.find((e) => e.properties.user === 'can you help me canceling purchase 00004587345?');
    expect(second.properties).toMatchObject({ intent: 'cancel_order', category: 'ORDER' });
    expect(second.properties.assistant).toMatch(/^I understand your concern/);
    expect(events.filter((e) => e.type === 'end_session')).toHaveLength(4514);
  });

  it('imports the Bitext CSV into the service', async (ctx) => {
    need(ctx, BITEXT);
    if (!ready) ctx.skip('the service has no /events/queue yet');
    const data = join(dir.path, 'bitext');
    const run = await runCli([
      'import',
      join(SHARED_DATA, BITEXT),
      ...BITEXT_ARGS,
      '--data-dir',
      data,
      '--json',
    ]);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({
      records: 4514,
      rejected: 0,
      // A turn and the session end the import adds, per row (the service closes the conversation).
      events: 2 * 4514,
      accepted: 2 * 4514,
    });
    // The newest 10,000 stored rows (the route's cap) are the conversations' ends and their analysis:
    // the service took each conversation's intent from the turns' `intent` property (the CSV column).
    const stored = await listInDataDir(data, 10_000);
    const informed = stored
      .filter((e) => e.event === 'Intent Informed')
      .map((e) => e.properties as Record<string, unknown>);
    expect(informed.length).toBeGreaterThan(1000);
    expect(informed.every((p) => p.source === 'label')).toBe(true);
    // The file is grouped by intent, so the newest conversations cover only part of its 27 intents.
    expect(new Set(informed.map((p) => p.intent)).size).toBeGreaterThanOrEqual(10);
  }, 120_000);

  it('imports the Arena-Hard JSONL with dotted-path mappings, timestamps from epoch seconds', async (ctx) => {
    need(ctx, ARENA);
    const dry = await runCli(['import', join(SHARED_DATA, ARENA), ...ARENA_ARGS, '--dry-run', '--json']);
    expect(dry.code).toBe(0);
    const turns = dry.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
      .filter((e) => e.event === 'Conversation Turn');
    expect(turns).toHaveLength(500);
    const scim = turns.find((e) => /SCIM server in PHP/.test(e.properties.user));
    expect(scim).toMatchObject({
      timestamp: expect.stringMatching(/^2024-0[34]-/),
      user_id: 'arena',
      properties: { model: 'gpt-4-0613', uid: expect.any(String) },
    });
    expect(scim.properties.assistant).toMatch(/^Implementing a SCIM/);
    if (!ready) ctx.skip('the service has no /events/queue yet');
    const data = join(dir.path, 'arena');
    const run = await runCli([
      'import',
      join(SHARED_DATA, ARENA),
      ...ARENA_ARGS,
      '--data-dir',
      data,
      '--json',
    ]);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ records: 500, rejected: 0 });
  }, 120_000);
});
