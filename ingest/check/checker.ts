import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { RequestMemory } from '../offload/requestMemory.js';
import type { SlotMemory } from '../offload/sharedSlots.js';
import { ThreadPool } from '../offload/threadPool.js';
import { asBuffer } from '../offload/bytes.js';
import { checkBatch, rowsWrittenInto, type BatchCheckInput, type BatchCheckOutput } from './checkBatch.js';

/**
 * The compiled worker entry. The product runs from dist/, where it sits beside this file; the
 * tests run the TypeScript sources, whose worker threads load the build instead (`npm test`
 * builds first).
 */
export function checkWorkerFile(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  const sibling = resolve(here, 'checkWorker.js');
  return existsSync(sibling) ? sibling : resolve(here, '../../dist/ingest/check/checkWorker.js');
}

/** Worker threads that run checkBatch (checkWorker.ts). */
export type CheckPool = ThreadPool<BatchCheckInput, BatchCheckOutput>;

/** `slots`: the shared memory of the requests' slots; `file`: the worker entry (tests substitute one that misbehaves). */
export function createCheckPool(size: number, slots: SlotMemory | null = null, file = checkWorkerFile()): CheckPool {
  return new ThreadPool<BatchCheckInput, BatchCheckOutput>({ name: 'batch', file, size, slots });
}

/**
 * A checked batch and its body: the one that came back from the worker thread (see
 * ThreadPool.run), or the request's own when it was checked in place.
 */
export interface BatchCheckResult {
  output: BatchCheckOutput;
  body: Buffer;
  /** How long checkBatch itself took (ms), without the trip to the thread and back. */
  ms: number;
}

const NO_ROWS = Buffer.alloc(0);

/**
 * Where a batch is checked (checkBatch.ts): on the edge thread itself while the checks
 * take a small share of it, on the worker threads once they would take a large one.
 *
 * Why both: handing a batch to a worker thread and back costs CPU of its own (posting, waking the
 * thread, the answer), more than checking in place while the edge has room; under full load the
 * edge thread alone is the bottleneck, and the workers carry it further (bench/RESULTS.md).
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

  /** `pool` null: every batch is checked on the edge thread (INGEST_WORKER_THREADS=0). */
  constructor(
    private readonly pool: CheckPool | null,
    private readonly options: BatchCheckerOptions = DEFAULT_BATCH_CHECKER_OPTIONS,
  ) {}

  /** True while batches go to the worker threads. */
  get offloading(): boolean {
    return this.offload;
  }

  /**
   * Checks a batch. As with ThreadPool.run, `input.body` must not be read afterwards: read the
   * result's. The rows are written into a slot of the request's `memory` when one is free.
   */
  async check(input: BatchCheckInput, memory: RequestMemory): Promise<BatchCheckResult> {
    this.account();
    if (this.pool !== null && this.offload) {
      const { output, bytes, body, ms } = await this.pool.run(input, memory);
      if (output.kind === 'checked') output.rows = bytes ?? NO_ROWS;
      this.observe(ms);
      return { output, body, ms };
    }
    const started = performance.now();
    const into = memory.slot(memory.slotBytes) ?? undefined;
    const output = checkBatch(input, into);
    const ms = performance.now() - started;
    if (into !== undefined && rowsWrittenInto(output, into)) output.rows = memory.shrink(into, output.rows.byteLength);
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
