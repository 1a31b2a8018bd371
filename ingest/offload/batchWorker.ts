import { parentPort, workerData } from 'node:worker_threads';
import { checkBatch, rowsWrittenInto, type BatchCheckInput, type BatchCheckOutput } from '../check/batchCheck.js';
import { ownsMemory } from '../check/batchRows.js';
import { slotView, type SlotMemory } from './sharedSlots.js';

/**
 * A message to a batch worker and its answer (ingest/offload/batchPool.ts).
 * - `bodySlot`: the slot holding the body's `bodyLength` bytes (ingest/offload/sharedSlots.ts), or -1
 *   when the body is `input.body` itself; `lent`: that body's memory was moved here and goes back
 *   with the answer.
 * - `rowsSlot`: the slot to write the rows into, or -1. The answer's `rowsLength` says how many
 *   bytes were written there; when absent, the rows (too large for the slot) are in `output`.
 */
export interface BatchTask { id: number; input: BatchCheckInput; bodySlot: number; bodyLength: number; rowsSlot: number; lent: boolean }
export type BatchAnswer =
  | { id: number; output: BatchCheckOutput; body?: Uint8Array; rowsLength?: number; ms: number }
  | { id: number; error: string };

/** Given by BatchPool; null when the worker is started without slots (a test's fixture). */
const slots = (workerData as { slots?: SlotMemory } | null)?.slots ?? null;

const NO_BYTES = new Uint8Array(0);

/**
 * A worker thread of the edge's batch pool: runs checkBatch, reading the body from its slot and
 * writing the rows into theirs, or else moving the rows' bytes and a lent body back to the edge
 * thread instead of copying them.
 */
parentPort?.on('message', ({ id, input, bodySlot, bodyLength, rowsSlot, lent }: BatchTask) => {
  let output: BatchCheckOutput;
  const started = performance.now();
  const into = slots !== null && rowsSlot >= 0 ? slotView(slots, rowsSlot, slots.slotBytes) : undefined;
  try {
    const body = slots !== null && bodySlot >= 0 ? slotView(slots, bodySlot, bodyLength) : input.body;
    output = checkBatch(bodySlot >= 0 ? { ...input, body } : input, into);
  } catch (error) {
    parentPort!.postMessage({ id, error: error instanceof Error ? error.message : String(error) } satisfies BatchAnswer);
    return;
  }
  const ms = performance.now() - started;
  const body = lent ? input.body : undefined;
  const moved = body ? [body.buffer as ArrayBuffer] : [];
  if (output.kind !== 'checked') {
    parentPort!.postMessage({ id, output, body, ms } satisfies BatchAnswer, moved);
    return;
  }
  const { rows } = output;
  if (into !== undefined && rowsWrittenInto(output, into)) {
    // Written into the slot: only their length goes back.
    parentPort!.postMessage({ id, output: { ...output, rows: NO_BYTES }, body, rowsLength: rows.byteLength, ms } satisfies BatchAnswer, moved);
    return;
  }
  // A Buffer made by Buffer.from(string) may share Node's pool slab: move only a buffer of its own.
  const own = ownsMemory(rows) ? rows : new Uint8Array(rows);
  parentPort!.postMessage({ id, output: { ...output, rows: own }, body, ms } satisfies BatchAnswer, [own.buffer as ArrayBuffer, ...moved]);
});
