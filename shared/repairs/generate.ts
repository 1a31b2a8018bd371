// Repair candidates (00-decisions §6): the smallest JSON Patch (RFC 6902) against an operation's
// self-contained schema that makes every fixture of a replay dataset conform under the analyzer's
// own comparison (compileSchema with the operation's unchecked pointers, then compareShape).
//
// The findings decide every change, and nothing else is touched:
// - `undeclared_field` → the property is added (optional) with a schema of the kinds seen there;
// - `type_mismatch` → the `type` of each schema object that rejects the kind is widened; an
//   `enum` there takes `null`/`false`/`true` when that is what was seen, and is dropped for a
//   kind whose values a shape does not carry (`enum_widened`);
// - `required_field_missing` → the name leaves `required` (the member goes when it empties).
// A node reached through `$ref` is the definition it names, so the definition is patched. A
// widened node may reveal findings below it that the topmost mismatch hid, so the comparison
// runs again on the patched schema until every fixture conforms or nothing more can be done.

import jsonPatch from 'fast-json-patch';
import { compareShape } from '../analysis/compare.js';
import { KIND_BOOLEAN, KIND_NULL, KIND_UNKNOWN, compileSchema, describeKinds, kindBit, kindsOf } from '../analysis/compile.js';
import type { SchemaShape } from '../analysis/types.js';
import { escapeToken, isPlainObject, unescapeToken } from '../contracts/jsonPointer.js';
import { fingerprint } from '../fingerprint.js';
import { compareBytes, describeShapes, typeNames, typeValue } from './describe.js';
import { SchemaLocator, type SchemaMember } from './locate.js';
import type { JsonPatchOperation, RepairCandidate, RepairChange, RepairChangeKind, ReplayFixture } from './types.js';

type Schema = Record<string, unknown>;

/** Each round reaches at least one level deeper than the last; shapes are at most 32 levels deep. */
const MAX_ROUNDS = 34;

const KNOWN_TYPES = new Set(['object', 'array', 'string', 'number', 'integer', 'boolean', 'null']);

/** The fixtures and payload paths that needed one edit. */
class Evidence {
  readonly fixtures = new Set<number>();
  readonly paths = new Set<string>();

  add(fixture: number, path: string): void {
    this.fixtures.add(fixture);
    this.paths.add(path);
  }
}

/** A schema object that rejects kinds that were seen (`shapes`: what was seen, for a `false` to be replaced). */
interface KindNeed {
  member: SchemaMember;
  observed: number;
  shapes: SchemaShape[];
  evidence: Evidence;
}

/** A property to declare: the shapes seen for it, and whether `additionalProperties: false` forbade it. */
interface FieldNeed {
  shapes: SchemaShape[];
  forbidden: boolean;
  evidence: Evidence;
}

/** An object schema that needs properties declared or names out of `required`. */
interface ObjectNeed {
  member: SchemaMember & { value: Schema };
  added: Map<string, FieldNeed>;
  relaxed: Map<string, Evidence>;
}

interface Needs {
  kinds: Map<string, KindNeed>;
  objects: Map<string, ObjectNeed>;
}

interface PendingChange {
  kind: RepairChangeKind;
  schemaPath: string;
  before: string;
  after: string;
  evidence: Evidence;
}

/**
 * The repair candidate of `schema` (as loadOperations returns it) for `fixtures`. The input is not
 * modified. When every fixture already conforms, the patch is empty.
 */
export function generateRepair(
  schema: Record<string, unknown>,
  uncheckedPointers: readonly string[],
  fixtures: readonly ReplayFixture[],
): RepairCandidate {
  const working = jsonPatch.deepClone(schema) as Schema;
  const patch: JsonPatchOperation[] = [];
  const pending = new Map<string, PendingChange>();
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const { ops, changes } = plan(collect(working, uncheckedPointers, fixtures));
    if (ops.length === 0) break;
    jsonPatch.applyPatch(working, jsonPatch.deepClone(ops), true, true);
    patch.push(...ops);
    for (const [key, change] of changes) merge(pending, key, change);
  }
  // The candidate is the library's application of the whole patch to the schema as given.
  const patched =
    patch.length === 0 ? working : (jsonPatch.applyPatch(schema, jsonPatch.deepClone(patch), true, false).newDocument as Schema);
  return {
    baseSchemaFingerprint: fingerprint(schema),
    patch,
    schema: patched,
    schemaFingerprint: fingerprint(patched),
    changes: [...pending.values()].map(toChange).sort(byChangeOrder),
  };
}

