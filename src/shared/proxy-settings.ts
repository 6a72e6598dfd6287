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
