/**
 * The newest `capacity` ids, each with what it held when seen (`version`): memory stays bounded
 * however long tail runs. With `keepFrom`, an id whose event is dated from then on stays past the
 * capacity: a reconnect reads the history again from there, and over 10,000 events dated in those
 * 5 s pushed the newest ids out before they were read again, which printed them twice (found by
 * probing).
 */
export class RecentIds {
  private readonly ids = new Map<string, { version: string; ts: number }>();
  constructor(
    private readonly capacity: number,
    private readonly keepFrom?: () => number,
  ) {}
  has(id: string): boolean {
    return this.ids.has(id);
  }
  /** False when the id was seen already with the same version. */
  add(id: string, version = '', ts = 0): boolean {
    if (this.ids.get(id)?.version === version) return false;
    this.ids.delete(id);
    this.ids.set(id, { version, ts });
    const from = this.keepFrom?.() ?? Number.POSITIVE_INFINITY;
    for (const [oldest, seen] of this.ids) {
      if (this.ids.size <= this.capacity || seen.ts >= from) break;
      this.ids.delete(oldest);
    }
    return true;
  }
}
