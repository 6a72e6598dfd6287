import type { ConfigSourcesInput, SettingSource } from '../commands/config-report.js';
import { configFilePath, readConfigFile, xdgDir } from '../shared/config-file.js';
import { chooseProfile, type GlobalFlags } from './config.js';

/**
 * Where each connection setting of `resolveConfig` came from, for `cas config`: the same precedence
 * (flag > CAS_* > MLSDK_* > config-file profile > embedded default), read again candidate by
 * candidate. Kept beside config.ts rather than inside it so that resolving stays one small function;
 * config-sources.test.ts checks that both agree on every combination. Values are not returned here:
 * `cas config` shows config.ts's, and never the key's.
 */

export type ConfigSources = ConfigSourcesInput;

type Candidate = readonly [string | undefined, SettingSource];

function sourceOf(...candidates: Candidate[]): SettingSource | undefined {
  for (const [value, source] of candidates) {
    if (value !== undefined && value !== '') return source;
  }
  return undefined;
}

/** Call after resolveConfig succeeded: a broken config file has already been reported by it. */
export function configSources(flags: GlobalFlags, env: NodeJS.ProcessEnv): ConfigSources {
  const path = configFilePath(env);
  const file = readConfigFile(path);
  const flag = (value: string | undefined, name: string): Candidate => [value, { kind: 'flag', name }];
  const variable = (name: string): Candidate => [env[name], { kind: 'env', name }];
  const profileSource = sourceOf(flag(flags.profile, '--profile'), variable('CAS_PROFILE'), [
    file.default_profile,
    { kind: 'config-file', name: 'default_profile' },
  ]) ?? { kind: 'default', name: 'no --profile, CAS_PROFILE or default_profile' };
  // The same choice resolveConfig made (it would have thrown here for a name the file lacks).
  const { name: profileName, profile } = chooseProfile(flags, env, file, path);
  const fromProfile = (value: string | undefined): Candidate => [
    value,
    { kind: 'profile', name: profileName },
  ];
  return {
    endpoint: sourceOf(
      flag(flags.endpoint, '--endpoint'),
      variable('CAS_ENDPOINT'),
      variable('MLSDK_SERVER_BASE'),
      fromProfile(profile?.endpoint),
    ),
    apiKey: sourceOf(
      flag(flags.apiKey, '--api-key'),
      variable('CAS_API_KEY'),
      variable('MLSDK_API_KEY'),
      fromProfile(profile?.api_key),
    ),
    projectId: sourceOf(
      flag(flags.project, '--project'),
      variable('CAS_PROJECT_ID'),
      variable('MLSDK_PROJECT_ID'),
      fromProfile(profile?.project_id),
    ),
    dataDir: sourceOf(
      flag(flags.dataDir, '--data-dir'),
      variable('CAS_DATA_DIR'),
      fromProfile(profile?.data_dir),
    ) ?? {
      kind: 'default',
      name: xdgDir(env.XDG_DATA_HOME) ? '$XDG_DATA_HOME/cas' : '~/.local/share/cas',
    },
    profile: profileSource,
    configFile: path,
    profileFound: profile !== undefined,
  };
}
