/**
 * Tracks which emitted events are still unacknowledged, by the position (`seq`) at which they were
 * emitted. Events are emitted in non-decreasing seq but acknowledged in any order (lanes run
 * concurrently); `position` is the first seq that still has an event outstanding, so everything
 * emitted before it is known to be stored.
 */
export class Frontier {
  private readonly groups: Array<{ seq: number; pending: number }> = [];
  private head = 0;
  private readonly bySeq = new Map<number, { seq: number; pending: number }>();

  emitted(seq: number): void {
    const last = this.groups[this.groups.length - 1];
    if (last && last.seq === seq && this.groups.length > this.head) {
      last.pending++;
      return;
    }
    if (last && seq < last.seq)
      throw new Error(`events must be emitted in order (seq ${seq} after ${last.seq})`);
    const group = { seq, pending: 1 };
    this.groups.push(group);
    this.bySeq.set(seq, group);
  }

  /** An event is settled: stored (or already stored) or rejected for good. */
  settled(seq: number): void {
    const group = this.bySeq.get(seq);
    if (!group || group.pending <= 0) throw new Error(`no outstanding event at seq ${seq}`);
    group.pending--;
  }

  /** First seq with an event outstanding; `next` (the reader's position) when none is. */
  position(next: number): number {
    while (this.head < this.groups.length && this.groups[this.head]!.pending === 0) {
      this.bySeq.delete(this.groups[this.head]!.seq);
      this.head++;
    }
    // Compact now and then so the array does not grow with the file.
    if (this.head > 4096 && this.head * 2 > this.groups.length) {
      this.groups.splice(0, this.head);
      this.head = 0;
    }
    return this.head < this.groups.length ? this.groups[this.head]!.seq : next;
  }

  get outstanding(): boolean {
    return this.position(Number.POSITIVE_INFINITY) !== Number.POSITIVE_INFINITY;
  }
}
