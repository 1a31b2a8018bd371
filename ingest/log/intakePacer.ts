/** What the pacer needs to know of the log and its shipper. */
export interface PacedLog {
  /** Bytes in the log not yet shipped. */
  backlog(): number;
  /** False while shipping rounds fail (ClickHouse or Redis unreachable): the log then absorbs. */
  shipping(): boolean;
}

export interface IntakePacerOptions {
  /** Past this backlog, while shipping works, intake is paced; 0: never. */
  paceBytes: number;
  /** A request waits at most this long to enter, then is answered 503. */
  maxWaitMs: number;
  /** The most request bytes one round lets in (an insert's worth, and at least one request's body). */
  maxTokens: number;
}

interface Waiting {
  bytes: number;
  resolve(entered: boolean): void;
  timer: NodeJS.Timeout;
}

/**
 * Paces intake to what the shipper ships while ClickHouse is up but slower than intake, as on a
 * machine whose cores the edge and ClickHouse share: without it the log grows until its bound
 * (INGEST_WAL_MAX_BYTES) and every request then gets 503, with analysis minutes behind. While
 * the backlog is past `paceBytes` and shipping works, requests enter in arrival order as shipping
 * rounds complete: each round lets in as many request bytes as it shipped bytes of rows. A batch's
 * rows are smaller than its request (shapes and hashes, about 0.8 of the body), so the backlog
 * shrinks while paced. A request that cannot enter within `maxWaitMs` is answered 503 (Retry-After).
 * While shipping fails (ClickHouse down) nothing is paced: absorbing that is what the log is for.
 */
export class IntakePacer {
  private tokens = 0;
  private readonly waiting: Waiting[] = [];

  constructor(
    private readonly log: PacedLog,
    private readonly options: IntakePacerOptions,
  ) {}

  private paced(): boolean {
    return this.options.paceBytes > 0 && this.log.shipping() && this.log.backlog() > this.options.paceBytes;
  }

  /** True when a request of `bytes` may go on now or once it entered; false once it waited too long. */
  enter(bytes: number): boolean | Promise<boolean> {
    if (this.waiting.length === 0) {
      if (!this.paced()) return true;
      if (this.tokens >= bytes) {
        this.tokens -= bytes;
        return true;
      }
    }
    return new Promise<boolean>((resolve) => {
      const entry: Waiting = {
        bytes,
        resolve,
        timer: setTimeout(() => {
          this.waiting.splice(this.waiting.indexOf(entry), 1);
          resolve(false);
        }, this.options.maxWaitMs),
      };
      this.waiting.push(entry);
    });
  }

  /** Told after each shipping round (0 bytes for a failed one): lets waiting requests in. */
  shipped(bytes: number): void {
    this.tokens = Math.min(this.options.maxTokens, this.tokens + bytes);
    while (this.waiting.length > 0) {
      const first = this.waiting[0];
      if (this.paced()) {
        if (this.tokens < first.bytes) break;
        this.tokens -= first.bytes;
      }
      this.waiting.shift();
      clearTimeout(first.timer);
      first.resolve(true);
    }
    if (!this.paced()) this.tokens = 0;
  }
}
