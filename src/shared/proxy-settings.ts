import { isLoopbackUrl } from './loopback-url.js';

/**
 * The proxy a client reaches a remote service through: HTTP_PROXY, HTTPS_PROXY and NO_PROXY as curl
 * reads them (the lower-case name first; NO_PROXY a list of hosts, domains, `host:port` or `*`).
 * Ignored before, so a CI runner behind a proxy could reach no endpoint (found by probing).
 */
export interface ProxySettings {
  http?: string | undefined;
  https?: string | undefined;
  noProxy?: string | undefined;
}

type Env = Readonly<Record<string, string | undefined>>;

const read = (env: Env, name: string): string | undefined => {
  const value = env[name.toLowerCase()] ?? env[name];
  return value === undefined || value.trim() === '' ? undefined : value.trim();
};

/** The settings the environment gives; undefined when it names no proxy. */
export function proxySettingsOf(env: Env): ProxySettings | undefined {
  const http = read(env, 'HTTP_PROXY');
  const https = read(env, 'HTTPS_PROXY');
  if (http === undefined && https === undefined) return undefined;
  return { http, https, noProxy: read(env, 'NO_PROXY') };
}

const DEFAULT_PORTS: Readonly<Record<string, number>> = {
  'http:': 80,
  'https:': 443,
  'ws:': 80,
  'wss:': 443,
};

/** NO_PROXY's entries: a host (a leading `.` or `*.` dropped), with a port when it names one. */
function noProxyEntries(noProxy: string): Array<{ host: string; port: number }> {
  return noProxy
    .split(/[,\s]/)
    .filter((entry) => entry !== '')
    .map((entry) => {
      const parsed = /^(.+):(\d+)$/.exec(entry);
      return {
        host: (parsed?.[1] ?? entry).replace(/^\*?\./, '').toLowerCase(),
        port: parsed?.[2] === undefined ? 0 : Number(parsed[2]),
      };
    });
}

/**
 * The proxy a URL is reached through, by the rules undici's `EnvHttpProxyAgent` applies to the HTTP
 * client's requests (its choice is private), so the live socket (`ws`) takes the route they take:
 * NO_PROXY matched by host, a subdomain of it, or host and port; `https:`/`wss:` through HTTPS_PROXY,
 * else HTTP_PROXY; `http:`/`ws:` through HTTP_PROXY. Undefined when the URL is reached directly, as
 * a loopback one always is (our own service).
 */
export function proxyFor(url: URL, settings: ProxySettings | undefined): string | undefined {
  if (settings === undefined || isLoopbackUrl(url.href)) return undefined;
  const secure = url.protocol === 'https:' || url.protocol === 'wss:';
  const proxy = secure ? (settings.https ?? settings.http) : settings.http;
  if (proxy === undefined) return undefined;
  const noProxy = settings.noProxy ?? '';
  if (noProxy.trim() === '*') return undefined;
  // `host` keeps an IPv6 address's brackets, as NO_PROXY writes it.
  const host = url.host.replace(/:\d*$/, '').toLowerCase();
  const port = Number.parseInt(url.port, 10) || DEFAULT_PORTS[url.protocol] || 0;
  const bypass = noProxyEntries(noProxy).some(
    (entry) =>
      (entry.port === 0 || entry.port === port) && (host === entry.host || host.endsWith(`.${entry.host}`)),
  );
  return bypass ? undefined : proxy;
}
