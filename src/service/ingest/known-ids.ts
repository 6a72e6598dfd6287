/**
 * A set of ~53-bit string hashes: "this id may exist" vs "this id certainly does not".
 *
 * The ingest path asks, for every event, whether its event_id, session_id, conversation_id, user id
 * and device id were seen before. DuckDB answers point lookups with a full scan (composite primary
 * keys get no index scan), so one query per batch costs milliseconds and grows with the table. This
 * filter answers in memory; a hit is confirmed in the database, so a hash collision costs one query
 * and never a wrong answer. Nothing is ever removed: a false "maybe" is harmless.
 *
 * Open addressing with linear probing, filled up to 3/4 before it doubles: 11 to 21 bytes per id
 * (a 1M-event import keeps 16 MB here, not the 32 MB a 1/2 bound took; a miss probes about 8 slots,
 * which share cache lines).
 */
export class KnownIds {
  private table: Float64Array;
  private count = 0;

  constructor(expected = 1024) {
    let capacity = 1024;
    while (capacity * 3 < expected * 4) capacity *= 2;
    this.table = new Float64Array(capacity);
  }

  get size(): number {
    return this.count;
  }

  /** Slots allocated (8 bytes each). */
  get capacity(): number {
    return this.table.length;
  }

  has(id: string): boolean {
    const h = hashId(id);
    const mask = this.table.length - 1;
    for (let i = h % this.table.length; ; i = (i + 1) & mask) {
      const slot = this.table[i]!;
      if (slot === 0) return false;
      if (slot === h) return true;
    }
  }

  add(id: string): void {
    this.addHash(hashId(id));
  }

  /** An id by its `hashId`, as the events table stores it for its callers' rows (`id_hash`). */
  addHash(h: number): void {
    if ((this.count + 1) * 4 > this.table.length * 3) this.grow();
    if (this.insert(h)) this.count++;
  }

  private insert(h: number): boolean {
    const mask = this.table.length - 1;
    for (let i = h % this.table.length; ; i = (i + 1) & mask) {
      const slot = this.table[i]!;
      if (slot === h) return false;
      if (slot === 0) {
        this.table[i] = h;
        return true;
      }
    }
  }

  private grow(): void {
    const old = this.table;
    this.table = new Float64Array(old.length * 2);
    for (const h of old) if (h !== 0) this.insert(h);
  }
}

/**
 * Two independent 32-bit FNV-1a-style lanes folded into one integer below 2^53 (exact in a double).
 * Never 0, which marks an empty slot. A stored format: each caller event's row keeps its id's hash
 * (`events.id_hash`, migration 12), so changing this function needs a migration that rewrites those.
 */
export function hashId(id: string): number {
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ id.length;
  for (let i = 0; i < id.length; i++) {
    const c = id.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x5bd1e995);
    b ^= b >>> 15;
  }
  a ^= a >>> 16;
  a = Math.imul(a, 0x85ebca6b);
  a ^= a >>> 13;
  const high = (b >>> 0) & 0x1fffff; // 21 bits
  return high * 0x100000000 + (a >>> 0) + 1;
}

/**
 * The project's stored event ids, its largest filter: every caller's event (a generated row's id is
 * never in it, as no caller may send one: `GENERATED_EVENT_ID`, refused at validation). Loading it
 * is a fixed cost proportional to the store (it was 1.65 s for 650k ids read one by one), that a
 * small import into a big store, or a service's first request after a restart, paid whole. So it is
 * loaded only once `LOAD_AFTER` requests went without it: until then every id a request carries is a
 * suspect, confirmed by one query. Both costs grow with the store alike: at 650k events (300k
 * callers' ids) a query took ~54 ms and the load ~240 ms, so the queries add up to about one load
 * before it is made.
 */
export class EventIdFilter {
  static readonly LOAD_AFTER = 4;
  /** Ids planned meanwhile, then the stored ones too once loaded. */
  readonly ids = new KnownIds();
  private state: 'deferred' | 'loaded';
  private deferred = 0;

  constructor(loaded = false) {
    this.state = loaded ? 'loaded' : 'deferred';
  }

  get loaded(): boolean {
    return this.state === 'loaded';
  }

  add(id: string): void {
    this.ids.add(id);
  }

  /** The filter for this request, or null when it goes without (every id is then a suspect). */
  async forRequest(load: (into: KnownIds) => Promise<void>): Promise<KnownIds | null> {
    if (this.state === 'loaded') return this.ids;
    if (this.deferred < EventIdFilter.LOAD_AFTER) {
      this.deferred++;
      return null;
    }
    await load(this.ids);
    this.state = 'loaded';
    return this.ids;
  }

  /**
   * Loads the filter ahead of its requests, while the service has nothing else to do (an embedded
   * import's reading phase: Ingestor.warm). `load` answers false if it stopped short, as a request
   * arrived: the filter then stays deferred. The ids it added meanwhile are stored ids, so a later
   * load adding them again changes nothing.
   */
  async warm(load: (into: KnownIds) => Promise<boolean>): Promise<void> {
    if (this.state === 'loaded') return;
    if (await load(this.ids)) this.state = 'loaded';
  }
}
