import { describe, expect, it } from 'vitest';
import { type ProxySettings, proxyFor } from './proxy-settings.js';

const HTTP = 'http://proxy-h:3128';
const HTTPS = 'http://proxy-s:3129';
const via = (url: string, settings: ProxySettings | undefined) => proxyFor(new URL(url), settings);

describe('proxyFor: the route the live socket takes, as undici takes the requests', () => {
  it('http and ws through HTTP_PROXY; https and wss through HTTPS_PROXY, else HTTP_PROXY', () => {
    const both = { http: HTTP, https: HTTPS };
    expect(via('http://cas.example:8080', both)).toBe(HTTP);
    expect(via('ws://cas.example:8080', both)).toBe(HTTP);
    expect(via('https://cas.example', both)).toBe(HTTPS);
    expect(via('wss://cas.example', both)).toBe(HTTPS);
    expect(via('https://cas.example', { http: HTTP })).toBe(HTTP);
    expect(via('http://cas.example', { https: HTTPS })).toBeUndefined();
    expect(via('http://cas.example', undefined)).toBeUndefined();
  });

  it('never for a loopback endpoint, our own service', () => {
    for (const url of ['http://127.0.0.1:7070', 'http://localhost:7070', 'http://[::1]:7070'])
      expect(via(url, { http: HTTP })).toBeUndefined();
  });

  it('NO_PROXY: a host, its subdomains, a leading dot or *., a port, * for all', () => {
    const bypassed = (url: string, noProxy: string) =>
      via(url, { http: HTTP, https: HTTPS, noProxy }) === undefined;
    expect(bypassed('http://cas.example', 'cas.example')).toBe(true);
    expect(bypassed('http://api.cas.example', 'cas.example')).toBe(true);
    expect(bypassed('http://notcas.example', 'cas.example')).toBe(false);
    expect(bypassed('http://api.cas.example', '.cas.example')).toBe(true);
    expect(bypassed('http://api.cas.example', '*.cas.example')).toBe(true);
    expect(bypassed('http://CAS.example', 'cas.EXAMPLE')).toBe(true);
    expect(bypassed('http://cas.example:8080', 'other, cas.example:8080')).toBe(true);
    expect(bypassed('http://cas.example:8081', 'cas.example:8080')).toBe(false);
    expect(bypassed('https://cas.example', 'cas.example:443')).toBe(true);
    expect(bypassed('wss://cas.example', 'cas.example:443')).toBe(true);
    expect(bypassed('http://[2001:db8::1]:80', '[2001:db8::1]')).toBe(true);
    expect(bypassed('http://anything.example', ' * ')).toBe(true);
    expect(bypassed('http://cas.example', '')).toBe(false);
  });
});
