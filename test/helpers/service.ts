import { type RunningService, startService } from '../../src/service/service.js';
import type { Limits } from '../../src/shared/limits.js';
import { tempDir } from './temp.js';

export interface TestService {
  service: RunningService;
  url: string;
  apiKey: string;
  projectId: string;
  headers: Record<string, string>;
  post(
    path: string,
    body: unknown,
    headers?: Record<string, string>,
  ): Promise<{ status: number; json: unknown }>;
  get(path: string, headers?: Record<string, string>): Promise<{ status: number; json: unknown }>;
  stop(): Promise<void>;
}

/** The real service on a random loopback port over a real DuckDB file in a temp data directory. */
export async function startTestService(
  provision = { apiKey: 'test-key', projectId: 'test-project' },
  options: { limits?: Partial<Limits> } = {},
): Promise<TestService> {
  const dir = tempDir();
  const service = await startService({ dataDir: dir.path, port: 0, provision, ...options });
  const headers = { authorization: `Bearer ${provision.apiKey}`, 'x-app-id': provision.projectId };
  const call = async (
    method: string,
    path: string,
    body: unknown,
    extra: Record<string, string> | undefined,
  ) => {
    const response = await fetch(`${service.url}${path}`, {
      method,
      headers: {
        ...headers,
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...extra,
      },
      ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
    });
    const text = await response.text();
    let json: unknown = text;
    try {
      json = JSON.parse(text);
    } catch {
      // Leave non-JSON bodies as text so a test can assert on them.
    }
    return { status: response.status, json };
  };
  return {
    service,
    url: service.url,
    apiKey: provision.apiKey,
    projectId: provision.projectId,
    headers,
    post: (path, body, extra) => call('POST', path, body, extra),
    get: (path, extra) => call('GET', path, undefined, extra),
    stop: async () => {
      await service.close();
      dir.cleanup();
    },
  };
}
