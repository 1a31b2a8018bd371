// Piscina worker of contract imports (importPool.ts). A refusal crosses back as data: an error
// thrown here reaches the caller without its catalogue code and members.

import { isAppError } from '../../shared/errors/index.js';
import type { Protocol } from '../connections/connectionStore.js';
import { importContract, type ImportedContract, type ImportInput } from './contractImport.js';

export interface ImportTask {
  input: ImportInput;
  protocol: Protocol;
  /** Set to 1 (and notified) when the task starts: its time limit counts from there. */
  started: Int32Array;
}

export type ImportOutcome = { imported: ImportedContract } | { refused: { reason: string; pointers: string[] } };

export default function runImport(task: ImportTask): ImportOutcome {
  Atomics.store(task.started, 0, 1);
  Atomics.notify(task.started, 0);
  try {
    return { imported: importContract(task.input, task.protocol) };
  } catch (error) {
    if (isAppError(error) && error.code === 'invalid_contract') {
      return { refused: { reason: error.extra.reason as string, pointers: error.extra.pointers as string[] } };
    }
    throw error;
  }
}
