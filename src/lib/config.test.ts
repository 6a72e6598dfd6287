import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { tempDir } from '../../test/helpers/temp.js';
import { resolveSettings } from './config.js';

let dir: { path: string; cleanup: () => void };
let env: Record<string, string | undefined>;

beforeEach(() => {
  dir = tempDir();
  mkdirSync(join(dir.path, 'cas'));
  env = { XDG_CONFIG_HOME: dir.path, XDG_DATA_HOME: join(dir.path, 'data') };
});
afterEach(() => dir.cleanup());

const writeConfig = (value: unknown) =>
  writeFileSync(join(dir.path, 'cas', 'config.json'), JSON.stringify(value));

describe('library settings: option > CAS_* > MLSDK_* > config profile > embedded default', () => {
  it('is the embedded default when nothing is configured', () => {
    expect(resolveSettings({}, env)).toEqual({
      endpoint: undefined,
      apiKey: undefined,
      projectId: undefined,
      dataDir: join(dir.path, 'data', 'cas'),
      profile: 'default',
      debug: false,
      timeoutMs: 30_000,
      retries: 5,
      maxQueueSize: 10_000,
    });
  });

  it('walks down the chain one level at a time', () => {
    writeConfig({
      profiles: { default: { endpoint: 'https://profile.example', api_key: 'pk', project_id: 'pp' } },
    });
    expect(resolveSettings({}, env)).toMatchObject({
      endpoint: 'https://profile.example',
      apiKey: 'pk',
      projectId: 'pp',
    });
    env.MLSDK_SERVER_BASE = 'https://mlsdk.example/';
    env.MLSDK_API_KEY = 'mk';
    expect(resolveSettings({}, env)).toMatchObject({
      endpoint: 'https://mlsdk.example',
      apiKey: 'mk',
      projectId: 'pp',
    });
    env.CAS_ENDPOINT = 'http://cas.example:9';
    env.CAS_PROJECT_ID = 'cp';
    expect(resolveSettings({}, env)).toMatchObject({
      endpoint: 'http://cas.example:9',
      apiKey: 'mk',
      projectId: 'cp',
    });
    expect(resolveSettings({ endpoint: 'http://opt:1', apiKey: 'ok', projectId: 'op' }, env)).toMatchObject({
      endpoint: 'http://opt:1',
      apiKey: 'ok',
      projectId: 'op',
    });
  });

  it('takes the profile named by CAS_PROFILE, else the file default', () => {
    writeConfig({
      default_profile: 'a',
      profiles: { a: { data_dir: '/data/a' }, b: { data_dir: '/data/b' } },
    });
    expect(resolveSettings({}, env).dataDir).toBe('/data/a');
    expect(resolveSettings({}, { ...env, CAS_PROFILE: 'b' }).dataDir).toBe('/data/b');
    expect(resolveSettings({ dataDir: '/opt' }, { ...env, CAS_DATA_DIR: '/env' }).dataDir).toBe('/opt');
    // A name that is set must be in the file: a typo would otherwise mean the embedded default.
    expect(() => resolveSettings({}, { ...env, CAS_PROFILE: 'c' })).toThrow(/CAS_PROFILE: no profile "c"/);
    writeConfig({ default_profile: 'x', profiles: { a: { data_dir: '/data/a' } } });
    expect(() => resolveSettings({}, env)).toThrow(/default_profile: no profile "x"/);
    expect(resolveSettings({}, { ...env, CAS_PROFILE: 'a' }).dataDir).toBe('/data/a');
  });

  it('refuses what cannot work, naming the option', () => {
    expect(() => resolveSettings({ endpoint: 'ftp://x' }, env)).toThrow(/endpoint must be an http\(s\) URL/);
    expect(() => resolveSettings({ endpoint: 'http://x' }, env)).toThrow(
      /apiKey .* is required with an endpoint/,
    );
    expect(() => resolveSettings({ endpoint: 'http://x', apiKey: 'k' }, env)).toThrow(
      /projectId .* is required/,
    );
    expect(() => resolveSettings({ timeoutMs: -1 }, env)).toThrow(
      /^new Client: timeoutMs: must be 0 \(no timeout\) or more$/,
    );
    expect(() => resolveSettings({ debug: 'yes' } as never, env)).toThrow(/^new Client: debug: must be/);
    writeConfig('not an object');
    expect(() => resolveSettings({}, env)).toThrow(/config file .*config\.json/);
  });

  it('refuses an option it does not know, with the one probably meant, instead of ignoring it', () => {
    const typo = { endpiont: 'http://x', apiKey: 'k', projectId: 'p' };
    expect(() => resolveSettings(typo as never, env)).toThrow(TypeError);
    expect(() => resolveSettings(typo as never, env)).toThrow(
      /^new Client: unknown option "endpiont" \(did you mean "endpoint"\?\)$/,
    );
    expect(() => resolveSettings({ api_key: 'k', colour: true } as never, env)).toThrow(
      /^new Client: unknown option "api_key" \(did you mean "apiKey"\?\); unknown option "colour"$/,
    );
  });

  // Taken for "not set", '' sent an app's events to the default store or the environment's endpoint.
  it('refuses an option given as an empty string, as the CLI refuses an empty flag', () => {
    for (const name of ['dataDir', 'endpoint', 'apiKey', 'projectId'])
      expect(() => resolveSettings({ [name]: '' }, { ...env, CAS_ENDPOINT: 'http://127.0.0.1:1' })).toThrow(
        new TypeError(`new Client: ${name}: is empty: leave it out for the default`),
      );
  });

  it('bounds the numbers: a queue holds an event, retries are whole, a timeout fits a timer', () => {
    const refused = (options: Record<string, unknown>, message: string) =>
      expect(() => resolveSettings(options, env)).toThrow(new TypeError(`new Client: ${message}`));
    refused({ maxQueueSize: 0 }, 'maxQueueSize: must be at least 1');
    refused({ maxQueueSize: 2.5 }, 'maxQueueSize: must be a whole number');
    refused({ retries: -1 }, 'retries: must be 0 or more');
    refused({ retries: 1.5 }, 'retries: must be a whole number');
    refused({ retries: Number.POSITIVE_INFINITY }, 'retries: must be a number');
    refused({ timeoutMs: 2 ** 31 }, 'timeoutMs: must be at most 2147483647 (about 24.8 days)');
    refused({ timeoutMs: Number.NaN }, 'timeoutMs: must be a number');
    expect(resolveSettings({ maxQueueSize: 1, retries: 0, timeoutMs: 0 }, env)).toMatchObject({
      maxQueueSize: 1,
      retries: 1,
      timeoutMs: 0,
    });
  });
});
