import { HttpError } from '../client/errors.js';
import type { Client } from '../client/http-client.js';
import { health } from '../client/routes.js';
import type { SERVICE_FEATURES } from '../shared/health.js';
import { UnsupportedFlagError } from './errors.js';

type Feature = (typeof SERVICE_FEATURES)[number];

/**
 * Refuses a flag that asks for one of our extensions of a service whose `/healthz` does not list it
 * (the hosted service has no `/healthz` features): such a service ignores the extension and answers
 * as if the flag were not given (`--measure sum:cost` charted counts; `--pattern` was dropped without
 * a word; found by probing). Only an answer says what the server is: busy, failing or unreachable is
 * said as such.
 */
export async function refuseWithout(client: Client, feature: Feature, flag: string): Promise<void> {
  const features = await health(client)
    .then((h) => h.features ?? [])
    .catch((error: unknown) => {
      if (error instanceof HttpError && error.status < 500 && error.status !== 429 && error.status !== 408)
        return [] as string[];
      throw error;
    });
  if (features.includes(feature)) return;
  throw new UnsupportedFlagError(
    `${flag}: this service does not take it (our extension; the hosted service has none), and would act as if it were not given`,
    'leave it out, or use a cas serve',
  );
}
