import { HttpError } from '../client/errors.js';
import type { Client } from '../client/http-client.js';
import { listEventNames, listProperties, listPropertyValues } from '../client/routes.js';
import { eventStats, propertyStats } from '../client/stats-routes.js';
import { PROPERTY_TOP_MAX } from '../shared/event-stats.js';
import type { Scalar } from '../shared/primitives.js';
import { UsageError } from './errors.js';
import { namingFlags } from './flag-refusals.js';
import { exactRegex } from './hint-lines.js';
import { wholeNumber } from './users.js';

/**
 * `cas events [--like <re>]` and `cas properties <event>`: what a project's data holds, so chart
 * flags can be written without guessing. Our service's extension routes give counts, people, time
 * spans, JSON types and top values; against a service without them (404) the `/agg/*` names are
 * listed with the counts left empty (null).
 */

export interface EventRow {
  event: string;
  count: number | null;
  users: number | null;
  first: string | null;
  last: string | null;
}

export interface EventsResult {
  events: EventRow[];
}

const notFound = (error: unknown) => error instanceof HttpError && error.status === 404;

export function runEvents(
  options: { like?: string | undefined },
  deps: { client: Client },
): Promise<EventsResult> {
  return namingFlags(
    () => eventsOf(options, deps),
    (path) => (path === 'event_regex' ? `--like "${options.like}"` : undefined),
  );
}

async function eventsOf(
  options: { like?: string | undefined },
  deps: { client: Client },
): Promise<EventsResult> {
  const query = options.like !== undefined ? { event_regex: options.like } : {};
  try {
    const stats = await eventStats(deps.client, query);
    return {
      events: stats.map(({ event, count, users, first, last }) => ({ event, count, users, first, last })),
    };
  } catch (error) {
    if (!notFound(error)) throw error;
  }
  const names = await listEventNames(deps.client, query);
  return { events: names.map((event) => ({ event, count: null, users: null, first: null, last: null })) };
}

export interface PropertyRow {
  property: string;
  count: number | null;
  types: string[];
  distinct: number | null;
  top: Array<{ value: Scalar; count: number | null }>;
}

export interface PropertiesResult {
  event: string;
  properties: PropertyRow[];
  /** The event has no stored rows: the nearest names, for the hint. */
  unknown?: { known: string[] };
}

export async function runProperties(
  options: { event: string; top?: string | number | undefined },
  deps: { client: Client },
): Promise<PropertiesResult> {
  const { client } = deps;
  const { event } = options;
  const top =
    typeof options.top === 'number' ? options.top : wholeNumber(options.top, '--top', 5, PROPERTY_TOP_MAX);
  if (event.trim() === '')
    throw new UsageError('cas properties needs an event name', 'e.g. cas properties "Conversation Turn"');
  let properties: PropertyRow[] | undefined;
  try {
    properties = await propertyStats(client, { event_name: event, top });
  } catch (error) {
    if (!notFound(error)) throw error;
  }
  if (properties === undefined) {
    // The hosted routes: names, then each property's values (most frequent first, as text).
    const eventRegex = exactRegex(event);
    const names = await listProperties(client, { event_regex: eventRegex });
    properties = await Promise.all(
      names.map(async (property) => {
        const values = await listPropertyValues(client, {
          event_regex: eventRegex,
          property_name_regex: exactRegex(property),
        });
        return {
          property,
          count: null,
          types: [],
          distinct: null,
          top: values.slice(0, top).map((value) => ({ value, count: null })),
        };
      }),
    );
  }
  if (properties.length > 0) return { event, properties };
  const known = await listEventNames(client, {});
  return known.includes(event) ? { event, properties } : { event, properties, unknown: { known } };
}
