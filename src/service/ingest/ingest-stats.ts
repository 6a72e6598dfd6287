/**
 * Where ingest time goes, accumulated per phase across transactions: the benchmark prints it, and a
 * person chasing a slow import can read it from a running service the same way.
 */
export type Phase = 'validate' | 'load' | 'plan' | 'analyse' | 'write' | 'commit';

export class IngestStats {
  transactions = 0;
  requests = 0;
  events = 0;
  /** Plans made stale by a user route's identity write before they could be written (then redone). */
  stalePlans = 0;
  readonly ms: Record<Phase, number> = { validate: 0, load: 0, plan: 0, analyse: 0, write: 0, commit: 0 };

  /** A stopwatch for one transaction: each lap adds the time since the previous one to a phase. */
  start(): { lap(phase: Phase): void } {
    let last = performance.now();
    return {
      lap: (phase) => {
        const now = performance.now();
        this.ms[phase] += now - last;
        last = now;
      },
    };
  }

  done(requests: number, events: number): void {
    this.transactions++;
    this.requests += requests;
    this.events += events;
  }

  /** One line: requests per transaction, and ms per 1,000 accepted events for each phase. */
  summary(): string {
    const per = this.events > 0 ? 1000 / this.events : 0;
    const phases = Object.entries(this.ms)
      .map(([phase, ms]) => `${phase} ${(ms * per).toFixed(2)}`)
      .join(', ');
    const grouping = this.transactions > 0 ? (this.requests / this.transactions).toFixed(2) : '0';
    const stale = this.stalePlans > 0 ? `, ${this.stalePlans} plans redone after identity writes` : '';
    return `${this.transactions} transactions, ${grouping} requests each${stale}; ms per 1,000 events: ${phases}`;
  }
}
