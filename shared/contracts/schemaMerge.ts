// Flattens a conjunction of stored subset schemas (the members of an `allOf`, with the keywords
// beside it) into one subset schema (00-decisions §7). The rules are those of the merge libraries
// the issue names (json-schema-merge-allof, allof-merge): `type` and `enum` intersected,
// `properties` merged name by name, `required` united, `items` merged, `additionalProperties:
// false` in one member forbids what that member does not declare. One rule differs, because
// both libraries reject it as incompatible although JSON Schema does not: `number` ∧ `integer`
// is `integer`. Where the members allow no common type or value, no subset schema expresses the
// result usefully (it would reject every payload because of a mistake in the document), so the
// merged schema is left unchecked. `$ref` members are inlined from their stored definitions; a
// definition still being built (recursion through the allOf) stays a reference when it is the
// only one, and is left unchecked otherwise.

import { canonicalJson } from '../fingerprint.js';
import { escapeToken, isPlainObject, setOwn } from './jsonPointer.js';

export interface MergeContext {
  /** The stored schema a stored `$ref` names, or null when it cannot be inlined yet (recursion). */
  definition(ref: string): { pointer: string; schema: unknown } | null;
  /** Whether `schema` carries unchecked notes (then it is not an empty schema to drop). */
  hasNotes(schema: object): boolean;
  /** Copies the unchecked notes of `from` onto `to`. */
  carryNotes(from: object, to: object): void;
  /** The stand-in for a conjunction no subset schema expresses; `path` is relative to the allOf. */
  unexpressible(path: string, reason: string): Record<string, unknown>;
  /** Counts one step of work against the import's budget (throws past it). */
  step(): void;
}

// Each level of merged properties is one level of the payload; deeper than a shape can be
// (shared/envelope SHAPE_MAX_DEPTH is 32) is never compared anyway.
const MAX_MERGE_DEPTH = 64;

type Schema = Record<string, unknown>;

/**
 * The subset schema equivalent to the conjunction of `parts`. Without `inline`, a single part
 * that constrains anything is returned as it is (a lone `{$ref}` stays a reference).
 */
export function mergeSchemas(parts: readonly unknown[], context: MergeContext, inline: boolean): unknown {
  const relevant = parts.filter((part) => !(isPlainObject(part) && Object.keys(part).length === 0 && !context.hasNotes(part)));
  if (!inline && relevant.length === 1) return relevant[0];
  return new Merge(context).merge(relevant, '', 0);
}

/** `schema` ∨ null, written into a schema `mergeSchemas(…, true)` returned (never shared). */
export function withNull(schema: unknown): unknown {
  if (schema === false) return { type: 'null' };
  if (!isPlainObject(schema)) return schema;
  const type = schema.type;
  if (typeof type === 'string' && type !== 'null') schema.type = [type, 'null'].sort(compare);
  else if (Array.isArray(type) && !type.includes('null')) schema.type = [...type, 'null'].sort(compare);
  if (Array.isArray(schema.enum) && !schema.enum.includes(null)) schema.enum = [...schema.enum, null];
  return schema;
}

class Merge {
  /** Sets of inlined definitions being merged on the current path (recursion guard). */
  private readonly active = new Set<string>();
  /**
   * Conjunctions already merged, by the identity of their parts: members of merged definitions
   * share sub-schemas, so without it two members a level would merge 2^depth times.
   */
  private readonly merged = new Map<string, unknown>();
  private readonly ids = new WeakMap<object, number>();
  private nextId = 0;

  constructor(private readonly context: MergeContext) {}

  merge(parts: readonly unknown[], path: string, depth: number): unknown {
    const key = parts.map((part) => this.idOf(part)).join(',');
    if (this.merged.has(key)) return this.merged.get(key);
    const result = this.mergeOnce(parts, path, depth);
    this.merged.set(key, result);
    return result;
  }

  private idOf(part: unknown): string {
    if (typeof part !== 'object' || part === null) return JSON.stringify(part) ?? 'undefined';
    let id = this.ids.get(part);
    if (id === undefined) {
      id = ++this.nextId;
      this.ids.set(part, id);
    }
    return String(id);
  }

  private mergeOnce(parts: readonly unknown[], path: string, depth: number): unknown {
    this.context.step();
    if (depth > MAX_MERGE_DEPTH) return this.context.unexpressible(path, 'allOf nested too deeply');
    const members: (Schema | false)[] = [];
    const sources: object[] = [];
    const kept: string[] = [];
    const inlined = new Set<string>();
    for (const part of parts) this.expand(part, members, sources, kept, inlined);
    if (members.includes(false)) return false;
    if (kept.length > 1) return this.context.unexpressible(path, 'allOf of recursive references');
    const key = [...inlined].sort(compare).join('\n');
    if (inlined.size > 0 && this.active.has(key)) return this.context.unexpressible(path, 'recursive allOf');
    this.active.add(key);
    try {
      return this.combine(members as Schema[], sources, kept[0], path, depth);
    } finally {
      this.active.delete(key);
    }
  }

