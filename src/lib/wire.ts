import { randomUUID } from 'node:crypto';
import type { z } from 'zod';
import { formatPath } from '../shared/errors.js';
import { EVENT_NAMES } from '../shared/event-names.js';
import { parseWireEventRaw } from '../shared/events.js';
import type {
  endConversationArgs,
  endSessionArgs,
  functionCallArgs,
  sessionAliasArgs,
  sessionIdentifyArgs,
  trackEventArgs,
  turnArgs,
  usageArgs,
} from './arguments.js';
import type { Usage } from './types.js';

/** One event as the queue route takes it, with the id that makes a retry harmless. */
export type WireObject = Record<string, unknown> & { event_id: string };

/** What every event of one session says about where it belongs. */
export interface SessionContext {
  sessionId: string;
  conversationId: string | undefined;
  id: string | undefined;
  deviceId: string | undefined;
}

type Out<S extends z.ZodType> = z.output<S>;

/** Drops undefined members, so the wire carries only what the caller gave. */
function compact(o: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
}

/** Client-generated ids (library.md): the service stores each once, so a retried batch never duplicates. */
function base(ctx: SessionContext, timestamp: string | undefined, now: () => Date): WireObject {
  return {
    event_id: randomUUID(),
    // The time of the call, not of sending: a batch delayed by retries keeps its events' times.
    timestamp: timestamp ?? now().toISOString(),
    session_id: ctx.sessionId,
  };
}

/** The caller's user and device, on every event like the hosted JavaScript SDK: any one may open the session. */
function who(ctx: SessionContext): Record<string, unknown> {
  return compact({ user_id: ctx.id, device_id: ctx.deviceId });
}

function usageProperties(usage: Usage | undefined): Record<string, unknown> {
  if (usage === undefined) return {};
  if ('cost' in usage) return { cost: usage.cost };
  return { model: usage.model, prompt_tokens: usage.promptTokens, completion_tokens: usage.completionTokens };
}

function track(
  ctx: SessionContext,
  event: string,
  a: { timestamp?: string | undefined; conversationId?: string | undefined },
  properties: Record<string, unknown> | undefined,
  now: () => Date,
): WireObject {
  return {
    ...base(ctx, a.timestamp, now),
    ...who(ctx),
    type: 'track',
    event,
    ...compact({ conversation_id: a.conversationId ?? ctx.conversationId, properties }),
  };
}

export const wire = {
  startSession(ctx: SessionContext, attributes: Record<string, unknown>, now: () => Date): WireObject {
    return { ...base(ctx, undefined, now), ...who(ctx), type: 'start_session', attributes };
  },
  identify(ctx: SessionContext, a: Out<typeof sessionIdentifyArgs>, now: () => Date): WireObject {
    // The caller's own user and device only: the session's id beside a new one would be a contradiction.
    return {
      ...base(ctx, a.timestamp, now),
      type: 'identify',
      ...compact({ user_id: a.id, device_id: a.deviceId ?? ctx.deviceId, traits: a.traits }),
    };
  },
  alias(ctx: SessionContext, a: Out<typeof sessionAliasArgs>, now: () => Date): WireObject {
    return { ...base(ctx, a.timestamp, now), type: 'alias', id: a.id, previous_id: a.previousId };
  },
  event(ctx: SessionContext, a: Out<typeof trackEventArgs>, now: () => Date): WireObject {
    return track(ctx, a.event, a, a.properties, now);
  },
  turn(ctx: SessionContext, a: Out<typeof turnArgs>, now: () => Date): WireObject {
    const properties = {
      ...a.properties,
      ...compact({ user: a.user, assistant: a.assistant, assistant_id: a.assistantId }),
      ...usageProperties(a.usage),
    };
    return track(ctx, EVENT_NAMES.conversationTurn, a, properties, now);
  },
  usage(ctx: SessionContext, a: Out<typeof usageArgs>, now: () => Date): WireObject {
    return track(ctx, EVENT_NAMES.conversationUsage, a, usageProperties(a.cost), now);
  },
  functionCall(ctx: SessionContext, a: Out<typeof functionCallArgs>, now: () => Date): WireObject {
    const properties = {
      ...a.properties,
      ...compact({ name: a.name, args: a.args, result: a.result, runtime: a.runtime }),
    };
    return track(ctx, EVENT_NAMES.conversationFunction, a, properties, now);
  },
  endConversation(ctx: SessionContext, a: Out<typeof endConversationArgs>, now: () => Date): WireObject {
    return track(ctx, EVENT_NAMES.conversationEnded, a, a.properties, now);
  },
  endSession(ctx: SessionContext, a: Out<typeof endSessionArgs>, now: () => Date): WireObject {
    return {
      ...base(ctx, a.timestamp, now),
      ...who(ctx),
      type: 'end_session',
      ...compact({ attributes: a.attributes }),
    };
  },
};

/**
 * The built event checked with the service's own schema (sizes, reserved names, key limits), so
 * what the service would refuse for its shape is a TypeError now, not an error record later.
 */
export function checkWire(call: string, event: WireObject): void {
  const parsed = parseWireEventRaw(event);
  if (parsed.ok) return;
  const text = parsed.issues
    .map((i) => {
      const path = formatPath(i.path);
      return path ? `${path}: ${i.message}` : i.message;
    })
    .join('; ');
  throw new TypeError(`${call}: ${text}`);
}

/** The name an event is listed under in messages: its `event`, else its wire type. */
export function eventLabel(event: Readonly<Record<string, unknown>>): string {
  return typeof event.event === 'string' ? event.event : String(event.type);
}
