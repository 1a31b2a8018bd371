import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { BatchCheckInput, BatchCheckOutput } from '../check/batchCheck.js';
import { asBuffer, ownsMemory } from '../check/batchRows.js';
import type { BatchAnswer, BatchTask } from './batchWorker.js';
import { copyBytes, type SharedSlots, type SlotMemory } from './sharedSlots.js';

/**
 * The compiled worker entry. The product runs from dist/, where it sits beside this file; the
 * tests run the TypeScript sources, whose worker threads load the build instead (`npm test`
 * builds first).
 */
function workerFile(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  const sibling = resolve(here, 'batchWorker.js');
  return existsSync(sibling) ? sibling : resolve(here, '../../dist/ingest/offload/batchWorker.js');
}

/**
 * A checked batch and its body: the one that came back from the worker thread (see
 * BatchPool.check), or the request's own when BatchChecker checked it in place.
 */
export interface BatchCheckResult {
  output: BatchCheckOutput;
  body: Buffer;
  /** How long checkBatch itself took (ms), without the trip to the thread and back. */
  ms: number;
}

/** A task's answer, once it came back from the thread. */
type Answered = Exclude<BatchAnswer, { error: string }>;

interface Pending {
  resolve(answer: Answered): void;
  reject(error: Error): void;
}

/** One worker thread and the tasks it has not answered yet. */
class BatchThread {
  readonly pending = new Map<number, Pending>();
  alive = true;
  /** False until the thread answered once: one that dies before is broken, not unlucky. */
  answered = false;
  private readonly worker: Worker;

  constructor(file: string, slots: SlotMemory | null, onExit: (thread: BatchThread) => void) {
    this.worker = new Worker(file, { workerData: { slots } });
    this.worker.unref();
    this.worker.on('message', (answer: BatchAnswer) => {
      const task = this.pending.get(answer.id);
      if (task === undefined) return;
      this.answered = true;
      this.settled(answer.id);
      if ('error' in answer) task.reject(new Error(`batch worker: ${answer.error}`));
      else task.resolve(answer);
    });
    this.worker.on('error', () => { /* 'exit' follows and fails what is pending */ });
    this.worker.on('exit', () => {
      this.alive = false;
      for (const task of this.pending.values()) task.reject(new Error('batch worker exited'));
      this.pending.clear();
      onExit(this);
    });
  }

  run(task: BatchTask, pending: Pending): void {
    // Only a thread with work keeps the process alive.
    if (this.pending.size === 0) this.worker.ref();
    this.pending.set(task.id, pending);
    if (task.lent) this.worker.postMessage(task, [task.input.body.buffer as ArrayBuffer]);
    else this.worker.postMessage(task);
  }

  private settled(id: number): void {
    this.pending.delete(id);
    if (this.pending.size === 0) this.worker.unref();
  }

  terminate(): Promise<number> {
    return this.worker.terminate();
  }
}

export interface BatchPoolOptions {
  /** The worker entry (tests substitute one that misbehaves). */
  file?: string;
  /** Where bodies and rows meet the threads without being moved (none: they are moved). */
  slots?: SharedSlots | null;
}

const NO_BYTES = new Uint8Array(0);

/**
 * Worker threads for the CPU-bound part of each batch (ingest/check/batchCheck.ts): parsing,
 * validating and serialising take about two thirds of a batch's CPU, and under load the edge
 * thread must stay free for HTTP, Redis and ClickHouse I/O (BatchChecker decides when). A task
 * goes to the thread with the fewest unanswered ones. Plain worker_threads rather than Piscina: measured, Piscina's task handling
 * cost about 100 µs more CPU per batch (~10 % of the edge's; bench/RESULTS.md).
 */
export class BatchPool {
  private threads: BatchThread[] = [];
  private nextId = 0;
  private closed = false;
  private readonly file: string;
  private readonly slots: SharedSlots | null;

  constructor(size: number, options: BatchPoolOptions = {}) {
    this.file = options.file ?? workerFile();
    this.slots = options.slots ?? null;
    for (let i = 0; i < size; i += 1) this.threads.push(this.spawn());
  }

  /**
   * A thread that dies (it should not) fails its unanswered tasks (500 to their requests) and is
   * replaced, unless it died before answering anything: a worker that cannot start (say, the
   * build is missing) would otherwise be restarted in a tight loop.
   */
  private spawn(): BatchThread {
    const memory = this.slots && { memory: this.slots.memory, slotBytes: this.slots.slotBytes };
    return new BatchThread(this.file, memory, (dead) => {
      if (this.closed || !dead.answered) return;
      this.threads = this.threads.map((thread) => (thread === dead ? this.spawn() : thread));
    });
  }

  /**
   * Checks a batch on the least busy thread.
   * - A body in a shared slot (ingest/offload/sharedSlots.ts) stays there; another one that fits is
   *   copied into a free slot for the check. The rows are written into a slot of their own; the
   *   caller gives it back (`BatchChecker.release`).
   * - Without a free slot, a body that owns its memory is moved to the thread and back rather
   *   than copied: posting a copy of a 50 KB body cost the edge thread 50–100 µs of CPU, moving
   *   it about 20 (bench/RESULTS.md). So `input.body` is unusable once this is called; use the
   *   `body` of the result.
   */
  check(input: BatchCheckInput): Promise<BatchCheckResult> {
    if (this.closed) return Promise.reject(new Error('batch pool closed'));
    let thread: BatchThread | undefined;
    for (const candidate of this.threads) {
      if (candidate.alive && (thread === undefined || candidate.pending.size < thread.pending.size)) thread = candidate;
    }
    if (thread === undefined) return Promise.reject(new Error('no batch worker thread is running'));
    const chosen = thread;
    const slots = this.slots;
    // The body's slot: its own, or that of a copy made for this check only.
    const copy = slots !== null && slots.slotOf(input.body) === -1 ? slots.take(input.body.byteLength) : null;
    if (copy !== null) copyBytes(input.body, copy, 0);
    const bodySlot = slots?.slotOf(copy ?? input.body) ?? -1;
    const rowsInto = slots?.take(slots.slotBytes) ?? null;
    const task: BatchTask = {
      id: this.nextId++,
      input: bodySlot === -1 ? input : { ...input, body: NO_BYTES },
      bodySlot,
      bodyLength: input.body.byteLength,
      rowsSlot: rowsInto === null ? -1 : slots!.slotOf(rowsInto),
      lent: bodySlot === -1 && ownsMemory(input.body),
    };
    return new Promise((resolve, reject) => chosen.run(task, {
      resolve: ({ output, body, rowsLength, ms }) => {
        if (copy !== null) slots!.give(copy);
        if (rowsInto !== null) {
          if (output.kind === 'checked' && rowsLength !== undefined) output.rows = slots!.resize(rowsInto, rowsLength);
          else slots!.give(rowsInto);
        }
        resolve({ output, body: asBuffer(body ?? input.body), ms });
      },
      reject: (error) => {
        if (copy !== null) slots!.give(copy);
        if (rowsInto !== null) slots!.give(rowsInto);
        reject(error);
      },
    }));
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.threads.map((thread) => thread.terminate()));
  }
}