  private combine(members: Schema[], sources: object[], ref: string | undefined, path: string, depth: number): unknown {
    const out: Schema = {};
    if (ref !== undefined) out.$ref = ref;

    let types: string[] | undefined;
    for (const member of members) {
      const own = typesOf(member.type);
      if (own !== undefined) types = types === undefined ? own : intersectTypes(types, own);
    }
    if (types !== undefined) {
      if (types.length === 0) {
        const listed = members
          .map((member) => typesOf(member.type))
          .filter((list) => list !== undefined)
          .map((list) => list.join('|'));
        return this.context.unexpressible(path, `allOf members allow no common type (${listed.join(', ')})`);
      }
      out.type = types.length === 1 ? types[0] : types;
    }

    let values: unknown[] | undefined;
    for (const member of members) {
      if (!Array.isArray(member.enum)) continue;
      if (values === undefined) values = member.enum;
      else {
        const allowed = new Set(member.enum.map(canonicalJson));
        values = values.filter((value) => allowed.has(canonicalJson(value)));
      }
    }
    if (values !== undefined) {
      if (values.length === 0) return this.context.unexpressible(path, 'allOf members allow no common enum value');
      out.enum = values;
    }

    const required = new Set<string>();
    for (const member of members) if (Array.isArray(member.required)) for (const name of member.required as string[]) required.add(name);
    if (required.size > 0) out.required = [...required].sort(compare);

    const objectMembers = members.filter((member) => isPlainObject(member.properties) || Object.hasOwn(member, 'additionalProperties'));
    const names = new Set<string>();
    for (const member of objectMembers)
      if (isPlainObject(member.properties)) for (const name of Object.keys(member.properties)) names.add(name);
    if (members.some((member) => isPlainObject(member.properties))) {
      const properties: Schema = {};
      for (const name of [...names].sort(compare)) {
        const parts: unknown[] = [];
        let forbidden = false;
        for (const member of objectMembers) {
          const declared = member.properties as Schema | undefined;
          if (declared !== undefined && Object.hasOwn(declared, name)) parts.push(declared[name]);
          else if (member.additionalProperties === false) forbidden = true;
          else if (isPlainObject(member.additionalProperties)) parts.push(member.additionalProperties);
        }
        if (forbidden) continue;
        setOwn(properties, name, parts.length === 1 ? parts[0] : this.merge(parts, `${path}/properties/${escapeToken(name)}`, depth + 1));
      }
      out.properties = properties;
    }

    const items = members.filter((member) => Object.hasOwn(member, 'items')).map((member) => member.items);
    if (items.length > 0) out.items = items.length === 1 ? items[0] : this.merge(items, `${path}/items`, depth + 1);

    if (members.some((member) => member.additionalProperties === false)) out.additionalProperties = false;
    else {
      const additional = members.map((member) => member.additionalProperties).filter(isPlainObject);
      if (additional.length > 0)
        out.additionalProperties =
          additional.length === 1 ? additional[0] : this.merge(additional, `${path}/additionalProperties`, depth + 1);
    }

    for (const source of sources) this.context.carryNotes(source, out);
    return out;
  }

  /** Adds `part`, and what its `$ref` names, to the members of the conjunction. */
  private expand(part: unknown, members: (Schema | false)[], sources: object[], kept: string[], inlined: Set<string>): void {
    if (part === false) {
      members.push(false);
      return;
    }
    if (!isPlainObject(part)) return;
    sources.push(part);
    const { $ref: ref, ...rest } = part;
    if (typeof ref === 'string') {
      const definition = this.context.definition(ref);
      if (definition === null) {
        if (!kept.includes(ref)) kept.push(ref);
      } else if (!inlined.has(definition.pointer)) {
        inlined.add(definition.pointer);
        this.expand(definition.schema, members, sources, kept, inlined);
      }
    }
    members.push(rest);
  }
}

function typesOf(value: unknown): string[] | undefined {
  if (typeof value === 'string') return [value];
  return Array.isArray(value) ? (value as string[]) : undefined;
}

/** Types allowed by both lists; an integer is a number, so `number` ∧ `integer` is `integer`. */
function intersectTypes(a: readonly string[], b: readonly string[]): string[] {
  const out = new Set<string>();
  for (const type of a) {
    if (b.includes(type)) out.add(type);
    else if (type === 'integer' && b.includes('number')) out.add('integer');
    else if (type === 'number' && b.includes('integer')) out.add('integer');
  }
  return [...out].sort(compare);
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
