import { Worker } from 'node:worker_threads';
import { asBuffer, ownsMemory } from './bytes.js';
import type { RequestMemory } from './requestMemory.js';
import { copyBytes, type SlotMemory } from './sharedSlots.js';
import type { AnswerMessage, TaskMessage } from './workerThread.js';

/**
 * A task's answer on the edge thread: its output, the bytes it wrote (a slot of the request's
 * memory, or memory of their own), and the body: the one that came back from the worker thread
 * (see ThreadPool.run).
 */
export interface ThreadResult<O> {
  output: O;
  bytes: Buffer | null;
  body: Buffer;
  /** How long the task itself took (ms), without the trip to the thread and back. */
  ms: number;
}

/** A task's answer, once it came back from the thread. */
type Answered<O> = Exclude<AnswerMessage<O>, { error: string }>;

interface Pending<O> {
  resolve(answer: Answered<O>): void;
  reject(error: Error): void;
}

/** One worker thread and the tasks it has not answered yet. */
class PoolThread<I, O> {
  readonly pending = new Map<number, Pending<O>>();
  alive = true;
  /** False until the thread answered once: one that dies before is broken, not unlucky. */
  answered = false;
  private readonly worker: Worker;

  constructor(
    private readonly name: string,
    file: string,
    slots: SlotMemory | null,
    onExit: (thread: PoolThread<I, O>) => void,
  ) {
    this.worker = new Worker(file, { workerData: { slots } });
    this.worker.unref();
    this.worker.on('message', (answer: AnswerMessage<O>) => {
      const task = this.pending.get(answer.id);
      if (task === undefined) return;
      this.answered = true;
      this.settled(answer.id);
      if ('error' in answer) task.reject(new Error(`${this.name} worker: ${answer.error}`));
      else task.resolve(answer);
    });
    this.worker.on('error', () => {
      /* 'exit' follows and fails what is pending */
    });
    this.worker.on('exit', () => {
      this.alive = false;
      for (const task of this.pending.values()) task.reject(new Error(`${this.name} worker exited`));
      this.pending.clear();
      onExit(this);
    });
  }

  run(task: TaskMessage<I>, body: Uint8Array, pending: Pending<O>): void {
    // Only a thread with work keeps the process alive.
    if (this.pending.size === 0) this.worker.ref();
    this.pending.set(task.id, pending);
    if (task.lent) this.worker.postMessage(task, [body.buffer as ArrayBuffer]);
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

const NO_BYTES = new Uint8Array(0);

/**
 * Worker threads for the CPU-bound part of a request, so that the edge thread stays free for
 * HTTP, Redis and ClickHouse I/O. The threads run a `serveTasks` entry (workerThread.ts) that
 * reads a body and may write output bytes. A task goes to the thread with the fewest unanswered
 * ones. Plain worker_threads rather than Piscina: Piscina's task handling cost more CPU per task
 * than the whole hand-off here (bench/RESULTS.md).
 */
export interface ThreadPoolOptions {
  /** What the pool's threads do (`batch`: the batch checks), the first word of its error messages. */
  name: string;
  /** The compiled worker entry. */
  file: string;
  size: number;
  /** The shared memory of the requests' slots, if any. */
  slots?: SlotMemory | null;
}

export class ThreadPool<I extends { body: Uint8Array }, O> {
  private threads: PoolThread<I, O>[] = [];
  private nextId = 0;
  private closed = false;
  private readonly name: string;
  private readonly file: string;
  private readonly slots: SlotMemory | null;

  constructor(options: ThreadPoolOptions) {
    this.name = options.name;
    this.file = options.file;
    this.slots = options.slots ?? null;
    for (let i = 0; i < options.size; i += 1) this.threads.push(this.spawn());
  }

  /**
   * A thread that dies (it should not) fails its unanswered tasks (500 to their requests) and is
   * replaced, unless it died before answering anything: a worker that cannot start (say, the
   * build is missing) would otherwise be restarted in a tight loop.
   */
  private spawn(): PoolThread<I, O> {
    return new PoolThread<I, O>(this.name, this.file, this.slots, (dead) => {
      if (this.closed || !dead.answered) return;
      this.threads = this.threads.map((thread) => (thread === dead ? this.spawn() : thread));
    });
  }

  /**
   * Runs a task on the least busy thread. Slots come from the request's `memory`, which keeps
   * them until it is released:
   * - A body in one of its slots stays there; another one that fits is copied into a free slot.
   *   The output bytes are written into a slot of their own when one is free.
   * - Without a free slot, a body that owns its memory is moved to the thread and back rather
   *   than copied (posting a copy of a 50 KB body costs the edge thread several times more). So
   *   `input.body` is unusable once this is called; use the `body` of the result.
   */
  run(input: I, memory: RequestMemory): Promise<ThreadResult<O>> {
    if (this.closed) return Promise.reject(new Error(`${this.name} pool closed`));
    let thread: PoolThread<I, O> | undefined;
    for (const candidate of this.threads) {
      if (candidate.alive && (thread === undefined || candidate.pending.size < thread.pending.size)) thread = candidate;
    }
    if (thread === undefined) return Promise.reject(new Error(`no ${this.name} worker thread is running`));
    const chosen = thread;
    const body = input.body;
    let bodySlot = memory.slotOf(body);
    if (bodySlot === -1) {
      const copy = memory.slot(body.byteLength);
      if (copy !== null) {
        copyBytes(body, copy, 0);
        bodySlot = memory.slotOf(copy);
      }
    }
    const into = memory.slot(memory.slotBytes);
    const task: TaskMessage<I> = {
      id: this.nextId++,
      input: bodySlot === -1 ? input : { ...input, body: NO_BYTES },
      bodySlot,
      bodyLength: body.byteLength,
      bytesSlot: into === null ? -1 : memory.slotOf(into),
      lent: bodySlot === -1 && ownsMemory(body),
    };
    return new Promise((resolve, reject) =>
      chosen.run(task, body, {
        resolve: ({ output, bytes, bytesLength, body: returned, ms }) => {
          const written = into !== null && bytesLength !== undefined ? memory.shrink(into, bytesLength) : bytes ? asBuffer(bytes) : null;
          resolve({ output, bytes: written, body: asBuffer(returned ?? body), ms });
        },
        reject,
      }),
    );
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.threads.map((thread) => thread.terminate()));
  }
}