/** What the analyzer's comparison finds in every fixture, as edits of schema objects. */
function collect(working: Schema, uncheckedPointers: readonly string[], fixtures: readonly ReplayFixture[]): Needs {
  const compiled = compileSchema(working, uncheckedPointers);
  const locator = new SchemaLocator(working);
  const needs: Needs = { kinds: new Map(), objects: new Map() };
  fixtures.forEach((fixture, index) => {
    for (const finding of compareShape(compiled, fixture.shape)) {
      if (finding.kind === 'type_mismatch') {
        const at = locator.at(fixture.shape, finding.path);
        if (at !== undefined) needKind(needs, at.members, at.shape, index, finding.path);
        continue;
      }
      if (finding.kind !== 'undeclared_field' && finding.kind !== 'required_field_missing') continue;
      const slash = finding.path.lastIndexOf('/');
      const at = locator.at(fixture.shape, finding.path.slice(0, slash));
      if (at === undefined) continue;
      const name = unescapeToken(finding.path.slice(slash + 1));
      if (finding.kind === 'undeclared_field') {
        const fields = (at.shape as { fields?: Record<string, SchemaShape> | null }).fields;
        if (fields == null || !Object.hasOwn(fields, name)) continue;
        needProperty(needs, at.members, name, fields[name], finding.forbidden === true, index, finding.path);
      } else {
        needRelaxed(needs, at.members, name, index, finding.path);
      }
    }
  });
  return needs;
}

function needKind(needs: Needs, members: readonly SchemaMember[], shape: SchemaShape, fixture: number, path: string): void {
  const bit = kindBit(shape.kind);
  // No subset `type` names a kind outside 00-decisions §5.
  if (bit === KIND_UNKNOWN) return;
  for (const member of members) {
    if (member.value !== false && (kindsOf(member.value) & bit) !== 0) continue;
    if (!patchable(member.pointer)) continue;
    let need = needs.kinds.get(member.pointer);
    if (need === undefined) {
      need = { member, observed: 0, shapes: [], evidence: new Evidence() };
      needs.kinds.set(member.pointer, need);
    }
    need.observed |= bit;
    if (member.value === false) need.shapes.push(shape);
    need.evidence.add(fixture, path);
  }
}

function needProperty(
  needs: Needs,
  members: readonly SchemaMember[],
  name: string,
  shape: SchemaShape,
  forbidden: boolean,
  fixture: number,
  path: string,
): void {
  const holder = propertyHolder(members);
  if (holder === undefined || !patchable(`${holder.pointer}/properties/${escapeToken(name)}`)) return;
  const need = objectNeed(needs, holder);
  let field = need.added.get(name);
  if (field === undefined) {
    field = { shapes: [], forbidden, evidence: new Evidence() };
    need.added.set(name, field);
  }
  field.shapes.push(shape);
  field.evidence.add(fixture, path);
}

function needRelaxed(needs: Needs, members: readonly SchemaMember[], name: string, fixture: number, path: string): void {
  // The conjunction requires what any member requires: the name leaves every `required` that lists it.
  for (const member of members) {
    if (member.value === false || !patchable(member.pointer)) continue;
    const required = Object.hasOwn(member.value, 'required') ? member.value.required : undefined;
    if (!Array.isArray(required) || !required.includes(name)) continue;
    const need = objectNeed(needs, member as ObjectNeed['member']);
    let evidence = need.relaxed.get(name);
    if (evidence === undefined) {
      evidence = new Evidence();
      need.relaxed.set(name, evidence);
    }
    evidence.add(fixture, path);
  }
}

function objectNeed(needs: Needs, member: ObjectNeed['member']): ObjectNeed {
  let need = needs.objects.get(member.pointer);
  if (need === undefined) {
    need = { member, added: new Map(), relaxed: new Map() };
    needs.objects.set(member.pointer, need);
  }
  return need;
}

/**
 * The member that declares a new property: one that already has `properties` (else one whose
 * `additionalProperties` made the field undeclared); a definition (`$defs` member or the root)
 * before the schema that references it; then the first pointer in byte order.
 */
