import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import repairInline, { type RepairTask, type RepairWorkResult } from './repairWorker.js';

/** The compiled worker (dist/analyzer/repairWorker.js), also when this module runs from source in tests. */
function workerFile(): string {
  const here = fileURLToPath(new URL('./repairWorker.js', import.meta.url));
  if (existsSync(here)) return here;
  return fileURLToPath(new URL('../dist/analyzer/repairWorker.js', import.meta.url));
}

/**
 * Repair generation and replay validation off the event loop (00-decisions §6: "in a worker
 * thread"): a dataset of 1,000 fixtures is compared several times over. With 0 threads the work
 * runs inline (tests, tools).
 */
export class RepairPool {
  private readonly piscina: Piscina | null;

  constructor(threads: number) {
    this.piscina = threads > 0 ? new Piscina({ filename: workerFile(), minThreads: threads, maxThreads: threads }) : null;
  }

  async run(task: RepairTask): Promise<RepairWorkResult> {
    if (this.piscina === null) return repairInline(task);
    return (await this.piscina.run(task)) as RepairWorkResult;
  }

  async close(): Promise<void> {
    await this.piscina?.destroy();
  }
}
