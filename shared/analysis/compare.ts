// Structural comparison of an observed payload shape with its operation's schema
// (00-decisions §5). Shapes carry no values, so only kinds and members are compared.
//
// Conventions of the findings (docs/decisions/analysis.md "Findings"):
// - `path`: RFC 6901 pointer into the payload, `""` for the root, `-` for every item of an array
//   (one finding covers all items: `/lines/-/sku`).
// - `type_mismatch`: expected = the allowed kinds (compile.ts describeKinds: `string|null`,
//   `number`, …), observed = the shape kind. Only the topmost mismatch: nothing below it.
// - `undeclared_field`: a field outside `properties`; expected `forbidden` (with `forbidden:
//   true`) under `additionalProperties: false`, else `undeclared`; observed = the field's kind.
//   Nothing below it, except that an `additionalProperties` schema is compared with the field.
// - `required_field_missing`: expected = the property's kinds (`any` when it declares none or
//   is not in `properties`), observed = `absent`.
// Besides the array it returns, the walk allocates nothing until it finds something: the path
// is kept as a stack of raw field names and written out only for a finding.

import { escapeToken } from '../contracts/jsonPointer.js';
import { KIND_ARRAY, KIND_OBJECT, compareText, kindBit, type CompiledSchema, type SchemaNode } from './compile.js';
import type { Finding, ObservedOperation, SchemaShape } from './types.js';
import { operationKey } from '../contracts/operationKey.js';

/** Token of "every item" in a finding path. */
export const ARRAY_ITEMS_TOKEN = '-';

// compareShape is synchronous and never re-entered, so one stack serves every call.
const tokens: string[] = [];
const IDLE: Finding[] = [];
let findings: Finding[] = IDLE;

/** The findings of `shape` against `schema`, sorted by path, then kind. */
export function compareShape(schema: CompiledSchema, shape: SchemaShape): Finding[] {
  const out: Finding[] = [];
  findings = out;
  try {
    walk(schema.root, shape, 0);
  } finally {
    findings = IDLE;
  }
  if (out.length > 1) out.sort(byPathThenKind);
  return out;
}

function walk(node: SchemaNode, shape: SchemaShape, depth: number): void {
  // Defensive against a malformed shape: an unknown kind is a mismatch unless anything goes.
  const kind = shape == null ? undefined : shape.kind;
  const bit = kindBit(kind);
  if ((node.kinds & bit) === 0) {
    findings.push({ kind: 'type_mismatch', path: pathOf(depth), expected: node.expected, observed: String(kind) });
    return;
  }
  if (bit === KIND_OBJECT) {
    const fields = (shape as { fields?: Record<string, SchemaShape> | null }).fields;
    if (node.hasObjectRules) walkObject(node, fields == null ? undefined : fields, depth);
  } else if (bit === KIND_ARRAY) {
    const items = (shape as { items?: SchemaShape | null }).items;
    if (items != null && node.hasItems) {
      tokens[depth] = ARRAY_ITEMS_TOKEN;
      walk(node.items(), items, depth + 1);
    }
  }
}

function walkObject(node: SchemaNode, fields: Record<string, SchemaShape> | undefined, depth: number): void {
  const index = node.propertyIndex;
  // Required declared properties seen: a count, and a bit per slot for the first 32, so that
  // finding the missing ones needs no second lookup into the shape (nor any allocation).
  let requiredSeen = 0;
  let seenBits = 0;
  if (fields !== undefined) {
    for (const name in fields) {
      if (!Object.hasOwn(fields, name)) continue;
      const field = fields[name];
      const position = index.get(name);
      tokens[depth] = name;
      if (position !== undefined) {
        const slot = node.propertyRequiredSlot[position];
        if (slot >= 0) {
          requiredSeen++;
          if (slot < 32) seenBits |= 1 << slot;
        }
        walk(node.property(position), field, depth + 1);
      } else if (node.checksUndeclared) {
        const forbidden = node.forbidsAdditional;
        findings.push({
          kind: 'undeclared_field',
          path: pathOf(depth + 1),
          expected: forbidden ? 'forbidden' : 'undeclared',
          observed: String(field?.kind),
          forbidden,
        });
        if (node.hasAdditionalSchema) walk(node.additional(), field, depth + 1);
      }
    }
  }
  const declared = node.requiredDeclared;
  if (requiredSeen < declared.length) {
    for (let slot = 0; slot < declared.length; slot++) {
      const name = node.propertyNames[declared[slot]];
      const seen = slot < 32 ? (seenBits & (1 << slot)) !== 0 : fields !== undefined && Object.hasOwn(fields, name);
      if (!seen) missing(name, node.property(declared[slot]).expected, depth);
    }
  }
  for (const name of node.requiredUndeclared) {
    if (fields === undefined || !Object.hasOwn(fields, name)) missing(name, 'any', depth);
  }
}

function missing(name: string, expected: string, depth: number): void {
  tokens[depth] = name;
  findings.push({ kind: 'required_field_missing', path: pathOf(depth + 1), expected, observed: 'absent' });
}

function pathOf(depth: number): string {
  let path = '';
  for (let i = 0; i < depth; i++) {
    const token = tokens[i];
    path += `/${token.indexOf('~') === -1 && token.indexOf('/') === -1 ? token : escapeToken(token)}`;
  }
  return path;
}

function byPathThenKind(a: Finding, b: Finding): number {
  return (
    compareText(a.path, b.path) || compareText(a.kind, b.kind) || compareText(a.expected, b.expected) || compareText(a.observed, b.observed)
  );
}

/** The finding of an observation whose operation the contract does not declare. */
export function unknownOperationFinding(observed: ObservedOperation): Finding {
  return {
    kind: 'unknown_operation',
    path: '',
    expected: 'a contract operation',
    observed: observedOperationKey(observed),
  };
}

/** An observation's own operationKey: 00-decisions §4 with its exact status code. */
export function observedOperationKey(observed: ObservedOperation): string {
  return operationKey(observed.method, observed.routeTemplate, observed.payloadLocation, String(observed.statusCode));
}

/** The finding of an observation with statusCode 0 (no protocol response). */
export function transportErrorFinding(): Finding {
  return { kind: 'transport_error', path: '', expected: 'a protocol response', observed: 'statusCode 0' };
}
