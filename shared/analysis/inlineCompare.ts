import type { CompiledContract } from './compile.js';
import { compareShape } from './compare.js';
import type { CompareMany } from './incidentAggregate.js';
import type { Finding, SchemaShape } from './types.js';

/**
 * Comparisons in the calling thread, each distinct (operation, shape) once: for the read routes
 * (dry-run, coverage) whose work is one window's distinct shapes under one contract version.
 */
export function inlineCompare(contract: CompiledContract): CompareMany {
  const memo = new Map<string, Finding[]>();
  return async (requests) =>
    requests.map((request) => {
      const key = `${request.operation.id}\n${request.shapeHash}`;
      let findings = memo.get(key);
      if (findings === undefined) {
        if (request.shape === null) throw new Error('inlineCompare needs groups read with their shapes');
        findings = compareShape(contract.schemaOf(request.operation), JSON.parse(request.shape) as SchemaShape);
        memo.set(key, findings);
      }
      return findings;
    });
}
