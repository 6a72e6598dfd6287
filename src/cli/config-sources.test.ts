import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../../test/helpers/temp.js';
import { runConfigReport } from '../commands/config-report.js';
import { type GlobalFlags, resolveConfig } from './config.js';
import { configSources } from './config-sources.js';

const RUNS = Number(process.env.CAS_PROPERTY_RUNS ?? 60);

let dir: { path: string; cleanup: () => void };
beforeAll(() => {
  dir = tempDir();
  mkdirSync(join(dir.path, 'cas'));
});
afterAll(() => dir.cleanup());

const writeConfig = (value: unknown) =>
  writeFileSync(join(dir.path, 'cas', 'config.json'), JSON.stringify(value));

/** The value a source names, read back from where it says: it must be the value resolveConfig chose. */
function valueAt(
  source: { kind: string; name: string } | undefined,
  flags: Record<string, string | undefined>,
  env: NodeJS.ProcessEnv,
  profile: Record<string, string | undefined> | undefined,
  flagKey: string,
  fileKey: string,
): string | undefined {
  if (source === undefined) return undefined;
  if (source.kind === 'flag') return flags[flagKey];
  if (source.kind === 'env') return env[source.name];
  if (source.kind === 'profile') return profile?.[fileKey];
  return 'default';
}

describe('configSources', () => {
  it('names, for any mix of flags, variables and profiles, the place resolveConfig took each value from', () => {
    // A variable set to '' counts as unset; a flag given '' is refused (config.test.ts).
    const maybe = (text: string) => fc.option(fc.constantFrom(text, ''), { nil: undefined });
    const maybeFlag = (text: string) => fc.option(fc.constant(text), { nil: undefined });
    fc.assert(
      fc.property(
        fc.record({
          flagEndpoint: maybeFlag('http://flag:1'),
          casEndpoint: maybe('http://cas:2'),
          mlsdkEndpoint: maybe('http://mlsdk:3'),
          fileEndpoint: fc.option(fc.constant('http://file:4'), { nil: undefined }),
          flagKey: maybeFlag('flag-key'),
          casKey: maybe('cas-key'),
          mlsdkKey: maybe('mlsdk-key'),
          fileKey: fc.option(fc.constant('file-key'), { nil: undefined }),
          flagProject: maybeFlag('flag-p'),
          mlsdkProject: maybe('mlsdk-p'),
          flagDir: maybeFlag('/flag/dir'),
          casDir: maybe('/cas/dir'),
          fileDir: fc.option(fc.constant('/file/dir'), { nil: undefined }),
          profile: fc.constantFrom<string | undefined>(undefined, 'prod'),
          defaultProfile: fc.constantFrom<string | undefined>(undefined, 'prod', 'other'),
        }),
        (c) => {
          const fileProfile = { endpoint: c.fileEndpoint, api_key: c.fileKey, data_dir: c.fileDir };
          writeConfig({
            ...(c.defaultProfile ? { default_profile: c.defaultProfile } : {}),
            profiles: { prod: fileProfile, other: {} },
          });
          const flags: GlobalFlags = {
            ...(c.flagEndpoint !== undefined ? { endpoint: c.flagEndpoint } : {}),
            ...(c.flagKey !== undefined ? { apiKey: c.flagKey } : {}),
            ...(c.flagProject !== undefined ? { project: c.flagProject } : {}),
            ...(c.flagDir !== undefined ? { dataDir: c.flagDir } : {}),
            ...(c.profile !== undefined ? { profile: c.profile } : {}),
          };
          const env: NodeJS.ProcessEnv = {
            XDG_CONFIG_HOME: dir.path,
            XDG_DATA_HOME: '/xdg-data',
            CAS_ENDPOINT: c.casEndpoint,
            MLSDK_SERVER_BASE: c.mlsdkEndpoint,
            CAS_API_KEY: c.casKey,
            MLSDK_API_KEY: c.mlsdkKey,
            MLSDK_PROJECT_ID: c.mlsdkProject,
            CAS_DATA_DIR: c.casDir,
          };
          const config = resolveConfig(flags, env);
          const sources = configSources(flags, env);
          const chosen =
            config.profile === 'prod' ? fileProfile : config.profile === 'other' ? {} : undefined;
          const f = flags as Record<string, string | undefined>;
          expect(valueAt(sources.endpoint, f, env, chosen, 'endpoint', 'endpoint')).toBe(config.endpoint);
          expect(valueAt(sources.apiKey, f, env, chosen, 'apiKey', 'api_key')).toBe(config.apiKey);
          expect(valueAt(sources.projectId, f, env, chosen, 'project', 'project_id')).toBe(config.projectId);
          const dataDir = valueAt(sources.dataDir, f, env, chosen, 'dataDir', 'data_dir');
          expect(dataDir === 'default' ? '/xdg-data/cas' : dataDir).toBe(config.dataDir);
          expect(sources.profile.kind).toBe(
            c.profile ? 'flag' : c.defaultProfile ? 'config-file' : 'default',
          );
          expect(sources.profileFound).toBe(config.profile !== 'default');
        },
      ),
      { numRuns: RUNS },
    );
  });
});

