import type { Traits } from '../../shared/primitives.js';

/** A service user as identity rules see it. */
export interface UserInfo {
  /** The user this one was merged into (itself when not merged); followed until it points at itself. */
  canonical: string;
  anonymous: boolean;
  primaryId: string;
  /**
   * Epoch ms of the alias that made `primaryId` primary (rules.ts: the later alias wins, whatever the
   * order aliases arrive in); null for the id the user was made with, which any alias replaces.
   */
  primaryAt: number | null;
  /** Epoch ms: the earliest timestamp seen for the user. */
  createdAt: number;
  /**
   * Current traits. Known in memory so an identify that repeats traits already stored (clients send
   * them on every identify) changes nothing but their times, and a merge computes the merged traits
   * without SQL.
   */
  traits: Traits;
  /**
   * Epoch ms of the write each trait holds (rules.ts: the later write wins, whatever the order writes
   * arrive in). A trait without one (stored before times were kept) loses to any write with one.
   */
  traitTimes: TraitTimes;
}

export type TraitTimes = Record<string, number>;

/** Anything that can say "this key may exist in the database" (the ingest cache's hash filters). */
export interface MaybeSet {
  has(key: string): boolean;
  add(key: string): void;
}

/** A lookup the rules made for a key that may be in the database but was never loaded: a bug upstream. */
export class NotLoadedError extends Error {
  constructor(kind: string, key: string) {
    super(`identity ${kind} "${key}" was looked up before it was loaded`);
    this.name = 'NotLoadedError';
  }
}

/**
 * The caller ids, devices and users of one project that a piece of work can see. The user routes
 * load a handful of rows per request; the ingest cache keeps one instance per project and loads what
 * each batch names ahead of planning, with `maybe` filters telling a never-seen key (absent, no query)
 * from one that exists but is not loaded (a bug: NotLoadedError rather than a wrong "new user").
 */
export class IdentityMaps {
  /** caller id → the user it was given to (user_ids). */
  readonly ids = new Map<string, string>();
  /** caller id → when it was first used, epoch ms (user_ids.used_at); null: not known. */
  readonly idUses = new Map<string, number | null>();
  /** device id → its user (devices). */
  readonly devices = new Map<string, string>();
  /** device id → when it was linked to that user, epoch ms (devices.linked_at); null: not known. */
  readonly deviceLinks = new Map<string, number | null>();
  readonly users = new Map<string, UserInfo>();
  /** Keys the database was asked about and does not hold, although a `maybe` filter said it might. */
  readonly absent = { ids: new Set<string>(), devices: new Set<string>() };

  constructor(readonly maybe?: { ids: MaybeSet; devices: MaybeSet }) {}

  /** Records a caller id's user; the filter learns the key too, so it is looked up if ever forgotten. */
  setId(id: string, userId: string, usedAt: number | null): void {
    this.ids.set(id, userId);
    this.idUses.set(id, usedAt);
    this.maybe?.ids.add(id);
  }

  setDevice(device: string, userId: string, linkedAt: number | null): void {
    this.devices.set(device, userId);
    this.deviceLinks.set(device, linkedAt);
    this.maybe?.devices.add(device);
  }

  userOfId(id: string): string | undefined {
    const user = this.ids.get(id);
    if (user === undefined && this.maybe?.ids.has(id) && !this.absent.ids.has(id)) {
      throw new NotLoadedError('id', id);
    }
    return user;
  }

  userOfDevice(device: string): string | undefined {
    const user = this.devices.get(device);
    if (user === undefined && this.maybe?.devices.has(device) && !this.absent.devices.has(device)) {
      throw new NotLoadedError('device', device);
    }
    return user;
  }

  user(userId: string): UserInfo {
    const info = this.users.get(userId);
    if (!info) throw new NotLoadedError('user', userId);
    return info;
  }

  /** Follows merge pointers; anonymous users merge only into identified ones, so chains are short. */
  canonical(userId: string): string {
    let current = userId;
    for (let hops = 0; hops < 16; hops++) {
      const next = this.user(current).canonical;
      if (next === current) return current;
      current = next;
    }
    throw new Error(`merge pointers of user ${userId} form a cycle`);
  }

  /** Caller ids and devices held: what bounds a long-lived cache (their users come with them). */
  get held(): number {
    return this.ids.size + this.devices.size;
  }

