import type { Agent, Dispatcher } from 'undici';
import connectApi from 'undici/lib/api/api-connect.js';
import requestApi from 'undici/lib/api/api-request.js';
import AgentClass from 'undici/lib/dispatcher/agent.js';
import DispatcherClass from 'undici/lib/dispatcher/dispatcher.js';
import EnvHttpProxyAgentClass from 'undici/lib/dispatcher/env-http-proxy-agent.js';

/*
 * undici's index loads every part of it: fetch, WebSocket, EventSource, cookies, the cache and mock
 * modules, and with them Node's web streams, zlib, worker_threads and Node's own bundled copy of
 * undici. The client needs an Agent and `request`, so it loads those two modules (what undici's
 * index itself does with them is repeated here). `cas users list`, which every embedded command
 * resembles: 0.44 -> 0.40 s of CPU (medians of 10 alternated runs). Those files are undici's own, not
 * its published API, so package.json asks for exactly the undici they were checked against
 * (undici-parts.test.ts): the client library runs unbundled in apps, on whatever undici npm picks.
 */

export const newAgent = (options: Agent.Options): Dispatcher => new AgentClass(options);

/**
 * An Agent that goes through the given proxies, except to NO_PROXY's hosts (values, never process.env).
 * Its tunnels are opened with `Dispatcher.prototype.connect`, which undici's index attaches with the
 * rest of its API: attached here as the index does it, once, when a proxy is first used.
 */
export function newProxyAgent(
  options: Agent.Options & { httpProxy: string; httpsProxy: string; noProxy: string },
): Dispatcher {
  const prototype = DispatcherClass.prototype as { connect?: unknown };
  prototype.connect ??= connectApi;
  return new EnvHttpProxyAgentClass(options);
}

export type RequestOptions = Omit<Dispatcher.RequestOptions, 'origin' | 'path'> & { dispatcher: Dispatcher };

/** undici's `request(url, options)`: the URL split into origin and path, sent by the given dispatcher. */
export function request(
  url: string,
  { dispatcher, ...options }: RequestOptions,
): Promise<Dispatcher.ResponseData> {
  const parsed = new URL(url);
  return requestApi.call(dispatcher, {
    ...options,
    origin: parsed.origin,
    path: `${parsed.pathname}${parsed.search}`,
  });
}
