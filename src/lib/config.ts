import {
  configFilePath,
  defaultDataDir,
  expandHome,
  firstSet,
  readConfigFile,
  selectProfile,
} from '../shared/config-file.js';
import { type ProxySettings, proxySettingsOf } from '../shared/proxy-settings.js';
import { withoutPassword } from '../shared/url-password.js';
import { clientOptionsSchema, parseArgs } from './arguments.js';
import type { ClientOptions } from './types.js';

export type { ClientOptions };

export interface ClientSettings {
  endpoint: string | undefined;
  apiKey: string | undefined;
  projectId: string | undefined;
  dataDir: string;
  profile: string;
  debug: boolean;
  timeoutMs: number;
  retries: number;
  maxQueueSize: number;
  proxy: ProxySettings | undefined;
}

type Env = Readonly<Record<string, string | undefined>>;

/**
 * library.md's precedence, the CLI's without flags: option > CAS_* > MLSDK_* > config file profile
 * (`CAS_PROFILE`, else the file's default) > embedded default. A remote endpoint needs a key and a
 * project from somewhere; the embedded service has its own.
 */
export function resolveSettings(options: ClientOptions, env: Env): ClientSettings {
  if (typeof options !== 'object' || options === null)
    throw new TypeError('new Client: options must be an object');
  const o = parseArgs('new Client', clientOptionsSchema, options, 'option');
  const path = configFilePath(env);
  const file = readConfigFile(path);
  const { name: profileName, profile } = selectProfile(file, path, [
    [env.CAS_PROFILE, 'CAS_PROFILE'],
    [file.default_profile, 'default_profile'],
  ]);
  const endpoint = firstSet(o.endpoint, env.CAS_ENDPOINT, env.MLSDK_SERVER_BASE, profile?.endpoint);
  if (endpoint !== undefined && !/^https?:\/\/[^/]/i.test(endpoint)) {
    throw new TypeError(`new Client: endpoint must be an http(s) URL, got "${withoutPassword(endpoint)}"`);
  }
  const settings: ClientSettings = {
    endpoint: endpoint?.replace(/\/+$/, ''),
    apiKey: firstSet(o.apiKey, env.CAS_API_KEY, env.MLSDK_API_KEY, profile?.api_key),
    projectId: firstSet(o.projectId, env.CAS_PROJECT_ID, env.MLSDK_PROJECT_ID, profile?.project_id),
    dataDir: expandHome(firstSet(o.dataDir, env.CAS_DATA_DIR, profile?.data_dir) ?? defaultDataDir(env)),
    profile: profileName,
    debug: o.debug === true,
    timeoutMs: o.timeoutMs ?? 30_000,
    retries: Math.max(1, o.retries ?? 5),
    maxQueueSize: o.maxQueueSize ?? 10_000,
    proxy: proxySettingsOf(env),
  };
  if (settings.endpoint !== undefined) {
    if (settings.apiKey === undefined) {
      throw new TypeError('new Client: apiKey (or CAS_API_KEY / MLSDK_API_KEY) is required with an endpoint');
    }
    if (settings.projectId === undefined) {
      throw new TypeError(
        'new Client: projectId (or CAS_PROJECT_ID / MLSDK_PROJECT_ID) is required with an endpoint',
      );
    }
  }
  return settings;
}
