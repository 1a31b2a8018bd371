// The planned Overlay is checked before it is exported: applied to the registered document with
// Overlay 1.0.0's rules and imported again, the operation must have exactly the candidate's
// schema (up to the order of `type` lists and `required`, which the importer sorts). Anything
// else — a node the walk could not place, a form the importer reads differently — refuses the
// export with `repair_export_operation_unsupported`.

import { importJsonSchema } from '../../contracts/importJsonSchema.js';
import { importOpenApi } from '../../contracts/importOpenApi.js';
import { isPlainObject, resolveTokens, setOwn } from '../../contracts/jsonPointer.js';
import { operationKey } from '../../contracts/operationKey.js';
import { compare } from '../../contracts/schemaSubset.js';
import type { ImportedOperation } from '../../contracts/types.js';
import { fingerprint } from '../../fingerprint.js';
import type { RepairBundleInput } from './types.js';
import type { PlannedAction } from './overlayPlan.js';
import { unsupported } from './schemaSource.js';

/** Overlay 1.0.0 applied by target tokens: `remove` takes the node out of its parent, `update` merges recursively. */
export function applyPlannedActions(document: Record<string, unknown>, actions: readonly PlannedAction[]): Record<string, unknown> {
  const out = structuredClone(document);
  for (const action of actions) {
    if (action.remove) {
      const parent = resolveTokens(out, action.tokens.slice(0, -1));
      const last = action.tokens[action.tokens.length - 1];
      if (Array.isArray(parent)) parent.splice(Number(last), 1);
      else if (isPlainObject(parent)) delete parent[last];
      continue;
    }
    const target = resolveTokens(out, action.tokens);
    if (!isPlainObject(target) || action.update === undefined) throw new Error('an Overlay update must select an object');
    merge(target, action.update);
  }
  return out;
}

function merge(target: Record<string, unknown>, update: Record<string, unknown>): void {
  for (const key of Object.keys(update)) {
    const current = Object.hasOwn(target, key) ? target[key] : undefined;
    const next = update[key];
    if (isPlainObject(current) && isPlainObject(next)) {
      merge(current, next);
      continue;
    }
    // Overlay tools differ on merging into an array (append or replace): the plan removes first.
    if (Array.isArray(current)) throw new Error('an Overlay update would merge into an array');
    setOwn(target, key, structuredClone(next));
  }
}

/** The operations of a document, by key, as the contract import reads them. */
function importedOperations(input: RepairBundleInput, document: Record<string, unknown>): Map<string, ImportedOperation> {
  const { operation } = input;
  const protocol = operation.payloadLocation === 'message' ? 'http-webhook' : 'http-api';
  try {
    if (input.contract.format === 'json-schema') {
      const imported = importJsonSchema(document, { ...operation }, protocol);
      return new Map([[imported.operationKey, imported]]);
    }
    return new Map(importOpenApi(document, protocol).operations.map((entry) => [entry.operationKey, entry]));
  } catch {
    throw unsupported();
  }
}

/**
 * A schema with its `type` lists and `required` sets in the order the importer writes them: a
 * candidate that lists them otherwise means the same schema.
 */
function normalForm(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(normalForm);
  if (!isPlainObject(schema)) return schema;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(schema)) {
    const value = schema[key];
    if ((key === 'type' || key === 'required') && Array.isArray(value) && value.every((entry) => typeof entry === 'string')) {
      setOwn(out, key, [...new Set(value)].sort(compare));
    } else if (key === 'enum' && Array.isArray(value)) {
      setOwn(out, key, value);
    } else {
      setOwn(out, key, normalForm(value));
    }
  }
  return out;
}

/**
 * Checks that the registered document imports to the base schema and the patched one to the
 * candidate; returns the keys of the other operations whose schema the edit changes too (they
 * share an edited component).
 */
export function checkOverlay(input: RepairBundleInput, actions: readonly PlannedAction[]): string[] {
  const { operation, candidate } = input;
  const key = operationKey(operation.method, operation.routeTemplate, operation.payloadLocation, operation.statusSelector);
  if (key !== input.proposal.operationKey) throw unsupported();
  const before = importedOperations(input, input.contract.document);
  if (before.get(key)?.fingerprint !== candidate.baseSchemaFingerprint) throw unsupported();
  const after = importedOperations(input, applyPlannedActions(input.contract.document, actions));
  const repaired = after.get(key);
  if (repaired === undefined || fingerprint(normalForm(repaired.schema)) !== fingerprint(normalForm(candidate.schema))) throw unsupported();
  const keys = new Set([...before.keys(), ...after.keys()]);
  keys.delete(key);
  return [...keys].filter((other) => before.get(other)?.fingerprint !== after.get(other)?.fingerprint).sort(compare);
}