  /**
   * A caller id or device a piece of work named: it moves to the end of its map, so the maps' order is
   * that of last use and `letGo` takes the least recently used first.
   */
  touch(kind: 'ids' | 'devices', key: string): void {
    const map = this[kind];
    const user = map.get(key);
    if (user === undefined) return;
    map.delete(key);
    map.set(key, user);
  }

  /**
   * Forgets about `count` caller ids and devices, the least recently used of each in proportion, and
   * every user no remaining one leads to (a merge pointer followed to its end); what is forgotten is
   * loaded again when a request names it, as after a failed group. Only while nothing is planned or
   * committing from these maps (Ingestor.trimIdentities).
   */
  letGo(count: number): void {
    const held = this.held;
    if (count <= 0 || held === 0) return;
    const share = Math.min(1, count / held);
    dropOldest(this.ids, Math.ceil(this.ids.size * share), this.idUses);
    dropOldest(this.devices, Math.ceil(this.devices.size * share), this.deviceLinks);
    const reached = new Set<string>();
    const reach = (user: string) => {
      for (let current = user, hops = 0; hops < 16 && !reached.has(current); hops++) {
        reached.add(current);
        const next = this.users.get(current)?.canonical;
        if (next === undefined || next === current) return;
        current = next;
      }
    };
    for (const user of this.ids.values()) reach(user);
    for (const user of this.devices.values()) reach(user);
    for (const user of this.users.keys()) if (!reached.has(user)) this.users.delete(user);
    // Negative answers are only worth what a lookup costs; they would otherwise grow unbounded too.
    this.absent.ids.clear();
    this.absent.devices.clear();
  }

  /** Whether an id or device still needs a database lookup before rules may ask about it. */
  needsLoad(kind: 'ids' | 'devices', key: string): boolean {
    if (this[kind].has(key) || this.absent[kind].has(key)) return false;
    return this.maybe ? this.maybe[kind].has(key) : true;
  }
}

/** Deletes a map's first `count` keys (its oldest), and the same keys of `alongside`. */
function dropOldest(map: Map<string, string>, count: number, alongside: Map<string, unknown>): void {
  let left = count;
  for (const key of map.keys()) {
    if (left-- <= 0) return;
    map.delete(key);
    alongside.delete(key);
  }
}

/** One project's identity changes, with the maps that hold their values, as a write takes them. */
export interface IdentityWrite {
  project: string;
  maps: IdentityMaps;
  ch: IdentityChanges;
}

/**
 * What one piece of work changed, split by whether the row already is in the database: rows new in
 * this work are inserted once with their final values, existing rows get one batched UPDATE per
 * table. DuckDB updates scan the table, so the common case (a user, device and session born and
 * identified in the same batch) must not update at all.
 */
export class IdentityChanges {
  /** New users (inserted with their final state). */
  readonly newUsers = new Set<string>();
  /** New caller ids, in order of arrival (their `seq`). */
  readonly newIds: string[] = [];
  private readonly newIdSet = new Set<string>();
  readonly newDevices = new Set<string>();
  /** Existing devices moved from one identified user to another, or claimed again later. */
  readonly relinkedDevices = new Set<string>();
  /** Existing anonymous users merged into an identified one: their canonical pointer moves. */
  readonly mergedAnons = new Set<string>();
  /** Existing users: traits whose value or time changed, to merge over the stored ones (times: `traitTimes`). */
  readonly traitPatches = new Map<string, Traits>();
  readonly primaryChanged = new Set<string>();
  readonly createdAtLowered = new Set<string>();
  /** Stored caller ids an earlier record named: their first use moves back. */
  readonly idUsesLowered = new Set<string>();

  isNew(userId: string): boolean {
    return this.newUsers.has(userId);
  }

  addNewId(id: string): void {
    this.newIds.push(id);
    this.newIdSet.add(id);
  }

  isNewId(id: string): boolean {
    return this.newIdSet.has(id);
  }

  get empty(): boolean {
    return (
      this.newUsers.size === 0 &&
      this.newIds.length === 0 &&
      this.newDevices.size === 0 &&
      this.relinkedDevices.size === 0 &&
      this.mergedAnons.size === 0 &&
      this.traitPatches.size === 0 &&
      this.primaryChanged.size === 0 &&
      this.createdAtLowered.size === 0 &&
      this.idUsesLowered.size === 0
    );
  }
}
