import { once } from 'node:events';
import { createWriteStream, existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startService } from '../../src/service/service.js';
import { tempDir } from './temp.js';

export const FIXTURES = fileURLToPath(new URL('../../fixtures/', import.meta.url));
/** The shared real data sets, beside the checkout; tests using them skip when it is absent. */
export const SHARED_DATA = fileURLToPath(new URL('../../../shared/data/', import.meta.url));
export const hasSharedData = (name: string): boolean => existsSync(join(SHARED_DATA, name));

const EVERYTHING = [{ start: '1970-01-01T00:00:00.000Z', end: '2200-01-01T00:00:00.000Z' }];

async function get(url: string, headers: Record<string, string>): Promise<{ status: number; json: unknown }> {
  const res = await fetch(url, { headers });
  const text = await res.text();
  let json: unknown = text;
  try {
    json = JSON.parse(text);
  } catch {
    // Left as text for the assertion message.
  }
  return { status: res.status, json };
}

/** Every stored row (generated ones included) of a service, through GET /bc/v1/summary/event-counts. */
export async function countAt(url: string, apiKey: string, projectId: string): Promise<number> {
  const query = `ranges=${encodeURIComponent(JSON.stringify(EVERYTHING))}`;
  const res = await get(`${url}/bc/v1/summary/event-counts?${query}`, {
    authorization: `Bearer ${apiKey}`,
    'x-app-id': projectId,
  });
  if (res.status !== 200 || !Array.isArray(res.json))
    throw new Error(`event-counts answered ${res.status}: ${JSON.stringify(res.json)}`);
  return Number(res.json[0]);
}

/** Opens the real service over a data directory (after the CLI has exited) and counts its events. */
export async function countInDataDir(dataDir: string): Promise<number> {
  const service = await startService({ dataDir, port: 0 });
  try {
    return await countAt(service.url, service.local.api_key, service.local.project_id);
  } finally {
    await service.close();
  }
}

/** Stored events of a data directory's project, as GET /bc/v1/live-events/events lists them. */
export async function listInDataDir(
  dataDir: string,
  limit = 10_000,
): Promise<Array<Record<string, unknown>>> {
  const service = await startService({ dataDir, port: 0 });
  try {
    const q = `start=${encodeURIComponent(EVERYTHING[0]!.start)}&end=${encodeURIComponent(EVERYTHING[0]!.end)}&limit=${limit}`;
    const headers = {
      authorization: `Bearer ${service.local.api_key}`,
      'x-app-id': service.local.project_id,
    };
    const res = await get(`${service.url}/bc/v1/live-events/events?${q}`, headers);
    if (res.status !== 200 || !Array.isArray(res.json)) throw new Error(`live-events answered ${res.status}`);
    return res.json as Array<Record<string, unknown>>;
  } finally {
    await service.close();
  }
}

/**
 * Whether the service has ingestion and the counting route yet (they are built concurrently): an
 * empty queue body is refused as invalid (400) by a service that has the route, 404 otherwise.
 */
export async function ingestAvailable(): Promise<boolean> {
  const dir = tempDir('cas-probe-');
  try {
    const service = await startService({ dataDir: dir.path, port: 0 });
    try {
      const headers = {
        authorization: `Bearer ${service.local.api_key}`,
        'x-app-id': service.local.project_id,
        'content-type': 'application/json',
      };
      const queue = await fetch(`${service.url}/bc/v1/events/queue`, { method: 'POST', headers, body: '[]' });
      const counts = await get(
        `${service.url}/bc/v1/summary/event-counts?ranges=${encodeURIComponent(JSON.stringify(EVERYTHING))}`,
        headers,
      );
      return queue.status !== 404 && counts.status === 200;
    } finally {
      await service.close();
    }
  } catch {
    return false;
  } finally {
    dir.cleanup();
  }
}

/** A sorted CSV of `n` turns: 500 users, a turn every 10 s, sessions opening and closing throughout. */
export async function writeTurnsCsv(path: string, n: number): Promise<void> {
  const out = createWriteStream(path);
  let chunk = 'timestamp,user_id,user,assistant,model,prompt_tokens,completion_tokens,intent\n';
  const start = Date.UTC(2024, 0, 1);
  for (let i = 0; i < n; i++) {
    const t = new Date(start + i * 10_000 + (i % 11 === 0 ? 40 * 60_000 : 0)).toISOString();
    chunk += `${t},user${(i * 7) % 500},"How do I reset my password, case ${i}?",Open Settings then Security (step ${i % 9}),gpt-4o,${20 + (i % 300)},${10 + (i % 200)},reset_password\n`;
    if (chunk.length > 1 << 20) {
      if (!out.write(chunk)) await once(out, 'drain');
      chunk = '';
    }
  }
  out.end(chunk);
  await once(out, 'close');
}

/** The import checkpoint files of a data directory, parsed. */
export function checkpoints(dataDir: string): Array<{ position: number; complete: boolean }> {
  const dir = join(dataDir, 'imports');
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .flatMap((f) => {
      try {
        return [JSON.parse(readFileSync(join(dir, f), 'utf8')) as { position: number; complete: boolean }];
      } catch {
        return [];
      }
    });
}
