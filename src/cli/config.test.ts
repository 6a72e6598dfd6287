import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, userInfo } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { tempDir } from '../../test/helpers/temp.js';
import { UsageError } from '../commands/errors.js';
import { resolveConfig } from './config.js';

let dir: { path: string; cleanup: () => void };
let env: NodeJS.ProcessEnv;

beforeEach(() => {
  dir = tempDir();
  mkdirSync(join(dir.path, 'cas'));
  env = { XDG_CONFIG_HOME: dir.path, XDG_DATA_HOME: join(dir.path, 'data') };
});
afterEach(() => dir.cleanup());

const writeConfig = (value: unknown) =>
  writeFileSync(join(dir.path, 'cas', 'config.json'), JSON.stringify(value));

// Node takes an empty or relative HOME as given: the store and the config file went under the
// working directory, a new store in each (found by probing).
it("an empty or relative HOME means the account's home, not the working directory", () => {
  const saved = process.env.HOME;
  try {
    for (const value of ['', 'relative/home']) {
      process.env.HOME = value;
      const config = resolveConfig({}, { XDG_CONFIG_HOME: dir.path });
      expect(config.dataDir, `HOME=${value}`).toBe(join(userInfo().homedir, '.local', 'share', 'cas'));
    }
  } finally {
    process.env.HOME = saved;
  }
});

