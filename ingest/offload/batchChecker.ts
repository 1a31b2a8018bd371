import { checkBatch, rowsWrittenInto, type BatchCheckInput } from '../check/batchCheck.js';
import type { BatchCheckResult, BatchPool } from './batchPool.js';
import { asBuffer } from '../check/batchRows.js';
import type { SharedSlots } from './sharedSlots.js';

/**
 * Where a batch is checked (ingest/check/batchCheck.ts): on the edge thread itself while the checks
 * take a small share of it, on the worker threads once they would take a large one.
 *
 * Why both: handing a batch to a worker thread and back costs its own CPU (posting, waking the
 * thread, the answer), which on two busy cores shared with Redis and ClickHouse made the edge
 * cost about a quarter more per batch at 25,000 envelopes/s than checking in place (67 % against
 * 53 % of a core), with a longer tail. Under full load the edge thread alone is the bottleneck and
 * the workers carry the edge about 30 % further (bench/RESULTS.md, 2026-11-24 11:20 UTC).
 *
 * The share is the checks' rate times their recent duration (measured where they ran), per
 * window of `windowMs`; it moves to the workers above `offloadAbove` and back below `inlineBelow`
 * (apart, so that it does not flap around one value).
 */
export interface BatchCheckerOptions {
  offloadAbove: number;
  inlineBelow: number;
  windowMs: number;
}

export const DEFAULT_BATCH_CHECKER_OPTIONS: BatchCheckerOptions = { offloadAbove: 0.45, inlineBelow: 0.3, windowMs: 500 };

export class BatchChecker {
  private offload = false;
  private windowStart = performance.now();
  private checksInWindow = 0;
  /** Moving average of recent checks' durations (ms), wherever they ran. */
  private checkMs = 0;

  /**
   * `pool` null: every batch is checked on the edge thread (INGEST_WORKER_THREADS=0). `slots`:
   * those the pool uses too, for the rows of batches checked in place.
   */
  constructor(
    private readonly pool: BatchPool | null,
    private readonly options: BatchCheckerOptions = DEFAULT_BATCH_CHECKER_OPTIONS,
    private readonly slots: SharedSlots | null = null,
  ) {}

  /** True while batches go to the worker threads. */
  get offloading(): boolean {
    return this.offload;
  }

  /**
   * Checks a batch. As with BatchPool.check, `input.body` must not be read afterwards: read the
   * result's. The rows may lie in a shared slot: the request's RequestMemory gives it back.
   */
  async check(input: BatchCheckInput): Promise<BatchCheckResult> {
    this.account();
    if (this.pool !== null && this.offload) {
      const result = await this.pool.check(input);
      this.observe(result.ms);
      return result;
    }
    const started = performance.now();
    const into = this.slots?.take(this.slots.slotBytes) ?? undefined;
    const output = checkBatch(input, into);
    const ms = performance.now() - started;
    if (into !== undefined) {
      if (rowsWrittenInto(output, into)) output.rows = this.slots!.resize(into, output.rows.byteLength);
      else this.slots!.give(into);
    }
    this.observe(ms);
    return { output, body: asBuffer(input.body), ms };
  }

  close(): Promise<void> {
    return this.pool?.close() ?? Promise.resolve();
  }

  private observe(ms: number): void {
    this.checkMs = this.checkMs === 0 ? ms : 0.9 * this.checkMs + 0.1 * ms;
  }

  /** Counts this check and, at the end of a window, decides where the next ones run. */
  private account(): void {
    this.checksInWindow += 1;
    const now = performance.now();
    const elapsed = now - this.windowStart;
    if (elapsed < this.options.windowMs) return;
    const share = (this.checksInWindow * this.checkMs) / elapsed;
    if (share > this.options.offloadAbove) this.offload = true;
    else if (share < this.options.inlineBelow) this.offload = false;
    this.windowStart = now;
    this.checksInWindow = 0;
  }
}
