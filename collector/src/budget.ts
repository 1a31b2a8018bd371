// The edge's budgets, mirrored (document 03 Limits): per Integration 600 requests and 6,000
// observations per 60-second window (a Sandbox account: 100 and 1,000), 429 past them. The
// collector must never be stricter than the edge (it would lose what the edge accepts) nor looser
// (it would spend the host's CPU on envelopes the edge refuses, then retry and drop them).
//
// How the edge counts (ingest/admission/scripts.ts): one-second buckets of its own clock, a unit
// of work counting for between 59 and 60 seconds after the edge received it. The collector
// counts exact 60-second windows of its own clock in two places:
// - at observe time (a SlidingWindow of observations, collector.ts): at most the budget of observations built in any 60
//   seconds; past it an observation is counted in `throttled` and nothing of it is read;
// - at send time (SendBudget): a batch goes only when the observations and requests of the
//   batches already sent, each counted from the moment its answer arrived (and in-flight ones
//   until then), leave room for it. The edge received a batch before it answered, and a later
//   batch after it was sent, so a unit the collector no longer counts has left the edge's window
//   too, whatever the latency and whatever offset there is between the two clocks.
// The edge's buckets are not guessed (the clocks' offset is unknown): at a window's end the
// collector may wait up to a second longer than the edge strictly needs; it never sends earlier.

/** 03 Limits: every budget is per 60-second window. */
export const WINDOW_MS = 60_000;
/** 03 Limits, ingestion per Integration, until the edge says otherwise (the connection check). */
export const DEFAULT_OBSERVATIONS_PER_MINUTE = 6_000;
export const DEFAULT_REQUESTS_PER_MINUTE = 600;

/** A ring starts this small and doubles as needed (a quiet collector keeps a small one). */
const INITIAL_ENTRIES = 64;

/** `perMinute` 0 or not finite: no limit. */
const limitOf = (perMinute: number): number => (Number.isFinite(perMinute) && perMinute > 0 ? Math.floor(perMinute) : Infinity);

/**
 * Units of work counted in the last 60 seconds: a ring of (time, count) entries, oldest first,
 * one per distinct millisecond. At most min(limit, 60,000) entries are ever held (each holds at
 * least one unit, and no two share a millisecond of the window), so memory is bounded by the
 * limit and by the window whatever the traffic.
 */
export class SlidingWindow {
  private limit = Infinity;
  private times = new Float64Array(0);
  private counts = new Float64Array(0);
  private head = 0;
  private size = 0;
  /** Units in the ring (expired ones included until expire() runs). */
  private sum = 0;
  /** The latest time read, and what is added to the clock's reading since it last stepped back. */
  private last = -Infinity;
  private skew = 0;

  constructor(perMinute: number) {
    this.setLimit(perMinute);
  }

  get perMinute(): number {
    return this.limit;
  }

  /** Ring entries allocated (16 bytes each): at most min(limit, 60,000). */
  get slots(): number {
    return this.times.length;
  }

  setLimit(perMinute: number): void {
    this.limit = limitOf(perMinute);
    // A lower limit: the ring keeps within its new bound.
    while (this.size > this.maxEntries()) this.foldOldest();
  }

  /** Units counted at `nowMs`. */
  used(nowMs: number): number {
    this.expire(nowMs);
    return this.sum;
  }

  /** Whether `cost` more units fit at `nowMs`, beside `reserved` ones not in the window yet. */
  fits(nowMs: number, cost: number, reserved = 0): boolean {
    if (this.limit === Infinity) return true;
    this.expire(nowMs);
    return this.sum + reserved + cost <= this.limit;
  }

  /** Takes one unit's place now if there is room (the observe-time check: O(1), no allocation). */
  take(nowMs: number): boolean {
    if (this.limit === Infinity) return true;
    // Full, and the oldest entry still counts: nothing can have left (the past-budget path).
    if (this.sum >= this.limit && this.size > 0 && this.clamp(nowMs) - this.times[this.head] < WINDOW_MS) return false;
    if (!this.fits(nowMs, 1)) return false;
    this.add(nowMs, 1);
    return true;
  }

  /** Counts `cost` units from `nowMs` on. */
  add(nowMs: number, cost: number): void {
    if (this.limit === Infinity || cost <= 0) return;
    // Counted from the next whole millisecond: a little longer, never shorter.
    const now = Math.ceil(this.clamp(nowMs));
    this.expire(now);
    this.sum += cost;
    if (this.size > 0) {
      const newest = (this.head + this.size - 1) % this.times.length;
      if (this.times[newest] === now) {
        this.counts[newest] += cost;
        return;
      }
    }
    // Only more units than the limit (a lowered limit, answers of batches sent before it) can
    // fill the ring: then the two oldest entries merge.
    let count = cost;
    while (this.size >= this.maxEntries()) {
      if (this.size > 1) {
        this.foldOldest();
      } else {
        count += this.counts[this.head];
        this.size = 0;
        this.head = 0;
      }
    }
    if (this.size === this.times.length) this.grow();
    const at = (this.head + this.size) % this.times.length;
    this.times[at] = now;
    this.counts[at] = count;
    this.size++;
  }

