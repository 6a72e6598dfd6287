import type { Config } from '../commands/config.js';
import { UsageError } from '../commands/errors.js';
import {
  type ConfigFile,
  ConfigFileError,
  configFilePath,
  defaultDataDir,
  expandHome,
  firstSet as first,
  readConfigFile as readSharedConfigFile,
  selectProfile,
} from '../shared/config-file.js';
import { proxySettingsOf } from '../shared/proxy-settings.js';
import { withoutPassword } from '../shared/url-password.js';

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
  return usage(() => readSharedConfigFile(path));
}

function usage<T>(read: () => T): T {
  try {
    return read();
  } catch (error) {
    if (error instanceof ConfigFileError) throw new UsageError(error.message, error.hint);
    throw error;
  }
}

/** Flags given an empty value (`--data-dir ""`) are refused: falling back to the default would surprise. */
function refuseEmpty(flags: GlobalFlags): void {
  const named: Array<[string | undefined, string]> = [
    [flags.endpoint, '--endpoint'],
    [flags.apiKey, '--api-key'],
    [flags.project, '--project'],
    [flags.dataDir, '--data-dir'],
    [flags.profile, '--profile'],
  ];
  for (const [value, flag] of named) {
    if (value !== undefined && value.trim() === '') throw new UsageError(`${flag} must not be empty`);
  }
}

/** The longest timer Node keeps: a longer one fires at once (TimeoutOverflowWarning), failing every request. */
const MAX_TIMER_MS = 2 ** 31 - 1;

function positiveInt(
  value: string | undefined,
  flag: string,
  fallback: number,
  max = Number.MAX_SAFE_INTEGER,
): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  // Number('') is 0: `--timeout ''` meant no timeout at all, `--retry-time ''` no time to retry.
  if (!/^\s*\d+\s*$/.test(value) || !Number.isInteger(n) || n < 0)
    throw new UsageError(`${flag} must be a whole number, got "${value}"`);
  if (n > max) throw new UsageError(`${flag} must be at most ${max}, got "${value}"`);
  return n;
}

/** The profile cli.md's chain names: --profile, else CAS_PROFILE, else the file's default_profile. */
export function chooseProfile(flags: GlobalFlags, env: NodeJS.ProcessEnv, file: ConfigFile, path: string) {
  return selectProfile(file, path, [
    [flags.profile, '--profile'],
    [env.CAS_PROFILE, 'CAS_PROFILE'],
    [file.default_profile, 'default_profile'],
  ]);
}

/** cli.md precedence: flag > CAS_* > MLSDK_* > config file profile > embedded default. */
export function resolveConfig(flags: GlobalFlags, env: NodeJS.ProcessEnv): Config {
  refuseEmpty(flags);
  const path = configFilePath(env);
  const file = readConfigFile(path);
  const { name: profileName, profile } = usage(() => chooseProfile(flags, env, file, path));
  const endpoint = first(flags.endpoint, env.CAS_ENDPOINT, env.MLSDK_SERVER_BASE, profile?.endpoint);
  // Named by where it came from: an environment variable's mistake is not the flag's. A URL that
  // passed the prefix check but does not parse (the README's `https://…`) was "this is a bug", exit 1.
  if (endpoint !== undefined && (!/^https?:\/\/[^/]/i.test(endpoint) || !URL.canParse(endpoint))) {
    const from =
      [
        [flags.endpoint, '--endpoint'],
        [env.CAS_ENDPOINT, 'CAS_ENDPOINT'],
        [env.MLSDK_SERVER_BASE, 'MLSDK_SERVER_BASE'],
      ].find(([value]) => value === endpoint)?.[1] ?? `the endpoint of profile "${profileName}" in ${path}`;
    throw new UsageError(`${from} must be an http(s) URL, got "${withoutPassword(endpoint)}"`);
  }
  // -v won over -q without a word (found by probing).
  if (flags.verbose === true && flags.quiet === true) {
    throw new UsageError('-q/--quiet and -v/--verbose contradict each other: give one');
  }
  return {
    endpoint: endpoint?.replace(/\/+$/, ''),
    apiKey: first(flags.apiKey, env.CAS_API_KEY, env.MLSDK_API_KEY, profile?.api_key),
    projectId: first(flags.project, env.CAS_PROJECT_ID, env.MLSDK_PROJECT_ID, profile?.project_id),
    dataDir: expandHome(first(flags.dataDir, env.CAS_DATA_DIR, profile?.data_dir) ?? defaultDataDir(env)),
    profile: profileName,
    timeoutMs: positiveInt(flags.timeout, '--timeout', 30_000, MAX_TIMER_MS),
    retries: Math.max(1, positiveInt(flags.retries, '--retries', 5)),
    retryTimeMs: positiveInt(flags.retryTime, '--retry-time', 60) * 1000,
    verbose: flags.verbose === true,
    quiet: flags.quiet === true,
    proxy: proxySettingsOf(env),
  };
}
