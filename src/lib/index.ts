/**
 * The package's library entry (`import { Client } from 'cas'`, also `'cas/client'`): library.md.
 * Nothing here runs on import, so bundlers can drop what an app does not use.
 */

export { Client } from './client.js';
export { ServiceCallError, SessionClosedError } from './errors.js';
export type {
  Attributes,
  ClientOptions,
  LiveEvent,
  Properties,
  Scalar,
  ServiceError,
  Session,
  SessionOptions,
  SessionSettings,
  StoredProperties,
  TimestampInput,
  TokenUsage,
  Traits,
  Usage,
  UserRecord,
  Who,
} from './types.js';
