import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import type { ComparisonRequest, CompareMany } from '../shared/analysis/incidentAggregate.js';
import type { ShapeLocator } from '../shared/analysis/observationGroups.js';
import type { Finding } from '../shared/analysis/types.js';
import type { LoadedContract } from './contractCache.js';
import compareInline, { type CompareTask } from './compareWorker.js';

interface Counting {
  inc(by?: number): void;
}

/** Shapes per worker task: large enough to amortise the message, small enough to spread over threads. */
const ITEMS_PER_TASK = 256;

/** The compiled worker (dist/analyzer/compareWorker.js), also when this module runs from source in tests. */
function workerFile(): string {
  const here = fileURLToPath(new URL('./compareWorker.js', import.meta.url));
  if (existsSync(here)) return here;
  return fileURLToPath(new URL('../dist/analyzer/compareWorker.js', import.meta.url));
}

/**
 * Memoised comparisons: the findings of a (contract version, operation, shape) are computed once
 * and reused. The key's shape part is the SHA-256 ClickHouse computed from the stored shape, never
 * the collector's schemaFingerprint. Misses run on Piscina worker threads (or inline with 0
 * threads), where compiled versions are cached per version id.
 */
export class ComparePool {
  private readonly memo = new Map<string, Finding[]>();
  private readonly piscina: Piscina | null;
  /** Comparisons computed (memo misses) and answered by the memo, since construction. */
  comparisons = 0;
  memoHits = 0;

  /** Versions the current requests may name (bounded like the memo: the least recently used leave). */
  private readonly contracts = new Map<string, LoadedContract>();

  /**
   * `loadShapes` fetches the texts of shapes a request left out (batch reads carry none); only
   * memo misses need them.
   */
  constructor(
    threads: number,
    private readonly memoCapacity: number,
    private readonly loadShapes?: (locators: ShapeLocator[]) => Promise<Map<string, string>>,
    /** Counters (the analyzer's metrics) that follow `comparisons` and `memoHits`. */
    private readonly counters?: { comparisons: Counting; memoHits: Counting },
  ) {
    this.piscina = threads > 0 ? new Piscina({ filename: workerFile(), minThreads: threads, maxThreads: threads }) : null;
  }

  /** Makes a version's operations available to the workers before requests name it. */
  register(contract: LoadedContract): void {
    this.contracts.delete(contract.versionId);
    this.contracts.set(contract.versionId, contract);
    if (this.contracts.size > 256) this.contracts.delete(this.contracts.keys().next().value as string);
  }

  readonly compareMany: CompareMany = async (requests) => {
    const results: Finding[][] = new Array(requests.length);
    const misses = new Map<string, { key: string; index: number[]; request: ComparisonRequest }[]>();
    const pending = new Map<string, number[]>();
    requests.forEach((request, index) => {
      const key = `${request.versionId}\n${request.operation.id}\n${request.shapeHash}`;
      const hit = this.memo.get(key);
      if (hit !== undefined) {
        this.memoHits++;
        this.counters?.memoHits.inc();
        this.memo.delete(key);
        this.memo.set(key, hit);
        results[index] = hit;
        return;
      }
      const waiting = pending.get(key);
      if (waiting !== undefined) {
        waiting.push(index);
        return;
      }
      const indexes = [index];
      pending.set(key, indexes);
      let list = misses.get(request.versionId);
      if (list === undefined) {
        list = [];
        misses.set(request.versionId, list);
      }
      list.push({ key, index: indexes, request });
    });
    const shapes = await this.missingShapes([...misses.values()].flat().map((miss) => miss.request));
    const tasks: Promise<void>[] = [];
    for (const [versionId, list] of misses) {
      const contract = this.contracts.get(versionId);
      if (contract === undefined) throw new Error(`contract version ${versionId} is not loaded`);
      for (let from = 0; from < list.length; from += ITEMS_PER_TASK) {
        const chunk = list.slice(from, from + ITEMS_PER_TASK);
        const task: CompareTask = {
          versionId,
          operationsJson: contract.operationsJson,
          items: chunk.map((m) => ({ operationId: m.request.operation.id, shape: m.request.shape ?? shapes.get(m.request.shapeHash)! })),
        };
        tasks.push(
          this.run(task).then((findings) => {
            chunk.forEach((miss, i) => {
              this.remember(miss.key, findings[i]);
              for (const index of miss.index) results[index] = findings[i];
            });
          }),
        );
      }
    }
    await Promise.all(tasks);
    return results;
  };

  private async missingShapes(requests: ComparisonRequest[]): Promise<Map<string, string>> {
    const locators = new Map<string, ShapeLocator>();
    for (const request of requests) if (request.shape === null) locators.set(request.shapeHash, request.locator);
    if (locators.size === 0) return new Map();
    if (this.loadShapes === undefined) throw new Error('a comparison request without its shape, and no way to load it');
    const shapes = await this.loadShapes([...locators.values()]);
    for (const hash of locators.keys()) if (!shapes.has(hash)) throw new Error(`shape ${hash} was not found in ClickHouse`);
    return shapes;
  }

  private async run(task: CompareTask): Promise<Finding[][]> {
    this.comparisons += task.items.length;
    this.counters?.comparisons.inc(task.items.length);
    return this.piscina === null ? compareInline(task) : (this.piscina.run(task) as Promise<Finding[][]>);
  }

  private remember(key: string, findings: Finding[]): void {
    this.memo.set(key, findings);
    if (this.memo.size > this.memoCapacity) this.memo.delete(this.memo.keys().next().value as string);
  }

  async close(): Promise<void> {
    await this.piscina?.destroy();
  }
}
