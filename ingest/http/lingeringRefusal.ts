/** How long and how much of a refused body the edge reads before it answers and closes. */
export interface LingerLimits {
  /** The refused body's bytes read in all (the first MiB included); past it, the answer goes at once. */
  maxBytes: number;
  /** Time from the refusal to the answer at the latest, however slowly the body arrives. */
  maxMs: number;
}

/**
 * Lingering close for a body past the 1 MiB limit (issue 25): the rest of the body is read and
 * discarded, and the 413 answered once it has all arrived. A client that writes its whole body
 * before it reads (Node's fetch, the collector) gets the answer instead of EPIPE, which closing
 * with unread bytes would give it. Both limits bound what a slow or endless body costs: when one is
 * reached the answer goes at once (the connection is closed after it either way).
 */
export class LingeringRefusal {
  private received = 0;
  private settled = false;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly limits: LingerLimits,
    private readonly answer: () => void,
  ) {
    this.timer = setTimeout(() => this.settle(), limits.maxMs);
    this.timer.unref();
  }

  /** Counts (and drops) `bytes` more of the body; `isLast` when the body is complete. */
  discard(bytes: number, isLast: boolean): void {
    if (this.settled) return;
    this.received += bytes;
    if (isLast || this.received > this.limits.maxBytes) this.settle();
  }

  /** The client went away: nothing is answered. */
  cancel(): void {
    this.settled = true;
    clearTimeout(this.timer);
  }

  private settle(): void {
    if (this.settled) return;
    this.cancel();
    this.answer();
  }
}
