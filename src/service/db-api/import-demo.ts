import { parseQueueBody } from '../../shared/events.js';
import type { Limits } from '../../shared/limits.js';
import { invalidInput } from '../errors.js';
import type { Scope } from '../identity/identity.js';
import type { Ingestor } from '../ingest/ingestor.js';
import { type DemoOptions, demoEvents } from './demo-data.js';

/**
 * Sends the demo events through the Ingestor in queue-sized requests, in time order, as a client
 * would: every derived row (sessions, summaries, intents, sentiment) comes from the ingest core.
 * Event ids are fixed, so a second import stores nothing new (all duplicates).
 */
export async function importDemo(
  ingestor: Ingestor,
  tenant: Scope,
  limits: Pick<Limits, 'eventsPerRequest' | 'eventBytes'>,
  options: Partial<DemoOptions> = {},
): Promise<{ accepted: number; duplicates: number }> {
  const events = demoEvents(options);
  let accepted = 0;
  let duplicates = 0;
  for (let from = 0; from < events.length; from += limits.eventsPerRequest) {
    const chunk = events.slice(from, from + limits.eventsPerRequest);
    const parsed = () => {
      const r = parseQueueBody(chunk, {
        eventsPerRequest: limits.eventsPerRequest,
        eventBytes: limits.eventBytes,
      });
      // The generator is ours; a refusal here is a bug in it, reported like any invalid batch.
      if (!r.ok) throw invalidInput(r.issues, 'demo data');
      return r.events;
    };
    const result = await ingestor.ingest(tenant, parsed, Date.now());
    accepted += result.accepted;
    duplicates += result.duplicates;
  }
  return { accepted, duplicates };
}
