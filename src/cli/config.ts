import type { Config } from '../commands/config.js';
import { UsageError } from '../commands/errors.js';
import {
  type ConfigFile,
  ConfigFileError,
  configFilePath,
  defaultDataDir,
  firstSet as first,
  readConfigFile as readSharedConfigFile,
} from '../shared/config-file.js';

export type { Config, ConfigFile };
export { configFilePath };

export interface GlobalFlags {
  endpoint?: string;
  apiKey?: string;
  project?: string;
  dataDir?: string;
  profile?: string;
  timeout?: string;
  retries?: string;
  retryTime?: string;
  verbose?: boolean;
  quiet?: boolean;
}

/** The file's errors are usage errors here: exit 2, naming the file and field. */
function readConfigFile(path: string): ConfigFile {
  try {
    return readSharedConfigFile(path);
  } catch (error) {
    if (error instanceof ConfigFileError) throw new UsageError(error.message);
    throw error;
  }
}

function positiveInt(value: string | undefined, flag: string, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new UsageError(`${flag} must be a whole number, got "${value}"`);
  return n;
}

/** cli.md precedence: flag > CAS_* > MLSDK_* > config file profile > embedded default. */
export function resolveConfig(flags: GlobalFlags, env: NodeJS.ProcessEnv): Config {
  const file = readConfigFile(configFilePath(env));
  const profileName = first(flags.profile, env.CAS_PROFILE, file.default_profile) ?? 'default';
  const profile = file.profiles[profileName];
  if (profile === undefined && first(flags.profile, env.CAS_PROFILE) !== undefined) {
    const known = Object.keys(file.profiles);
    throw new UsageError(
      `--profile: no profile "${profileName}" in ${configFilePath(env)}`,
      known.length > 0 ? `known profiles: ${known.join(', ')}` : 'the config file has no profiles',
    );
  }
  const endpoint = first(flags.endpoint, env.CAS_ENDPOINT, env.MLSDK_SERVER_BASE, profile?.endpoint);
  if (endpoint !== undefined && !/^https?:\/\/[^/]/i.test(endpoint)) {
    throw new UsageError(`--endpoint must be an http(s) URL, got "${endpoint}"`);
  }
  return {
    endpoint: endpoint?.replace(/\/+$/, ''),
    apiKey: first(flags.apiKey, env.CAS_API_KEY, env.MLSDK_API_KEY, profile?.api_key),
    projectId: first(flags.project, env.CAS_PROJECT_ID, env.MLSDK_PROJECT_ID, profile?.project_id),
    dataDir: first(flags.dataDir, env.CAS_DATA_DIR, profile?.data_dir) ?? defaultDataDir(env),
    profile: profileName,
    timeoutMs: positiveInt(flags.timeout, '--timeout', 30_000),
    retries: Math.max(1, positiveInt(flags.retries, '--retries', 5)),
    retryTimeMs: positiveInt(flags.retryTime, '--retry-time', 60) * 1000,
    verbose: flags.verbose === true,
    quiet: flags.quiet === true,
  };
}
