import { existsSync, readFileSync } from 'node:fs';
import { homedir, userInfo } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { z } from 'zod';
import { fileErrorReason } from './file-errors.js';
import { parseJsonText } from './json-syntax.js';
import { nearestNames } from './nearest-names.js';

/**
 * The config file of cli.md (`$XDG_CONFIG_HOME/cas/config.json`), read by the CLI and the client
 * library alike. No flags and no `process` here: the caller passes its environment and turns a
 * `ConfigFileError` into its own kind of failure (a usage error, a TypeError).
 */
// Strict: a misspelt key (`dta_dir`) was ignored, and the command ran on the embedded default.
const profileSchema = z.strictObject({
  endpoint: z.string().url().optional(),
  api_key: z.string().min(1).optional(),
  project_id: z.string().min(1).optional(),
  data_dir: z.string().min(1).optional(),
});
const configFileSchema = z.strictObject({
  default_profile: z.string().optional(),
  profiles: z.record(z.string(), profileSchema).default({}),
});
export type ConfigFile = z.infer<typeof configFileSchema>;
export type ConfigProfile = z.infer<typeof profileSchema>;

type Env = Readonly<Record<string, string | undefined>>;

export class ConfigFileError extends Error {
  constructor(
    message: string,
    readonly hint?: string,
  ) {
    super(message);
    this.name = 'ConfigFileError';
  }
}

/**
 * An XDG base directory from the environment: the XDG spec has a relative one ignored, as if unset (it
 * was taken relative to the working directory: found by probing).
 */
export function xdgDir(value: string | undefined): string | undefined {
  return value !== undefined && isAbsolute(value) ? value : undefined;
}

/**
 * The home directory: `$HOME` when it is absolute, else the account's (Node takes an empty or relative
 * `HOME` as given, which put the store and the config file under the working directory: found by
 * probing).
 */
function home(): string {
  const fromEnv = homedir();
  if (isAbsolute(fromEnv)) return fromEnv;
  try {
    return userInfo().homedir;
  } catch {
    return fromEnv;
  }
}

export function configFilePath(env: Env): string {
  return join(xdgDir(env.XDG_CONFIG_HOME) ?? join(home(), '.config'), 'cas', 'config.json');
}

/** The default data directory, `$XDG_DATA_HOME/cas`. */
/**
 * `~` and `~/…` as the home folder, as a shell would: given quoted (`--data-dir '~/data'`, a config
 * file's `data_dir`), DuckDB expanded it for the database while cas wrote credentials, server.json and
 * checkpoints under a folder named `~` in the working directory (found by probing).
 */
export function expandHome(path: string): string {
  if (path === '~') return home();
  return path.startsWith('~/') ? join(home(), path.slice(2)) : path;
}

export function defaultDataDir(env: Env): string {
  return join(xdgDir(env.XDG_DATA_HOME) ?? join(home(), '.local', 'share'), 'cas');
}

/**
 * A missing file is an empty one; one that cannot be read (a folder, no permission) or is broken is
 * an error naming the file and the place: read as empty, it ran commands on the embedded default.
 */
export function readConfigFile(path: string): ConfigFile {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { profiles: {} };
    throw new ConfigFileError(`config file ${path} cannot be read: ${fileErrorReason(error)}`);
  }
  // Windows editors save UTF-8 with a byte order mark, which JSON.parse refuses (found by probing).
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  const json = parseJsonText(
    text,
    (why) => new ConfigFileError(`config file ${path} is not valid JSON: ${why}`),
  );
  // A record schema assigns each key: "__proto__" would set the object's prototype, not a profile.
  const profiles = (json as { profiles?: unknown } | null)?.profiles;
  if (typeof profiles === 'object' && profiles !== null && Object.hasOwn(profiles, '__proto__')) {
    throw new ConfigFileError(`config file ${path}: profiles: "__proto__" cannot name a profile`);
  }
  const parsed = configFileSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.join('.') ?? '';
    // A top-level key has no path: "config.json: : Unrecognized key" was all it said.
    if (issue?.code === 'unrecognized_keys') {
      const key = issue.keys[0] ?? '';
      const known =
        where === '' ? ['default_profile', 'profiles'] : ['endpoint', 'api_key', 'project_id', 'data_dir'];
      const near = nearestNames(key, known);
      throw new ConfigFileError(
        `config file ${path}: ${where === '' ? '' : `${where}: `}unknown key "${key}"${near.length > 0 ? ` (did you mean ${near.map((n) => `"${n}"`).join(' or ')}?)` : ''}; the keys are ${known.join(', ')}`,
      );
    }
    throw new ConfigFileError(
      `config file ${path}: ${where === '' ? '' : `${where}: `}${issue?.message ?? 'invalid'}`,
    );
  }
  return parsed.data;
}

/**
 * The profile in use: the first name set among `named` (`[value, where it came from]`: a flag,
 * `CAS_PROFILE`, the file's `default_profile`), else `default`. A name that is set must be in the
 * file: a mistyped one would otherwise fall back to the embedded default without a word. Only the
 * implicit `default` may be missing.
 */
export function selectProfile(
  file: ConfigFile,
  path: string,
  named: ReadonlyArray<readonly [string | undefined, string]>,
): { name: string; profile: ConfigProfile | undefined } {
  for (const [name, from] of named) {
    if (name === undefined || name === '') continue;
    // Own keys only: `constructor` or `toString` passed as a profile of every file (found by probing).
    const profile = Object.hasOwn(file.profiles, name) ? file.profiles[name] : undefined;
    if (profile !== undefined) return { name, profile };
    const known = Object.keys(file.profiles);
    // No file at all said "the config file has no profiles" of a file that does not exist (found by probing).
    if (!existsSync(path))
      throw new ConfigFileError(
        `${from}: no profile "${name}": there is no config file ${path}`,
        `profiles are read from that file: {"profiles": {"${name}": {"endpoint": "…", "api_key": "…"}}}`,
      );
    throw new ConfigFileError(
      `${from}: no profile "${name}" in ${path}`,
      known.length > 0 ? `known profiles: ${known.join(', ')}` : 'the config file has no profiles',
    );
  }
  return { name: 'default', profile: file.profiles.default };
}

/** The first value that is set and not empty, as every precedence chain of cli.md reads. */
export const firstSet = (...values: Array<string | undefined>): string | undefined =>
  values.find((v) => v !== undefined && v !== '');
