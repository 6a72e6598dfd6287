import { HttpError, NetworkError, TimeoutError } from '../client/errors.js';
import type { Client } from '../client/http-client.js';
import { health } from '../client/routes.js';
import type { SERVICE_FEATURES } from '../shared/health.js';
import { UnsupportedFlagError } from './errors.js';

export type ServiceFeature = (typeof SERVICE_FEATURES)[number];

/**
 * The extensions of ours a service lists in `/healthz` (a `cas serve`: all; one without `features`,
 * such as the hosted service: none). Only an answer says what the server is: an endpoint nobody
 * answers is said as such, at once (it read first as a service without our extensions, found by
 * probing), and one busy or failing after every retry is not "without extensions" (a `cas serve`
 * whose /healthz failed meanwhile got an import's final ends, and its next run's records were refused).
 */
export async function serviceFeatures(client: Client): Promise<readonly string[]> {
  return health(client)
    .then((h) => h.features ?? [])
    .catch((error: unknown) => {
      if (error instanceof NetworkError || error instanceof TimeoutError) throw error;
      if (error instanceof HttpError && (error.status >= 500 || error.status === 429 || error.status === 408))
        throw error;
      return [];
    });
}

/**
 * Refuses a flag that asks for one of our extensions of a service whose `/healthz` does not list it:
 * such a service ignores the extension and answers as if the flag were not given (`--measure
 * sum:cost` charted counts; `--pattern` was dropped without a word; found by probing).
 */
export async function refuseWithout(client: Client, feature: ServiceFeature, flag: string): Promise<void> {
  if ((await serviceFeatures(client)).includes(feature)) return;
  throw new UnsupportedFlagError(
    `${flag}: this service does not take it (our extension; the hosted service has none), and would act as if it were not given`,
    'leave it out, or use a cas serve',
  );
}
