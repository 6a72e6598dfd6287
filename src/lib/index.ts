/**
 * The package's library entry (`import { Client } from 'cas'`, also `'cas/client'`): library.md.
 * Nothing here runs on import, so bundlers can drop what an app does not use.
 */

export {
  ClientError,
  HttpError,
  NetworkError,
  ResponseValidationError,
  TimeoutError,
} from '../client/errors.js';
export type { UserRecord } from '../shared/users.js';
export type { TimestampInput } from './arguments.js';
export { Client } from './client.js';
export type { ClientOptions } from './config.js';
export { type ServiceError, SessionClosedError } from './errors.js';
export type { LiveEvent } from './live-events.js';
export type {
  Attributes,
  Properties,
  SessionOptions,
  TokenUsage,
  Traits,
  Usage,
} from './session.js';
export { Session } from './session.js';