describe('resolveConfig precedence: flag > CAS_* > MLSDK_* > config file > embedded default', () => {
  it('uses the embedded default when nothing is configured', () => {
    const config = resolveConfig({}, env);
    expect(config.endpoint).toBeUndefined();
    expect(config.dataDir).toBe(join(dir.path, 'data', 'cas'));
    expect(config).toMatchObject({ timeoutMs: 30_000, retries: 5, retryTimeMs: 60_000 });
  });

  it('ignores a relative XDG_DATA_HOME or XDG_CONFIG_HOME, as the XDG spec asks', () => {
    const config = resolveConfig({}, { XDG_DATA_HOME: 'relative/data', XDG_CONFIG_HOME: 'relative/config' });
    expect(config.dataDir).toBe(join(homedir(), '.local', 'share', 'cas'));
  });

  it('walks down the chain one level at a time', () => {
    writeConfig({
      profiles: { default: { endpoint: 'http://file:1', api_key: 'file-key', project_id: 'file-p' } },
    });
    expect(resolveConfig({}, env)).toMatchObject({
      endpoint: 'http://file:1',
      apiKey: 'file-key',
      projectId: 'file-p',
    });

    env.MLSDK_SERVER_BASE = 'http://mlsdk:2';
    env.MLSDK_API_KEY = 'mlsdk-key';
    env.MLSDK_PROJECT_ID = 'mlsdk-p';
    expect(resolveConfig({}, env)).toMatchObject({
      endpoint: 'http://mlsdk:2',
      apiKey: 'mlsdk-key',
      projectId: 'mlsdk-p',
    });

    env.CAS_ENDPOINT = 'http://cas:3/';
    env.CAS_API_KEY = 'cas-key';
    env.CAS_PROJECT_ID = 'cas-p';
    expect(resolveConfig({}, env)).toMatchObject({
      endpoint: 'http://cas:3',
      apiKey: 'cas-key',
      projectId: 'cas-p',
    });

    expect(
      resolveConfig({ endpoint: 'http://flag:4', apiKey: 'flag-key', project: 'flag-p' }, env),
    ).toMatchObject({
      endpoint: 'http://flag:4',
      apiKey: 'flag-key',
      projectId: 'flag-p',
    });
  });

  it('selects a profile by flag or CAS_PROFILE and names unknown ones', () => {
    writeConfig({
      profiles: { default: { api_key: 'd' }, prod: { endpoint: 'https://prod.example', api_key: 'p' } },
    });
    expect(resolveConfig({ profile: 'prod' }, env).apiKey).toBe('p');
    expect(resolveConfig({}, { ...env, CAS_PROFILE: 'prod' }).endpoint).toBe('https://prod.example');
    expect(() => resolveConfig({ profile: 'staging' }, env)).toThrow(/--profile: no profile "staging"/);
    expect(() => resolveConfig({}, { ...env, CAS_PROFILE: 'stage' })).toThrow(
      /CAS_PROFILE: no profile "stage"/,
    );
  });

  it("names as unknown a profile only the object's prototype has (constructor, toString), in a file or without one", () => {
    for (const name of ['constructor', 'toString', 'valueOf', 'hasOwnProperty']) {
      expect(() => resolveConfig({}, { ...env, CAS_PROFILE: name })).toThrow(/there is no config file/);
    }
    writeConfig({ profiles: { prod: { api_key: 'p' }, constructor: { api_key: 'c' } } });
    expect(resolveConfig({ profile: 'constructor' }, env).apiKey).toBe('c');
    expect(() => resolveConfig({ profile: 'toString' }, env)).toThrow(/--profile: no profile "toString" in/);
    // JSON.stringify drops a "__proto__" key of an object literal: written as text.
    writeFileSync(
      join(dir.path, 'cas', 'config.json'),
      '{"profiles": {"__proto__": {"endpoint": "https://x.example"}}}',
    );
    expect(() => resolveConfig({ profile: '__proto__' }, env)).toThrow(
      /profiles: "__proto__" cannot name a profile/,
    );
  });

  it('says there is no config file when a profile is named and none exists', () => {
    expect(() => resolveConfig({}, { ...env, CAS_PROFILE: 'x' })).toThrow(
      /^CAS_PROFILE: no profile "x": there is no config file .*config\.json$/,
    );
  });

  it('refuses a default_profile the file does not hold, unless another profile is named', () => {
    writeConfig({ default_profile: 'prdo', profiles: { prod: { api_key: 'p' } } });
    expect(() => resolveConfig({}, env)).toThrow(UsageError);
    expect(() => resolveConfig({}, env)).toThrow(/^default_profile: no profile "prdo" in .*config\.json$/);
    expect(resolveConfig({ profile: 'prod' }, env).apiKey).toBe('p');
  });

  it('refuses a flag given an empty value instead of falling back to the default', () => {
    for (const flags of [
      { dataDir: '' },
      { endpoint: ' ' },
      { apiKey: '' },
      { project: '' },
      { profile: '' },
    ]) {
      expect(() => resolveConfig(flags, env)).toThrow(UsageError);
      expect(() => resolveConfig(flags, env)).toThrow(/must not be empty/);
    }
    // An empty environment variable is unset, as shells have it.
    expect(resolveConfig({}, { ...env, CAS_DATA_DIR: '' }).dataDir).toBe(resolveConfig({}, env).dataDir);
  });

  it('refuses -q with -v, where -v won without a word', () => {
    expect(() => resolveConfig({ quiet: true, verbose: true }, env)).toThrow(
      '-q/--quiet and -v/--verbose contradict each other: give one',
    );
    expect(resolveConfig({ quiet: true }, env).quiet).toBe(true);
  });

  it('rejects bad values naming the flag', () => {
    expect(() => resolveConfig({ timeout: 'soon' }, env)).toThrow(UsageError);
    expect(() => resolveConfig({ timeout: 'soon' }, env)).toThrow(/--timeout/);
    // Past Node's longest timer, every request timed out at once (TimeoutOverflowWarning), exit 5.
    expect(() => resolveConfig({ timeout: '99999999999' }, env)).toThrow(
      '--timeout must be at most 2147483647, got "99999999999"',
    );
    expect(resolveConfig({ timeout: '2147483647' }, env).timeoutMs).toBe(2_147_483_647);
    // Number('') is 0: an empty value meant no timeout, one attempt, no time to retry (found by probing).
    for (const flag of ['timeout', 'retries', 'retryTime'] as const)
      expect(() => resolveConfig({ [flag]: '' }, env), flag).toThrow(/must be a whole number, got ""/);
    expect(() => resolveConfig({ endpoint: 'ftp://x' }, env)).toThrow(/--endpoint/);
    // A URL that does not parse (the README's placeholder) is a usage error too, named by its source.
    expect(() => resolveConfig({}, { ...env, MLSDK_SERVER_BASE: 'https://…' })).toThrow(
      'MLSDK_SERVER_BASE must be an http(s) URL, got "https://…"',
    );
    expect(() => resolveConfig({ endpoint: 'https://exa mple.com' }, env)).toThrow(/^--endpoint must be/);
    expect(() => resolveConfig({}, { ...env, CAS_ENDPOINT: 'notaurl' })).toThrow(/^CAS_ENDPOINT must be/);
    writeFileSync(join(dir.path, 'cas', 'config.json'), '{not json');
    expect(() => resolveConfig({}, env)).toThrow(/config\.json is not valid JSON/);
  });

  // Each of these ran the command on the embedded default without a word (found by probing).
  it('refuses a config file it cannot read, a misspelt key, and says where JSON breaks', () => {
    const path = join(dir.path, 'cas', 'config.json');
    writeFileSync(path, '{\n  "default_profile": "local",\n}\n');
    expect(() => resolveConfig({}, env)).toThrow(
      `config file ${path} is not valid JSON: line 3, column 1: Expected double-quoted property name`,
    );
    writeConfig({ default_profile: 'local', profiles: { local: { dta_dir: '/x' } } });
    expect(() => resolveConfig({}, env)).toThrow(
      `config file ${path}: profiles.local: unknown key "dta_dir" (did you mean "data_dir"?); the keys are endpoint, api_key, project_id, data_dir`,
    );
    // A top-level key: its path is empty ("config.json: : Unrecognized key" was all it said).
    writeConfig({ defaultProfile: 'local' });
    expect(() => resolveConfig({}, env)).toThrow(
      `config file ${path}: unknown key "defaultProfile" (did you mean "default_profile"?); the keys are default_profile, profiles`,
    );
    rmSync(path);
    mkdirSync(path);
    expect(() => resolveConfig({}, env)).toThrow(`config file ${path} cannot be read: it is a folder`);
  });
});
