import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NetworkError } from './errors.js';
import { createClient } from './http-client.js';

/**
 * TLS failures no retry mends are said at once, with what to do: a self-signed certificate took five
 * attempts and 13 s, and https:// to a plain-HTTP port printed OpenSSL's own error text (found by
 * probing). The certificate below is a throwaway one for 127.0.0.1, self-signed, valid until 2126.
 */
const KEY = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgvQEAQvN7dsYMgXIV
J16aLCFcJ6xBzYWmNGz+y9QZ+iChRANCAASshWqAG38YrHX42MZyUtM0wTSZXMbk
VW5DK36OBubOmq99E3yER0e26vApLUo68Ah4HQz5K+Uted0Rg4HIPApM
-----END PRIVATE KEY-----`;
const CERT = `-----BEGIN CERTIFICATE-----
MIIBjzCCATSgAwIBAgIUapn37tRDYsTvstuyH8Uml1CvgzowCgYIKoZIzj0EAwIw
EzERMA8GA1UEAwwIY2FzIHRlc3QwIBcNMjYxMTMwMDk1MzA5WhgPMjEyNjExMDYw
OTUzMDlaMBMxETAPBgNVBAMMCGNhcyB0ZXN0MFkwEwYHKoZIzj0CAQYIKoZIzj0D
AQcDQgAErIVqgBt/GKx1+NjGclLTNME0mVzG5FVuQyt+jgbmzpqvfRN8hEdHturw
KS1KOvAIeB0M+SvlLXndEYOByDwKTKNkMGIwHQYDVR0OBBYEFMiDTPuPGC90r7yY
/bccmgvOeMxeMB8GA1UdIwQYMBaAFMiDTPuPGC90r7yY/bccmgvOeMxeMA8GA1Ud
EwEB/wQFMAMBAf8wDwYDVR0RBAgwBocEfwAAATAKBggqhkjOPQQDAgNJADBGAiEA
0U66OdxWF08JENu589PchnMthz3GzVQF99NJOvhlL2gCIQDRbNq2VJ8Z1TMrh0lj
11i8xapZPvEEk5e5uoDXae0TCQ==
-----END CERTIFICATE-----`;

let tls: Server;
let plain: Server;
let hits = 0;
const portOf = (s: Server) => (s.address() as AddressInfo).port;

beforeAll(async () => {
  tls = createServer({ key: KEY, cert: CERT }, (_req, res) => {
    hits++;
    res.end('[]');
  });
  plain = createHttpServer((_req, res) => res.end('[]'));
  await Promise.all(
    [tls, plain].map((s) => new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve))),
  );
});
afterAll(async () => {
  await Promise.all([tls, plain].map((s) => new Promise((resolve) => s.close(resolve))));
});

async function failure(endpoint: string): Promise<NetworkError> {
  const retried: number[] = [];
  const client = createClient({
    endpoint,
    apiKey: 'k',
    projectId: 'p',
    retries: 5,
    onRetry: (info) => retried.push(info.attempt),
  });
  try {
    await client.request({ method: 'GET', path: '/bc/v1/agg/event-names' });
    throw new Error('the request succeeded');
  } catch (error) {
    expect(retried).toEqual([]);
    if (!(error instanceof NetworkError)) throw error;
    return error;
  } finally {
    await client.close();
  }
}

describe('TLS failures', () => {
  it('an untrusted certificate: one attempt, and where to give its CA', async () => {
    const error = await failure(`https://127.0.0.1:${portOf(tls)}`);
    expect(error.message).toBe(
      `cannot reach https://127.0.0.1:${portOf(tls)}: self-signed certificate; the service's certificate is not trusted: give its CA certificate in NODE_EXTRA_CA_CERTS`,
    );
    expect(hits).toBe(0);
  });

  it('https:// to a port that answers plain HTTP: one attempt, and to give it as http://', async () => {
    const error = await failure(`https://127.0.0.1:${portOf(plain)}`);
    expect(error.message).toBe(
      `cannot reach https://127.0.0.1:${portOf(plain)}: wrong version number (TLS); the endpoint answers plain HTTP: give it as http://`,
    );
  });
});
