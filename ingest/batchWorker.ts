import { parentPort } from 'node:worker_threads';
import { checkBatch, type BatchCheckInput, type BatchCheckOutput } from './batchCheck.js';
import { ownsMemory } from './batchRows.js';

/**
 * A message to a batch worker and its answer (ingest/batchPool.ts). `lent`: the body's memory was
 * moved here, and goes back with the answer.
 */
export interface BatchTask { id: number; input: BatchCheckInput; lent: boolean }
export type BatchAnswer = { id: number; output: BatchCheckOutput; body?: Uint8Array; ms: number } | { id: number; error: string };

/**
 * A worker thread of the edge's batch pool: runs checkBatch, and moves the rows' bytes and a lent
 * body back to the edge thread instead of copying them.
 */
parentPort?.on('message', ({ id, input, lent }: BatchTask) => {
  let output: BatchCheckOutput;
  const started = performance.now();
  try {
    output = checkBatch(input);
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
  // A Buffer made by Buffer.from(string) may share Node's pool slab: move only a buffer of its own.
  const { rows } = output;
  const own = ownsMemory(rows) ? rows : new Uint8Array(rows);
  parentPort!.postMessage({ id, output: { ...output, rows: own }, body, ms } satisfies BatchAnswer, [own.buffer as ArrayBuffer, ...moved]);
});
