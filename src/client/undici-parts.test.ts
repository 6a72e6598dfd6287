import { readFileSync } from 'node:fs';
import { Agent, Dispatcher, EnvHttpProxyAgent } from 'undici';
import connectApi from 'undici/lib/api/api-connect.js';
import requestApi from 'undici/lib/api/api-request.js';
import AgentClass from 'undici/lib/dispatcher/agent.js';
import DispatcherClass from 'undici/lib/dispatcher/dispatcher.js';
import EnvHttpProxyAgentClass from 'undici/lib/dispatcher/env-http-proxy-agent.js';
import { describe, expect, it } from 'vitest';

const manifest = (path: string): { version?: string; dependencies?: Record<string, string> } =>
  JSON.parse(readFileSync(new URL(path, import.meta.url), 'utf8'));

/*
 * undici-parts.ts loads two of undici's own files, which undici does not publish as its API: a later
 * 7.x may move or change them. The package (whose client library apps load unbundled) therefore asks
 * for exactly the undici these checks ran against.
 */
describe("undici's parts", () => {
  it('come from exactly the undici the package asks for', () => {
    const wanted = manifest('../../package.json').dependencies?.undici;
    expect(wanted).toMatch(/^\d+\.\d+\.\d+$/);
    expect(manifest('../../node_modules/undici/package.json').version).toBe(wanted);
  });

  it("are what undici's index exports: its Agent, and the request it gives every dispatcher", () => {
    expect(AgentClass).toBe(Agent);
    expect(EnvHttpProxyAgentClass).toBe(EnvHttpProxyAgent);
    expect(DispatcherClass).toBe(Dispatcher);
    expect(Dispatcher.prototype.connect).toBe(connectApi);
    expect(Agent.prototype.request).toBe(requestApi);
  });
});
