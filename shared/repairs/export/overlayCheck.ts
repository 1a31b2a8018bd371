// The planned Overlay is checked before it is exported: applied to the registered document with
// Overlay 1.0.0's rules and imported again, the operation must have exactly the candidate's
// schema (its fingerprint). Anything else — a node the walk could not place, a form the importer
// reads differently — refuses the export with `repair_export_operation_unsupported`.

import { importJsonSchema } from '../../contracts/importJsonSchema.js';
import { importOpenApi } from '../../contracts/importOpenApi.js';
import { isPlainObject, resolveTokens, setOwn } from '../../contracts/jsonPointer.js';
import { operationKey } from '../../contracts/operationKey.js';
import { compare } from '../../contracts/schemaSubset.js';
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

/** Operation keys → schema fingerprints of a document, as the contract import reads it. */
function importedFingerprints(input: RepairBundleInput, document: Record<string, unknown>): Map<string, string> {
  const { operation } = input;
  const protocol = operation.payloadLocation === 'message' ? 'http-webhook' : 'http-api';
  try {
    if (input.contract.format === 'json-schema') {
      const imported = importJsonSchema(document, { ...operation }, protocol);
      return new Map([[imported.operationKey, imported.fingerprint]]);
    }
    return new Map(importOpenApi(document, protocol).operations.map((entry) => [entry.operationKey, entry.fingerprint]));
  } catch {
    throw unsupported();
  }
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
  const before = importedFingerprints(input, input.contract.document);
  if (before.get(key) !== candidate.baseSchemaFingerprint) throw unsupported();
  const after = importedFingerprints(input, applyPlannedActions(input.contract.document, actions));
  if (after.get(key) !== candidate.schemaFingerprint) throw unsupported();
  const keys = new Set([...before.keys(), ...after.keys()]);
  keys.delete(key);
  return [...keys].filter((other) => before.get(other) !== after.get(other)).sort(compare);
}
