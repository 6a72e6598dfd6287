import { withoutPassword } from '../shared/url-password.js';
import type { Config } from './config.js';

/**
 * `cas config`: where commands would send data, and why (cli.md "Where it sends data"). Each setting
 * says its value and where it came from: a flag, an environment variable (named), a config-file
 * profile, or the embedded default. The API key's value is never part of the report, only whether
 * one is set and from where: the report is meant to be pasted into bug reports and CI logs.
 */

export type SettingSource =
  | { kind: 'flag'; name: string }
  | { kind: 'env'; name: string }
  | { kind: 'profile'; name: string }
  | { kind: 'config-file'; name: string }
  | { kind: 'default'; name: string }
  | { kind: 'data-dir'; name: string };

export interface ConfigSourcesInput {
  endpoint: SettingSource | undefined;
  apiKey: SettingSource | undefined;
  projectId: SettingSource | undefined;
  dataDir: SettingSource;
  profile: SettingSource;
  configFile: string;
  profileFound: boolean;
}

export interface Setting {
  /** null: not set (for the key: `set` says whether one is). */
  value: string | null;
  /** One line for people: `flag --endpoint`, `env MLSDK_API_KEY`, `profile "prod"`, … */
  from: string;
  source: SettingSource | null;
}

export interface ConfigReport {
  /** `remote` with an endpoint; else the data directory's `cas serve` or the embedded service. */
  mode: 'remote' | 'local';
  endpoint: Setting;
  project: Setting;
  api_key: Omit<Setting, 'value'> & { set: boolean };
  data_dir: Setting;
  profile: Setting & { in_config_file: boolean };
  config_file: string;
}

export interface ConfigReportDeps {
  /** The data directory's local project (credentials.json), read without creating anything. */
  localProject(dataDir: string): string | undefined;
  /** The address a running `cas serve` left in the data directory's server.json, if any. */
  localServer(dataDir: string): string | undefined;
}

export function describeSource(source: SettingSource): string {
  switch (source.kind) {
    case 'flag':
      return `flag ${source.name}`;
    case 'env':
      return `env ${source.name}`;
    case 'profile':
      return `profile "${source.name}" of the config file`;
    case 'config-file':
      return `config file (${source.name})`;
    case 'default':
      return `default (${source.name})`;
    case 'data-dir':
      return `data directory (${source.name})`;
  }
}

function setting(value: string | undefined, source: SettingSource | undefined, unset: string): Setting {
  if (source === undefined) return { value: value ?? null, from: unset, source: null };
  return { value: value ?? null, from: describeSource(source), source };
}

export function runConfigReport(
  options: { config: Config; sources: ConfigSourcesInput },
  deps: ConfigReportDeps,
): ConfigReport {
  const { config, sources } = options;
  const remote = config.endpoint !== undefined;
  const local: SettingSource = { kind: 'data-dir', name: 'credentials.json' };
  let endpoint: Setting;
  if (remote) {
    endpoint = setting(
      config.endpoint === undefined ? undefined : withoutPassword(config.endpoint),
      sources.endpoint,
      'not set',
    );
  } else {
    const server = deps.localServer(config.dataDir);
    endpoint =
      server === undefined
        ? { value: null, from: 'not set: the embedded service over the data directory', source: null }
        : {
            value: server,
            from: 'the cas serve holding the data directory (server.json), once it proves it wrote it',
            source: { kind: 'data-dir', name: 'server.json' },
          };
  }
  let project = setting(
    config.projectId,
    sources.projectId,
    remote ? 'not set (required with an endpoint)' : '',
  );
  let apiKeySource = sources.apiKey ?? null;
  // The data directory's credentials.json holds its project and key together.
  const stored = remote ? undefined : deps.localProject(config.dataDir);
  if (!remote && config.projectId === undefined) {
    project =
      stored === undefined
        ? { value: null, from: 'created in the data directory on first use', source: null }
        : { value: stored, from: describeSource(local), source: local };
  }
  if (!remote && apiKeySource === null) apiKeySource = local;
  return {
    mode: remote ? 'remote' : 'local',
    endpoint,
    project,
    api_key: {
      // The key in use: one given, or the data directory's own (it was reported unset).
      set: config.apiKey !== undefined || (apiKeySource === local && stored !== undefined),
      from:
        apiKeySource === null
          ? 'not set (required with an endpoint)'
          : `${describeSource(apiKeySource)}; never shown`,
      source: apiKeySource,
    },
    data_dir: { value: config.dataDir, from: describeSource(sources.dataDir), source: sources.dataDir },
    profile: {
      value: config.profile,
      from: describeSource(sources.profile),
      source: sources.profile,
      in_config_file: sources.profileFound,
    },
    config_file: sources.configFile,
  };
}
