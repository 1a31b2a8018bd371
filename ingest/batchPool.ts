import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import type { BatchCheckInput, BatchCheckOutput } from './batchCheck.js';

/**
 * The compiled worker entry. The product runs from dist/, where it sits beside this file; the
 * tests run the TypeScript sources, whose worker threads load the build instead (`npm test`
 * builds first).
 */
function workerFile(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  const sibling = resolve(here, 'batchWorker.js');
  return existsSync(sibling) ? sibling : resolve(here, '../dist/ingest/batchWorker.js');
}

/**
 * Worker threads for the CPU-bound part of each batch (ingest/batchCheck.ts): parsing,
 * validating and serialising take about two thirds of a batch's CPU on the edge, and the edge
 * thread must stay free for HTTP, Redis and ClickHouse I/O (bench/RESULTS.md).
 */
export class BatchPool {
  private readonly pool: Piscina;

  constructor(threads: number) {
    this.pool = new Piscina({ filename: workerFile(), minThreads: threads, maxThreads: threads, idleTimeout: Infinity });
  }

  check(input: BatchCheckInput): Promise<BatchCheckOutput> {
    return this.pool.run(input) as Promise<BatchCheckOutput>;
  }

  /** Tasks waiting for a thread (a gauge of /metrics). */
  get queued(): number {
    return this.pool.queueSize;
  }

  async close(): Promise<void> {
    await this.pool.close();
  }
}
