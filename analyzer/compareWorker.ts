import { compileContract, type CompiledContract } from '../shared/analysis/compile.js';
import { compareShape } from '../shared/analysis/compare.js';
import type { AnalysedOperation, Finding, SchemaShape } from '../shared/analysis/types.js';

/** One Piscina task: shapes to compare with operations of one contract version. */
export interface CompareTask {
  versionId: string;
  /** JSON of the version's operations, compiled once per worker (versions are immutable). */
  operationsJson: string;
  items: { operationId: string; shape: string }[];
}

const CACHE_CAPACITY = 64;
const contracts = new Map<string, CompiledContract>();

function contractFor(task: CompareTask): CompiledContract {
  let contract = contracts.get(task.versionId);
  if (contract === undefined) {
    contract = compileContract(JSON.parse(task.operationsJson) as AnalysedOperation[]);
    contracts.set(task.versionId, contract);
    if (contracts.size > CACHE_CAPACITY) contracts.delete(contracts.keys().next().value as string);
  }
  return contract;
}

/** Piscina's entry point: the findings of each item, in item order. */
export default function compare(task: CompareTask): Finding[][] {
  const contract = contractFor(task);
  const byId = new Map(contract.operations.map((operation) => [operation.id, operation]));
  return task.items.map((item) => {
    const operation = byId.get(item.operationId);
    if (operation === undefined) throw new Error(`operation ${item.operationId} is not in version ${task.versionId}`);
    return compareShape(contract.schemaOf(operation), JSON.parse(item.shape) as SchemaShape);
  });
}
