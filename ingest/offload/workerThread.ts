import { parentPort, workerData } from 'node:worker_threads';
import { ownsMemory } from './bytes.js';
import { slotView, type SlotMemory } from './sharedSlots.js';

/**
 * The messages between a ThreadPool (threadPool.ts) and its worker threads.
 * - `bodySlot`: the slot holding the body's `bodyLength` bytes (sharedSlots.ts), or -1 when the
 *   body is `input.body` itself; `lent`: that body's memory was moved here and goes back with
 *   the answer.
 * - `bytesSlot`: the slot to write the task's output bytes into, or -1. The answer's
 *   `bytesLength` says how many were written there; when absent, the bytes (if any) are in
 *   `bytes`, moved rather than copied.
 */
export interface TaskMessage<I> {
  id: number;
  input: I;
  bodySlot: number;
  bodyLength: number;
  bytesSlot: number;
  lent: boolean;
}
export type AnswerMessage<O> =
  | { id: number; output: O; bytes?: Uint8Array; bytesLength?: number; body?: Uint8Array; ms: number }
  | { id: number; error: string };

/** What a task's function returns: its output, and the bytes it wrote (into `into` when they fit). */
export interface TaskResult<O> {
  output: O;
  bytes: Uint8Array | null;
}

/**
 * Serves a pool's tasks on this worker thread with `run`, which reads `input.body` and may write
 * its output bytes into `into` (a slot's view; absent without slots). Bytes written elsewhere,
 * and a lent body, are moved back to the edge thread rather than copied.
 */
export function serveTasks<I extends { body: Uint8Array }, O>(run: (input: I, into: Buffer | undefined) => TaskResult<O>): void {
  // Given by ThreadPool; null when the thread is started without slots.
  const slots = (workerData as { slots?: SlotMemory } | null)?.slots ?? null;
  parentPort?.on('message', ({ id, input, bodySlot, bodyLength, bytesSlot, lent }: TaskMessage<I>) => {
    let result: TaskResult<O>;
    const started = performance.now();
    const into = slots !== null && bytesSlot >= 0 ? slotView(slots, bytesSlot, slots.slotBytes) : undefined;
    try {
      const body = slots !== null && bodySlot >= 0 ? slotView(slots, bodySlot, bodyLength) : input.body;
      result = run(bodySlot >= 0 ? { ...input, body } : input, into);
    } catch (error) {
      parentPort!.postMessage({ id, error: error instanceof Error ? error.message : String(error) } satisfies AnswerMessage<O>);
      return;
    }
    const ms = performance.now() - started;
    const body = lent ? input.body : undefined;
    const moved = body ? [body.buffer as ArrayBuffer] : [];
    const { output, bytes } = result;
    if (bytes === null) {
      parentPort!.postMessage({ id, output, body, ms } satisfies AnswerMessage<O>, moved);
      return;
    }
    if (into !== undefined && bytes.buffer === into.buffer && bytes.byteOffset === into.byteOffset) {
      // Written into the slot: only their length goes back.
      parentPort!.postMessage({ id, output, body, bytesLength: bytes.byteLength, ms } satisfies AnswerMessage<O>, moved);
      return;
    }
    // A Buffer made by Buffer.from(string) may share Node's pool slab: move only a buffer of its own.
    const own = ownsMemory(bytes) ? bytes : new Uint8Array(bytes);
    parentPort!.postMessage({ id, output, bytes: own, body, ms } satisfies AnswerMessage<O>, [own.buffer as ArrayBuffer, ...moved]);
  });
}
