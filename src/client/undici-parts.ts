import type { Agent, Dispatcher } from 'undici';
import requestApi from 'undici/lib/api/api-request.js';
import AgentClass from 'undici/lib/dispatcher/agent.js';

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