function propertyHolder(members: readonly SchemaMember[]): ObjectNeed['member'] | undefined {
  const objects = members.filter((member): member is ObjectNeed['member'] => member.value !== false);
  const declaring = objects.filter((member) => isPlainObject(member.value.properties) && Object.hasOwn(member.value, 'properties'));
  const candidates = declaring.length > 0 ? declaring : objects.filter((member) => Object.hasOwn(member.value, 'additionalProperties'));
  return candidates.sort(
    (a, b) => Number(!isDefinition(a.pointer)) - Number(!isDefinition(b.pointer)) || compareBytes(a.pointer, b.pointer),
  )[0];
}

function isDefinition(pointer: string): boolean {
  return pointer === '' || /^\/\$defs\/[^/]+$/.test(pointer);
}

/**
 * fast-json-patch refuses a path through `__proto__` (or `constructor/prototype`), whatever the
 * document: such a member cannot be patched, and the candidate's replay reports it.
 */
function patchable(pointer: string): boolean {
  const tokens = pointer.split('/').map(unescapeToken);
  return !tokens.some((token, i) => token === '__proto__' || (token === 'prototype' && tokens[i - 1] === 'constructor'));
}

/** One round's operations, target by target in byte order of their pointers, and its changes by key. */
function plan(needs: Needs): { ops: JsonPatchOperation[]; changes: Map<string, PendingChange> } {
  const ops: JsonPatchOperation[] = [];
  const changes = new Map<string, PendingChange>();
  const targets = [...new Set([...needs.kinds.keys(), ...needs.objects.keys()])].sort(compareBytes);
  for (const pointer of targets) {
    const kind = needs.kinds.get(pointer);
    if (kind !== undefined) widen(kind, ops, changes);
    const object = needs.objects.get(pointer);
    if (object !== undefined) {
      addProperties(object, ops, changes);
      relaxRequired(object, ops, changes);
    }
  }
  return { ops, changes };
}

function widen(need: KindNeed, ops: JsonPatchOperation[], changes: Map<string, PendingChange>): void {
  const { member, observed, evidence } = need;
  const pointer = member.pointer;
  if (member.value === false) {
    // The boolean schema `false` allows nothing: it becomes the description of what was seen.
    const described = describeShapes(need.shapes);
    ops.push({ op: 'replace', path: pointer, value: described });
    changes.set(`type\n${pointer}`, {
      kind: 'type_widened',
      schemaPath: pointer,
      before: 'nothing',
      after: describeKinds(kindsOf(described)),
      evidence,
    });
    return;
  }
  const value = member.value;
  const current = kindsOf(value);
  const hasType = Object.hasOwn(value, 'type');
  const widenedType = hasType ? typeValue(keepingUnknown(typeNames(current | observed), value.type)) : undefined;
  const values = Object.hasOwn(value, 'enum') && Array.isArray(value.enum) ? (value.enum as unknown[]) : undefined;
  if (values === undefined) {
    const type = widenedType ?? typeValue(typeNames(current | observed));
    ops.push({ op: hasType ? 'replace' : 'add', path: `${pointer}/type`, value: type });
    const after = describeKinds(kindsOf({ type }));
    changes.set(`type\n${pointer}`, { kind: 'type_widened', schemaPath: pointer, before: describeKinds(current), after, evidence });
    return;
  }
  const before = `${describeKinds(current)} (enum of ${values.length} values)`;
  let after: string;
  if ((observed & ~(KIND_NULL | KIND_BOOLEAN)) === 0) {
    // `null`, `false` and `true` are every value of their kinds: the enum can list them.
    const additions = [...(observed & KIND_BOOLEAN ? [false, true] : []), ...(observed & KIND_NULL ? [null] : [])].filter(
      (v) => !values.includes(v),
    );
    for (const addition of additions) ops.push({ op: 'add', path: `${pointer}/enum/-`, value: addition });
    if (widenedType !== undefined) ops.push({ op: 'replace', path: `${pointer}/type`, value: widenedType });
    const widened = [...values, ...additions];
    after = `${describeKinds(kindsOf(hasType ? { type: widenedType } : { enum: widened }))} (enum of ${widened.length} values)`;
  } else {
    // A shape carries no value, so the value seen cannot join the enum; `type` and `enum` side by
    // side would still refuse it in JSON Schema. The enum gives way to the types it allowed plus
    // the kinds seen: the smallest subset schema that accepts them.
    const type = widenedType ?? typeValue(typeNames(current | observed));
    ops.push({ op: 'remove', path: `${pointer}/enum` });
    ops.push({ op: hasType ? 'replace' : 'add', path: `${pointer}/type`, value: type });
    after = `${describeKinds(kindsOf({ type }))} (enum removed)`;
  }
  changes.set(`type\n${pointer}`, { kind: 'enum_widened', schemaPath: pointer, before, after, evidence });
}

