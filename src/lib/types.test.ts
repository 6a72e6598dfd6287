import { describe, expectTypeOf, it } from 'vitest';
import type { z } from 'zod';
import type { ErrorRecord } from '../shared/errors.js';
import type { StoredEvent } from '../shared/events.js';
import type { LiveFrame } from '../shared/live-events.js';
import type { UserRecord as WireUserRecord } from '../shared/users.js';
import type { clientOptionsSchema } from './arguments.js';
import type {
  ClientOptions,
  LiveEvent,
  ServiceError,
  SessionOptions,
  Usage,
  UserRecord,
  Who,
} from './types.js';

/** The hand-written public types say what the shared schemas say (checked by `tsc`, see types.ts). */
describe('public types', () => {
  it('match the wire schemas they stand for', () => {
    expectTypeOf<WireUserRecord>().toEqualTypeOf<UserRecord>();
    expectTypeOf<StoredEvent>().toExtend<LiveEvent>();
    expectTypeOf<LiveEvent>().toExtend<StoredEvent>();
    expectTypeOf<LiveFrame>().toExtend<LiveEvent>();
    expectTypeOf<ServiceError>().toExtend<ErrorRecord>();
  });

  // A mixed object compiled and was refused at the call (found by probing).
  it('take usage token-based or direct, not both in one object', () => {
    expectTypeOf<{ cost: 1; model: 'm' }>().not.toExtend<Usage>();
    expectTypeOf<{ model: 'm'; promptTokens: 1; completionTokens: 2; cost: 1 }>().not.toExtend<Usage>();
    expectTypeOf<{ cost: 1 }>().toExtend<Usage>();
    expectTypeOf<{ model: 'm'; promptTokens: 1; completionTokens: 2 }>().toExtend<Usage>();
  });

  it('declare exactly the Client options the constructor accepts (it refuses any other)', () => {
    expectTypeOf<keyof ClientOptions>().toEqualTypeOf<keyof z.input<typeof clientOptionsSchema>>();
    expectTypeOf<ClientOptions>().toExtend<z.input<typeof clientOptionsSchema>>();
  });

  // A session or identify with neither compiled, then threw "id or deviceId is required" (found by probing).
  it('ask for id, deviceId or both where one is required', () => {
    expectTypeOf<{ sessionId: 's' }>().not.toExtend<SessionOptions>();
    expectTypeOf<{ sessionId: 's'; id: 'u' }>().toExtend<SessionOptions>();
    expectTypeOf<{ sessionId: 's'; deviceId: 'd' }>().toExtend<SessionOptions>();
    expectTypeOf<{ sessionId: 's'; id: 'u'; deviceId: 'd' }>().toExtend<SessionOptions>();
    expectTypeOf<{ traits: { a: 1 } }>().not.toExtend<Who & { traits?: object }>();
    expectTypeOf<Parameters<import('./client.js').Client['userIdentify']>[0]>().toEqualTypeOf<
      Who & { traits?: import('./types.js').Traits }
    >();
  });
});
