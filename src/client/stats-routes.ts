import {
  type EventStat,
  eventStatsResponseSchema,
  type PropertyStat,
  propertyStatsResponseSchema,
} from '../shared/event-stats.js';
import type { Client } from './http-client.js';

/**
 * Client functions of our extension routes /summary/event-stats and /summary/property-stats
 * (shared/event-stats.ts), one per route like routes.ts. A service without them answers 404: callers
 * fall back to the `/agg/*` names.
 */

interface CallOptions {
  signal?: AbortSignal;
}
const sig = (o: CallOptions | undefined) => (o?.signal ? { signal: o.signal } : {});

export function eventStats(
  client: Client,
  query: { event_regex?: string } = {},
  o?: CallOptions,
): Promise<EventStat[]> {
  return client.request({
    method: 'GET',
    path: '/bc/v1/summary/event-stats',
    query,
    schema: eventStatsResponseSchema,
    ...sig(o),
  });
}

export function propertyStats(
  client: Client,
  query: { event_name: string; top?: number },
  o?: CallOptions,
): Promise<PropertyStat[]> {
  return client.request({
    method: 'GET',
    path: '/bc/v1/summary/property-stats',
    query,
    schema: propertyStatsResponseSchema,
    ...sig(o),
  });
}