describe('runConfigReport', () => {
  const base = {
    timeoutMs: 1,
    retries: 1,
    retryTimeMs: 1,
    verbose: false,
    quiet: false,
    profile: 'default',
    dataDir: '/d',
  };
  const sources = {
    endpoint: undefined,
    apiKey: undefined,
    projectId: undefined,
    dataDir: { kind: 'default', name: '~/.local/share/cas' } as const,
    profile: { kind: 'default', name: 'none' } as const,
    configFile: '/c/config.json',
    profileFound: false,
  };

  it('remote: the endpoint, the project and the key source, never the key', () => {
    const report = runConfigReport(
      {
        config: { ...base, endpoint: 'https://x.example', apiKey: 'SECRET-123', projectId: 'p1' },
        sources: {
          ...sources,
          endpoint: { kind: 'env', name: 'MLSDK_SERVER_BASE' },
          apiKey: { kind: 'env', name: 'MLSDK_API_KEY' },
          projectId: { kind: 'flag', name: '--project' },
        },
      },
      { localProject: () => 'never', localServer: () => 'never' },
    );
    expect(JSON.stringify(report)).not.toContain('SECRET-123');
    expect(report).toMatchObject({
      mode: 'remote',
      endpoint: { value: 'https://x.example', from: 'env MLSDK_SERVER_BASE' },
      project: { value: 'p1', from: 'flag --project' },
      api_key: { set: true, from: 'env MLSDK_API_KEY; never shown' },
    });
  });

  it("local: the data directory's project, and a cas serve holding it", () => {
    const report = runConfigReport(
      { config: { ...base, endpoint: undefined, apiKey: undefined, projectId: undefined }, sources },
      { localProject: () => 'local_1', localServer: () => 'http://127.0.0.1:9' },
    );
    expect(report).toMatchObject({
      mode: 'local',
      endpoint: { value: 'http://127.0.0.1:9', source: { kind: 'data-dir', name: 'server.json' } },
      project: { value: 'local_1', from: 'data directory (credentials.json)' },
      // The data directory's key is the one in use (it was reported unset beside its source).
      api_key: { set: true, source: { kind: 'data-dir' } },
      data_dir: { value: '/d', from: 'default (~/.local/share/cas)' },
    });
    const fresh = runConfigReport(
      { config: { ...base, endpoint: undefined, apiKey: undefined, projectId: undefined }, sources },
      { localProject: () => undefined, localServer: () => undefined },
    );
    expect(fresh.project).toMatchObject({ value: null, from: 'created in the data directory on first use' });
    expect(fresh.api_key.set).toBe(false);
    expect(fresh.endpoint.value).toBeNull();
  });
});
