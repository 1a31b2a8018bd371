// Coverage beside the diff (STYLE "Analysis"): which declared properties the observed shapes
// never showed. Pointers use the finding-path convention: RFC 6901, `-` for every array item.

import { escapeToken } from '../contracts/jsonPointer.js';
import { SHAPE_MAX_DEPTH } from '../envelope/types.js';
import { KIND_ARRAY, KIND_OBJECT, SchemaNode, compareText, compileSchema, type CompiledSchema } from './compile.js';
import { ARRAY_ITEMS_TOKEN } from './compare.js';
import type { SchemaShape } from './types.js';

function compiled(schema: CompiledSchema | Record<string, unknown>): CompiledSchema {
  return (schema as { root?: unknown }).root instanceof SchemaNode
    ? (schema as CompiledSchema)
    : compileSchema(schema as Record<string, unknown>);
}

/**
 * Pointers of every declared property reachable in `schema`, code-unit order. A recursive
 * schema is expanded once along each path: a `$ref` target (a `$defs` member, or the root for
 * `#`) already on the path is not expanded again, nor is any node already on it. Nothing deeper
 * than a shape can be (SHAPE_MAX_DEPTH levels) is listed.
 */
export function declaredPointers(schema: CompiledSchema | Record<string, unknown>): string[] {
  return fieldCoverage(schema).declared;
}

/**
 * Declared properties listed per operation. A schema whose shared sub-schemas appear at many
 * places declares one property per place, which can be exponential in the document's size; the
 * listing stops here (about 7 times the most any corpus operation declares, docs/decisions/analysis.md).
 */
export const MAX_COVERAGE_PROPERTIES = 10_000;

export interface FieldCoverage {
  /** Every declared property (see declaredPointers), at most MAX_COVERAGE_PROPERTIES. */
  declared: string[];
  /** Set when the operation declares more properties than MAX_COVERAGE_PROPERTIES (the lists stop there). */
  truncated: boolean;
  /**
   * The places (the payload root `""`, declared properties, array items `-`) whose schema the
   * import left unchecked (00-decisions §7), reached the same way; code-unit order.
   */
  unchecked: string[];
}

export function fieldCoverage(schema: CompiledSchema | Record<string, unknown>): FieldCoverage {
  const out = new Set<string>();
  const unchecked = new Set<string>();
  // Definitions ($defs members, the root) of the nodes on the current path, with how many nodes hold each.
  const onPath = new Map<object, number>();
  const nodesOnPath = new Set<SchemaNode>();
  let truncated = false;
  const visit = (node: SchemaNode, pointer: string, depth: number): void => {
    if (truncated || depth >= SHAPE_MAX_DEPTH || nodesOnPath.has(node) || node.definitions.some((definition) => onPath.has(definition)))
      return;
    nodesOnPath.add(node);
    if (node.unchecked) unchecked.add(pointer);
    for (const member of node.definitions) onPath.set(member, (onPath.get(member) ?? 0) + 1);
    if (node.kinds & KIND_OBJECT) {
      node.propertyNames.forEach((name, index) => {
        if (out.size >= MAX_COVERAGE_PROPERTIES) truncated = true;
        if (truncated) return;
        const child = `${pointer}/${escapeToken(name)}`;
        out.add(child);
        visit(node.property(index), child, depth + 1);
      });
    }
    if (node.kinds & KIND_ARRAY && node.hasItems) visit(node.items(), `${pointer}/${ARRAY_ITEMS_TOKEN}`, depth + 1);
    for (const member of node.definitions) {
      const count = onPath.get(member) as number;
      if (count === 1) onPath.delete(member);
      else onPath.set(member, count - 1);
    }
    nodesOnPath.delete(node);
  };
  visit(compiled(schema).root, '', 0);
  return { declared: [...out].sort(compareText), truncated, unchecked: [...unchecked].sort(compareText) };
}

/** Pointers of every field a shape shows (array items as `-`; the root and items themselves are not fields). */
export function observedPointers(shape: SchemaShape, into: Set<string> = new Set()): Set<string> {
  const visit = (node: SchemaShape, pointer: string): void => {
    if (node.kind === 'object') {
      for (const name of Object.keys(node.fields)) {
        const child = `${pointer}/${escapeToken(name)}`;
        into.add(child);
        visit(node.fields[name], child);
      }
    } else if (node.kind === 'array' && node.items !== undefined) {
      visit(node.items, `${pointer}/${ARRAY_ITEMS_TOKEN}`);
    }
  };
  visit(shape, '');
  return into;
}

/** Declared properties that none of `shapes` showed, code-unit order. */
export function unobservedPointers(schema: CompiledSchema | Record<string, unknown>, shapes: Iterable<SchemaShape>): string[] {
  const seen = new Set<string>();
  for (const shape of shapes) observedPointers(shape, seen);
  return declaredPointers(schema).filter((pointer) => !seen.has(pointer));
}
