import type pg from 'pg';
import { compileContract, type CompiledContract } from '../shared/analysis/compile.js';
import type { ContractForAnalysis } from '../shared/analysis/incidentAggregate.js';
import { loadOperations } from '../shared/analysis/contractOperations.js';
import type { AnalysedOperation } from '../shared/analysis/types.js';

/** A contract version compiled for matching, with its operations' JSON for the workers. */
export interface LoadedContract extends ContractForAnalysis {
  compiled: CompiledContract;
  /** JSON of the version's AnalysedOperation list: what a worker compiles the version from. */
  operationsJson: string;
}

export function contractOf(versionId: string, operations: AnalysedOperation[]): LoadedContract {
  const compiled = compileContract(operations);
  return { versionId, compiled, operationsJson: JSON.stringify(operations), match: (observed) => compiled.match(observed) };
}

/**
 * Compiled contract versions by id. Versions never change, so an entry never goes stale; the
 * cache only bounds how many are kept (least recently used leave first).
 */
export class ContractCache {
  private readonly entries = new Map<string, Promise<LoadedContract>>();

  constructor(
    private readonly pool: pg.Pool,
    private readonly capacity = 256,
  ) {}

  get(versionId: string): Promise<LoadedContract> {
    let entry = this.entries.get(versionId);
    if (entry !== undefined) {
      this.entries.delete(versionId);
      this.entries.set(versionId, entry);
      return entry;
    }
    entry = loadOperations(this.pool, versionId).then((operations) => contractOf(versionId, operations));
    entry.catch(() => this.entries.delete(versionId));
    this.entries.set(versionId, entry);
    if (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value as string);
    return entry;
  }
}
