// Where a finding's payload path lands in an operation schema: the stored schema objects (with
// their RFC 6901 pointers) whose conjunction compile.ts compares at that path. It follows
// compile.ts step by step — a `$ref` adds its target to the conjunction, a declared name
// descends into `properties` of every member that declares it, an undeclared one into the
// `additionalProperties` schemas (unless a member forbids), `-` into `items` — so a repair edits
// exactly the objects the comparison read.

import { ARRAY_ITEMS_TOKEN } from '../analysis/compare.js';
import type { SchemaShape } from '../analysis/types.js';
import { escapeToken, isPlainObject, parseReference, resolveTokens, unescapeToken } from '../contracts/jsonPointer.js';

type Schema = Record<string, unknown>;

/** One stored schema of a conjunction: an object, or the boolean schema `false`. */
export interface SchemaMember {
  pointer: string;
  value: Schema | false;
}

interface Entry {
  pointer: string;
  value: unknown;
}

/** The members at one payload path, and their children by container kind and token (computed once). */
class MemberNode {
  private readonly children = new Map<string, MemberNode>();

  constructor(
    private readonly root: Schema,
    readonly members: readonly SchemaMember[],
  ) {}

  child(container: 'object' | 'array', token: string): MemberNode {
    const key = `${container === 'array' ? 'a' : 'o'}${token}`;
    let node = this.children.get(key);
    if (node === undefined) {
      node = new MemberNode(this.root, expand(this.root, container === 'array' ? this.items() : this.property(token)));
      this.children.set(key, node);
    }
    return node;
  }

  private items(): Entry[] {
    const entries: Entry[] = [];
    for (const { pointer, value } of this.members) {
      if (value !== false && Object.hasOwn(value, 'items')) entries.push({ pointer: `${pointer}/items`, value: value.items });
    }
    return entries;
  }

  private property(name: string): Entry[] {
    const entries: Entry[] = [];
    for (const { pointer, value } of this.members) {
      if (value === false) continue;
      const properties = Object.hasOwn(value, 'properties') ? value.properties : undefined;
      if (isPlainObject(properties) && Object.hasOwn(properties, name)) {
        entries.push({ pointer: `${pointer}/properties/${escapeToken(name)}`, value: properties[name] });
      }
    }
    if (entries.length > 0) return entries;
    for (const { value } of this.members)
      if (value !== false && Object.hasOwn(value, 'additionalProperties') && value.additionalProperties === false) return [];
    for (const { pointer, value } of this.members) {
      if (value === false || !Object.hasOwn(value, 'additionalProperties')) continue;
      const additional = value.additionalProperties;
      if (additional !== undefined && additional !== true) entries.push({ pointer: `${pointer}/additionalProperties`, value: additional });
    }
    return entries;
  }
}

/** Resolves payload paths of findings against one schema (valid until the schema changes). */
export class SchemaLocator {
  private readonly top: MemberNode;

  constructor(root: Schema) {
    this.top = new MemberNode(root, expand(root, [{ pointer: '', value: root }]));
  }

  /**
   * The members at `path` (a finding's pointer, `-` for array items) and the shape there, walking
   * `shape` alongside; `undefined` when the shape has nothing at that path.
   */
  at(shape: SchemaShape, path: string): { members: readonly SchemaMember[]; shape: SchemaShape } | undefined {
    let node = this.top;
    let current: SchemaShape | undefined = shape;
    if (path === '') return { members: node.members, shape };
    for (const raw of path.slice(1).split('/')) {
      const token = unescapeToken(raw);
      if (current?.kind === 'object') {
        const fields: Record<string, SchemaShape> | null | undefined = (current as { fields?: Record<string, SchemaShape> | null }).fields;
        current = fields != null && Object.hasOwn(fields, token) ? fields[token] : undefined;
        node = node.child('object', token);
      } else if (current?.kind === 'array' && token === ARRAY_ITEMS_TOKEN) {
        current = (current as { items?: SchemaShape }).items;
        node = node.child('array', token);
      } else {
        return undefined;
      }
    }
    return current === undefined ? undefined : { members: node.members, shape: current };
  }
}

/** The conjunction of `entries`, each followed through its `$ref` chain; a pointer already in it adds nothing (compile.ts expand). */
function expand(root: Schema, entries: readonly Entry[]): SchemaMember[] {
  const members: SchemaMember[] = [];
  const seen = new Set<string>();
  const visit = (pointer: string, value: unknown): void => {
    if (value !== false && !isPlainObject(value)) return;
    if (seen.has(pointer)) return;
    seen.add(pointer);
    members.push({ pointer, value });
    const ref = value !== false && Object.hasOwn(value, '$ref') ? value.$ref : undefined;
    if (typeof ref !== 'string') return;
    const parsed = parseReference(ref);
    if (parsed.kind === 'local') visit(parsed.pointer, resolveTokens(root, parsed.tokens));
  };
  for (const entry of entries) visit(entry.pointer, entry.value);
  return members;
}
