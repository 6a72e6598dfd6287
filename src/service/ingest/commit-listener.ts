import type { Scope } from '../identity/identity.js';
import type { IdentityMaps } from '../identity/model.js';
import type { EventRow } from './rows.js';

/**
 * Told of each committed group, in commit order, right after its COMMIT and before its requests are
 * answered: the rows as written (each request's, generated ones included) and the identity they were
 * planned with. Must not throw and must not keep `identity` (the cache changes it afterwards). The
 * live-events feed (service/live/feed.ts) is the one listener.
 */
export type CommitListener = (
  scope: Scope,
  rows: ReadonlyArray<readonly EventRow[]>,
  identity: IdentityMaps,
) => void;
