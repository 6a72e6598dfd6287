import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import type { Config } from '../commands/config.js';
import { UsageError } from '../commands/errors.js';

export type { Config };

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

const profileSchema = z.object({
  endpoint: z.string().url().optional(),
  api_key: z.string().min(1).optional(),
  project_id: z.string().min(1).optional(),
  data_dir: z.string().min(1).optional(),
});
const configFileSchema = z.object({
  default_profile: z.string().optional(),
  profiles: z.record(z.string(), profileSchema).default({}),
});
export type ConfigFile = z.infer<typeof configFileSchema>;

export function configFilePath(env: NodeJS.ProcessEnv): string {
  return join(env.XDG_CONFIG_HOME || join(homedir(), '.config'), 'cas', 'config.json');
}

function readConfigFile(path: string): ConfigFile {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return { profiles: {} };
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new UsageError(`config file ${path} is not valid JSON`);
  }
  const parsed = configFileSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new UsageError(
      `config file ${path}: ${issue?.path.join('.') ?? ''}: ${issue?.message ?? 'invalid'}`,
    );
  }
  return parsed.data;
}

function positiveInt(value: string | undefined, flag: string, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new UsageError(`${flag} must be a whole number, got "${value}"`);
  return n;
}

const first = (...values: Array<string | undefined>) => values.find((v) => v !== undefined && v !== '');

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
  const dataHome = env.XDG_DATA_HOME || join(homedir(), '.local', 'share');
  return {
    endpoint: endpoint?.replace(/\/+$/, ''),
    apiKey: first(flags.apiKey, env.CAS_API_KEY, env.MLSDK_API_KEY, profile?.api_key),
    projectId: first(flags.project, env.CAS_PROJECT_ID, env.MLSDK_PROJECT_ID, profile?.project_id),
    dataDir: first(flags.dataDir, env.CAS_DATA_DIR, profile?.data_dir) ?? join(dataHome, 'cas'),
    profile: profileName,
    timeoutMs: positiveInt(flags.timeout, '--timeout', 30_000),
    retries: Math.max(1, positiveInt(flags.retries, '--retries', 5)),
    retryTimeMs: positiveInt(flags.retryTime, '--retry-time', 60) * 1000,
    verbose: flags.verbose === true,
    quiet: flags.quiet === true,
  };
}