  /**
   * Milliseconds from `nowMs` until `cost` more units fit beside `reserved` ones: 0 when they fit
   * now, Infinity when only the reserved ones (not in the window yet) stand in the way.
   */
  waitMs(nowMs: number, cost: number, reserved = 0): number {
    if (this.fits(nowMs, cost, reserved)) return 0;
    const now = this.clamp(nowMs);
    let excess = this.sum + reserved + Math.min(cost, this.limit) - this.limit;
    for (let i = 0; i < this.size; i++) {
      const at = (this.head + i) % this.times.length;
      excess -= this.counts[at];
      if (excess <= 0) return Math.max(1, this.times[at] + WINDOW_MS - now);
    }
    return Infinity;
  }

  /** Entries a window can hold: one per unit, at most one per millisecond of the window. */
  private maxEntries(): number {
    return Math.min(this.limit, WINDOW_MS);
  }

  /**
   * The window's time: the clock's reading, made monotonic. A clock stepped back (a wall clock
   * corrected, a test clock reset) frees no place, and the window goes on from where it was at
   * the clock's own pace (rather than waiting for the clock to catch up, which could be hours).
   */
  private clamp(nowMs: number): number {
    const now = nowMs + this.skew;
    if (now >= this.last) {
      this.last = now;
      return now;
    }
    this.skew += this.last - now;
    return this.last;
  }

  private expire(nowMs: number): void {
    const from = this.clamp(nowMs) - WINDOW_MS;
    while (this.size > 0 && this.times[this.head] <= from) {
      this.sum -= this.counts[this.head];
      this.head = (this.head + 1) % this.times.length;
      this.size--;
    }
    if (this.size === 0) {
      this.head = 0;
      this.sum = 0;
    }
  }

  /** Merges the oldest entry into the next one, counted as late as that one: longer, never shorter. */
  private foldOldest(): void {
    const next = (this.head + 1) % this.times.length;
    this.counts[next] += this.counts[this.head];
    this.head = next;
    this.size--;
  }

  private grow(): void {
    const length = Math.min(Math.max(INITIAL_ENTRIES, this.times.length * 2), this.maxEntries());
    const times = new Float64Array(length);
    const counts = new Float64Array(length);
    for (let i = 0; i < this.size; i++) {
      const at = (this.head + i) % this.times.length;
      times[i] = this.times[at];
      counts[i] = this.counts[at];
    }
    this.times = times;
    this.counts = counts;
    this.head = 0;
  }
}

/**
 * What delivery may send: the edge's request and observation windows as this collector's sends
 * fill them. A batch counts from its send until its answer (in flight), then from the answer on.
 */
export class SendBudget {
  readonly requests: SlidingWindow;
  readonly observations: SlidingWindow;
  private requestsInFlight = 0;
  private observationsInFlight = 0;

  constructor(requestsPerMinute: number, observationsPerMinute: number) {
    this.requests = new SlidingWindow(requestsPerMinute);
    this.observations = new SlidingWindow(observationsPerMinute);
  }

  /** The most observations one batch may hold (a batch over the limit could never go). */
  maxBatch(size: number): number {
    return Math.max(1, Math.min(size, this.observations.perMinute));
  }

  /** Milliseconds until a batch of `size` may go (0: now; Infinity: after an answer in flight). */
  waitMs(nowMs: number, size: number): number {
    if (this.requests.fits(nowMs, 1, this.requestsInFlight) && this.observations.fits(nowMs, size, this.observationsInFlight)) return 0;
    return Math.max(
      this.requests.waitMs(nowMs, 1, this.requestsInFlight),
      this.observations.waitMs(nowMs, size, this.observationsInFlight),
    );
  }

  sent(size: number): void {
    this.requestsInFlight++;
    this.observationsInFlight += size;
  }

  /**
   * The batch's answer arrived at `nowMs`. `counted` false for a 429: the edge's admission is one
   * atomic script that changes nothing when a window refuses, so the attempt is in no window.
   * Every other answer, a network error included, is counted (the edge may have admitted it).
   */
  answered(nowMs: number, size: number, counted: boolean): void {
    this.requestsInFlight = Math.max(0, this.requestsInFlight - 1);
    this.observationsInFlight = Math.max(0, this.observationsInFlight - size);
    if (!counted) return;
    this.requests.add(nowMs, 1);
    this.observations.add(nowMs, size);
  }
}
