import { serveTasks } from '../offload/workerThread.js';
import { checkBatch, type BatchCheckInput, type BatchCheckOutput } from './checkBatch.js';

const NO_ROWS = new Uint8Array(0);

/**
 * The entry of the edge's worker threads (checker.ts): checkBatch, with the rows written into
 * the slot the task brings when they fit. The rows travel apart from the output, so that only
 * their length comes back when they are in the slot.
 */
serveTasks<BatchCheckInput, BatchCheckOutput>((input, into) => {
  const output = checkBatch(input, into);
  return output.kind === 'checked' ? { output: { ...output, rows: NO_ROWS }, bytes: output.rows } : { output, bytes: null };
});
