// The observation budget: how many observations a collector builds per minute. The edge admits at
// most a per-minute number of observations per Integration (document 03 Limits: 6,000 by default;
// a Sandbox account 1,000) and answers 429 past it; building envelopes beyond it only costs the
// host CPU for telemetry that would be refused, retried and dropped. So the collector paces itself:
// past the budget an observation is counted in `throttled` and nothing of it is read or built.
//
// A token bucket: a tenth of the minute's budget may go at once, the rest refills evenly, so that
// any 60 seconds hold at most the budget and a steady stream is sampled evenly through the minute
// (a drift in a fraction f of the traffic shows within about 1 / (rate × f) seconds).

/** 03 Limits, ingestion per Integration, until the edge says otherwise (the connection check). */
export const DEFAULT_OBSERVATIONS_PER_MINUTE = 6_000;

export class ObservationBudget {
  private capacity = Infinity;
  private perMs = 0;
  private tokens = Infinity;
  private lastMs = 0;

  /** `perMinute` 0 (or not finite) lifts the budget. */
  constructor(perMinute: number) {
    this.set(perMinute);
  }

  set(perMinute: number): void {
    if (!Number.isFinite(perMinute) || perMinute <= 0) {
      this.capacity = Infinity;
      this.tokens = Infinity;
      return;
    }
    const burst = Math.max(1, Math.floor(perMinute / 10));
    this.capacity = burst;
    this.perMs = Math.max(1, perMinute - burst) / 60_000;
    this.tokens = Math.min(Number.isFinite(this.tokens) ? this.tokens : burst, burst);
    this.lastMs = Date.now();
  }

  /** Takes one observation's place; false when the budget is spent for now. */
  take(): boolean {
    if (this.capacity === Infinity) return true;
    const now = Date.now();
    // A clock stepped back refills nothing.
    if (now > this.lastMs) this.tokens = Math.min(this.capacity, this.tokens + (now - this.lastMs) * this.perMs);
    this.lastMs = now;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}