/** The type names of a widened mask, keeping names the subset does not know (compile.ts ignores them) where they were. */
function keepingUnknown(names: string[], type: unknown): string[] {
  const existing = typeof type === 'string' ? [type] : Array.isArray(type) ? type : [];
  return [...names, ...existing.filter((name): name is string => typeof name === 'string' && !KNOWN_TYPES.has(name))];
}

function addProperties(need: ObjectNeed, ops: JsonPatchOperation[], changes: Map<string, PendingChange>): void {
  if (need.added.size === 0) return;
  const { pointer, value } = need.member;
  if (!(Object.hasOwn(value, 'properties') && isPlainObject(value.properties))) {
    ops.push({ op: Object.hasOwn(value, 'properties') ? 'replace' : 'add', path: `${pointer}/properties`, value: {} });
  }
  for (const name of [...need.added.keys()].sort(compareBytes)) {
    const field = need.added.get(name) as FieldNeed;
    const path = `${pointer}/properties/${escapeToken(name)}`;
    const described = describeShapes(field.shapes);
    ops.push({ op: 'add', path, value: described });
    changes.set(`property\n${path}`, {
      kind: 'property_added',
      schemaPath: path,
      before: field.forbidden ? 'forbidden' : 'undeclared',
      after: describeKinds(kindsOf(described)),
      evidence: field.evidence,
    });
  }
}

function relaxRequired(need: ObjectNeed, ops: JsonPatchOperation[], changes: Map<string, PendingChange>): void {
  if (need.relaxed.size === 0) return;
  const { pointer, value } = need.member;
  const required = value.required as unknown[];
  const leaving = (name: unknown): boolean => typeof name === 'string' && need.relaxed.has(name);
  if (required.every(leaving)) {
    ops.push({ op: 'remove', path: `${pointer}/required` });
  } else {
    // From the end, so that each index still names the entry it did.
    for (let i = required.length - 1; i >= 0; i--) if (leaving(required[i])) ops.push({ op: 'remove', path: `${pointer}/required/${i}` });
  }
  for (const [name, evidence] of need.relaxed) {
    changes.set(`required\n${pointer}\n${name}`, {
      kind: 'required_relaxed',
      schemaPath: pointer,
      before: 'required',
      after: 'optional',
      evidence,
    });
  }
}

/** A change edited again in a later round keeps its first `before` and takes the latest `after`. */
function merge(pending: Map<string, PendingChange>, key: string, change: PendingChange): void {
  const earlier = pending.get(key);
  if (earlier === undefined) {
    pending.set(key, { ...change, evidence: copyEvidence(change.evidence) });
    return;
  }
  earlier.after = change.after;
  if (change.kind === 'enum_widened') earlier.kind = 'enum_widened';
  for (const fixture of change.evidence.fixtures) earlier.evidence.fixtures.add(fixture);
  for (const path of change.evidence.paths) earlier.evidence.paths.add(path);
}

function copyEvidence(evidence: Evidence): Evidence {
  const copy = new Evidence();
  for (const fixture of evidence.fixtures) copy.fixtures.add(fixture);
  for (const path of evidence.paths) copy.paths.add(path);
  return copy;
}

function toChange(change: PendingChange): RepairChange {
  const paths = [...change.evidence.paths].sort(compareBytes);
  return {
    kind: change.kind,
    payloadPath: paths[0],
    schemaPath: change.schemaPath,
    before: change.before,
    after: change.after,
    fixtureCount: change.evidence.fixtures.size,
  };
}

function byChangeOrder(a: RepairChange, b: RepairChange): number {
  return compareBytes(a.schemaPath, b.schemaPath) || compareBytes(a.kind, b.kind) || compareBytes(a.payloadPath, b.payloadPath);
}
