import { type RunningService, type ServiceOptions, startService } from '../../src/service/service.js';
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
  /** Any method; a body is sent as JSON. */
  request(
    method: string,
    path: string,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<{ status: number; json: unknown }>;
  stop(): Promise<void>;
}

const DEFAULT_TENANT = { apiKey: 'test-key', projectId: 'test-project' };

/**
 * The real service over a given data directory with extra options (intents, limits), for tests that
 * restart the service on the same data or configure it; the directory is the caller's to remove.
 */
export async function startServiceOn(
  dataDir: string,
  options: Omit<Partial<ServiceOptions>, 'dataDir'> = {},
): Promise<TestService> {
  const provision = options.provision ?? DEFAULT_TENANT;
  const service = await startService({
    dataDir,
    port: 0,
    ...(process.env.CAS_TEST_LOG ? { log: (line: string) => console.error(line) } : {}),
    ...options,
    provision,
  });
  const headers = { authorization: `Bearer ${provision.apiKey}`, 'x-app-id': provision.projectId };
  const call = async (method: string, path: string, body: unknown, extra: Record<string, string> = {}) => {
    const response = await fetch(`${service.url}${path}`, {
      method,
      headers: {
        ...headers,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...extra,
      },
      ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
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
    request: (method, path, body, extra) => call(method, path, body, extra),
    stop: () => service.close(),
  };
}

/** The real service on a random loopback port over a real DuckDB file in a temp data directory. */
export async function startTestService(
  provision = DEFAULT_TENANT,
  options: { limits?: Partial<Limits> } = {},
): Promise<TestService> {
  const dir = tempDir();
  const t = await startServiceOn(dir.path, { provision, ...options });
  return {
    ...t,
    stop: async () => {
      await t.stop();
      dir.cleanup();
    },
  };
}
