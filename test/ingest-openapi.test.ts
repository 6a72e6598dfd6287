import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestService, type TestService } from './helpers/service.js';

let t: TestService;
beforeAll(async () => {
  t = await startTestService();
});
afterAll(() => t.stop());

it('describes the ingest and read routes in the OpenAPI document, with their bodies', async () => {
  const res = await t.get('/bc/v1/openapi.json');
  expect(res.status).toBe(200);
  const paths = (
    res.json as {
      paths: Record<
        string,
        Record<string, { requestBody?: { content: Record<string, { schema: Record<string, unknown> }> } }>
      >;
    }
  ).paths;
  for (const path of [
    '/bc/v1/events/queue',
    '/bc/v1/events/event',
    '/bc/v1/events/event/conversation-turn',
  ]) {
    const schema = paths[path]?.post?.requestBody?.content['application/json']?.schema;
    expect(JSON.stringify(schema), path).toContain('session_id');
  }
  for (const path of ['/bc/v1/live-events/events', '/bc/v1/summary/event-counts', '/bc/v1/agg/event-names']) {
    expect(paths[path]?.get, path).toBeDefined();
  }
});
