import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import { Gauge, type Registry } from 'prom-client';
import { invalidContract } from '../../shared/contracts/invalidContract.js';
import { AppError } from '../../shared/errors/index.js';
import type { Protocol } from '../connections/connectionStore.js';
import type { ImportedContract, ImportInput } from './contractImport.js';
import type { ImportOutcome, ImportTask } from './importWorker.js';

/**
 * Limits of contract imports on one management process (docs/decisions/contracts.md "Import
 * cost"): one thread, so imports never take both cores from the request handlers; a few
 * waiting (past them 503); each refused once it has run this long (the largest corpus document
 * takes 0.15 s).
 */
export const IMPORT_THREADS = 1;
export const IMPORT_MAX_QUEUE = 64;
export const IMPORT_TIME_LIMIT_MS = 10_000;
/** An import that waits this long for the thread is answered 503 (the thread is busy, not the document at fault). */
export const IMPORT_WAIT_LIMIT_MS = 30_000;

/** The compiled worker (dist/management/contracts/importWorker.js), also when this module runs from source in tests. */
function workerFile(): string {
  const here = fileURLToPath(new URL('./importWorker.js', import.meta.url));
  if (existsSync(here)) return here;
  return fileURLToPath(new URL('../../dist/management/contracts/importWorker.js', import.meta.url));
}

/** Runs contract imports on a worker thread with a time limit; the event loop only waits. */
export class ImportPool {
  private readonly piscina = new Piscina({
    filename: workerFile(),
    minThreads: 0,
    maxThreads: IMPORT_THREADS,
    maxQueue: IMPORT_MAX_QUEUE,
    idleTimeout: 60_000,
  });

  private readonly timeLimitMs: number;
  private readonly inProgress: Gauge | undefined;

  constructor(options: { timeLimitMs?: number; registry?: Registry } = {}) {
    this.timeLimitMs = options.timeLimitMs ?? IMPORT_TIME_LIMIT_MS;
    this.inProgress =
      options.registry
      && new Gauge({
        name: 'contract_imports_in_progress',
        help: 'Contract imports waiting for or running on the import thread',
        registers: [options.registry],
      });
  }

  async run(input: ImportInput, protocol: Protocol): Promise<ImportedContract> {
    if (this.piscina.queueSize >= IMPORT_MAX_QUEUE) throw new AppError('service_unavailable', { retryAfterSeconds: 1 });
    const started = new Int32Array(new SharedArrayBuffer(4));
    const task: ImportTask = { input, protocol, started };
    const limit = this.limitOf(started);
    let outcome: ImportOutcome;
    this.inProgress?.inc();
    try {
      // Aborting a running task terminates its thread; Piscina starts another for the next.
      outcome = (await this.piscina.run(task, { signal: limit.signal })) as ImportOutcome;
    } catch (error) {
      if ((error as Error).name !== 'AbortError') throw error;
      if (Atomics.load(started, 0) === 0) throw new AppError('service_unavailable', { retryAfterSeconds: 1 });
      throw invalidContract(`the import ran longer than ${this.timeLimitMs / 1000} s (the limit per import)`, ['']);
    } finally {
      limit.clear();
      this.inProgress?.dec();
    }
    if ('refused' in outcome) throw invalidContract(outcome.refused.reason, outcome.refused.pointers);
    return outcome.imported;
  }

  /**
   * Aborts a task that waits longer than IMPORT_WAIT_LIMIT_MS for the thread, or runs longer than
   * the time limit once it started (the worker sets `started` and notifies).
   */
  private limitOf(started: Int32Array): { signal: AbortSignal; clear(): void } {
    const controller = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    let cleared = false;
    const waitAsync = (
      Atomics as unknown as {
        waitAsync(array: Int32Array, index: number, value: number, timeout: number): { async: boolean; value: Promise<string> | string };
      }
    ).waitAsync;
    const waited = waitAsync(started, 0, 0, IMPORT_WAIT_LIMIT_MS);
    void Promise.resolve(waited.value).then((result) => {
      if (cleared) return;
      if (result === 'timed-out') controller.abort();
      else timer = setTimeout(() => controller.abort(), this.timeLimitMs);
    });
    return {
      signal: controller.signal,
      clear: () => {
        cleared = true;
        clearTimeout(timer);
      },
    };
  }

  close(): Promise<void> {
    return this.piscina.destroy();
  }
}
