import { move, transferableSymbol, valueSymbol } from 'piscina';
import { checkBatch, type BatchCheckInput, type BatchCheckOutput } from './batchCheck.js';

/**
 * A worker thread of the edge's batch pool (ingest/batchPool.ts): runs checkBatch and moves the
 * rows' bytes back to the edge thread instead of copying them.
 */
export default function run(input: BatchCheckInput): BatchCheckOutput | ReturnType<typeof move> {
  const output = checkBatch(input);
  if (output.kind !== 'checked') return output;
  // A Buffer made by Buffer.from(string) may share Node's pool slab: move only a buffer of its own.
  const rows = output.rows.byteOffset === 0 && output.rows.byteLength === output.rows.buffer.byteLength ? output.rows : new Uint8Array(output.rows);
  const result = { ...output, rows };
  return move({
    get [transferableSymbol]() { return [rows.buffer]; },
    get [valueSymbol]() { return result; },
  });
}
