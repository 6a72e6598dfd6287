import type { ProxySettings } from '../shared/proxy-settings.js';

/** Everything a command needs to know about where and how to talk, after precedence is applied. */
export interface Config {
  endpoint: string | undefined;
  apiKey: string | undefined;
  projectId: string | undefined;
  dataDir: string;
  profile: string;
  timeoutMs: number;
  retries: number;
  retryTimeMs: number;
  verbose: boolean;
  quiet: boolean;
  /** HTTP_PROXY / HTTPS_PROXY / NO_PROXY, for a remote endpoint. */
  proxy?: ProxySettings | undefined;
}
