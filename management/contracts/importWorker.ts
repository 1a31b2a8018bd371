// Piscina worker of contract imports (importPool.ts). A refusal crosses back as data: an error
// thrown here reaches the caller without its catalogue code and members.

import { isAppError } from '../../shared/errors/index.js';
import type { Protocol } from '../connections/connectionStore.js';
import { importContract, type ImportedContract, type ImportInput } from './contractImport.js';

export interface ImportTask {
  input: ImportInput;
  protocol: Protocol;
  /** Set to 1 when the task starts: a task aborted before that waited, it did not run long. */
  started: Int32Array;
}

export type ImportOutcome = { imported: ImportedContract } | { refused: { reason: string; pointers: string[] } };

export default function runImport(task: ImportTask): ImportOutcome {
  Atomics.store(task.started, 0, 1);
  try {
    return { imported: importContract(task.input, task.protocol) };
  } catch (error) {
    if (isAppError(error) && error.code === 'invalid_contract') {
      return { refused: { reason: error.extra.reason as string, pointers: error.extra.pointers as string[] } };
    }
    throw error;
  }
}
