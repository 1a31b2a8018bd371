// The candidate's change as edits of the registered document: each JSON Patch path points into the
// operation's self-contained schema, where `$defs/<Name>` came from a `$ref` of the document; the
// walk follows it in the stored schema and the document side by side to the schema object the
// vendor wrote, then writes the keyword the patch changed, taken from the patched schema, in the
// document's own dialect. A node the import produced by flattening (`allOf`, `oneOf` of one
// schema) or by moving shared sub-schemas has no single place in the document: the export is
// refused with `repair_export_operation_unsupported` rather than given a wrong Overlay.
//
// Overlay 1.0.0 merges an `update` into its target recursively and appends to arrays, and removes
// only objects and arrays: so a keyword whose value is an array or an object (`required`, `enum`,
// a `type` list, `items`) is removed first and set whole by the next action, and a primitive
// (`type: string`, `nullable`) is set by an update of the schema object holding it.

import { isPlainObject, parseReference, pointerOf, resolveTokens, setOwn, unescapeToken } from '../../contracts/jsonPointer.js';
import { compare } from '../../contracts/schemaSubset.js';
import { canonicalJson } from '../../fingerprint.js';
import type { RepairCandidate } from '../types.js';
import { type SchemaDialect, type SchemaSource, unsupported } from './schemaSource.js';

/** One Overlay action, its target given as the tokens of the node it selects in the registered document. */
export interface PlannedAction {
  tokens: string[];
  description: string;
  update?: Record<string, unknown>;
  remove?: true;
}

export interface OverlayPlan {
  actions: PlannedAction[];
  /** JSON Pointers (in the registered document) of the schema objects the actions edit, sorted. */
  edited: string[];
  /** Forms written outside the document's own dialect (a `type` list in OpenAPI 3.0), one sentence each. */
  notes: string[];
}

/** A place the patch edits: a schema node (stored and in the document) and the keyword changed there. */
interface Site {
  compiled: string[];
  source: string[];
  keyword: string;
  /** For `properties`: the member added, replaced or removed; absent when the whole keyword is. */
  member?: string;
}

interface NodeEdit {
  compiled: string[];
  source: string[];
  keywords: Set<string>;
  members: Set<string>;
}

const FLATTENED = ['allOf', 'anyOf', 'oneOf'];

export function planOverlay(baseSchema: Record<string, unknown>, candidate: RepairCandidate, source: SchemaSource): OverlayPlan {
  const edits = new Map<string, NodeEdit>();
  for (const operation of candidate.patch) {
    const site = siteOf(operation.path, baseSchema, source);
    const key = pointerOf(site.source);
    let edit = edits.get(key);
    if (edit === undefined) {
      edit = { compiled: site.compiled, source: site.source, keywords: new Set(), members: new Set() };
      edits.set(key, edit);
    } else if (pointerOf(edit.compiled) !== pointerOf(site.compiled)) {
      // Two stored nodes from one schema object of the document: one was copied by a merge.
      throw unsupported();
    }
    if (site.member !== undefined) edit.members.add(site.member);
    else edit.keywords.add(site.keyword);
  }
  const writer = new Writer(baseSchema, candidate.schema, source);
  const planned = [...edits.values()].sort((a, b) => compare(pointerOf(a.source), pointerOf(b.source))).map((edit) => writer.write(edit));
  // A node inside a member or keyword that is written whole is written by that action already.
  const whole = planned.flatMap((entry) => entry.whole);
  const kept = planned.filter((entry) => !whole.some((prefix) => pointerOf(entry.source).startsWith(`${prefix}/`)));
  return {
    actions: kept.flatMap((entry) => entry.actions),
    edited: kept.map((entry) => pointerOf(entry.source)),
    notes: [...writer.notes].sort(compare),
  };
}

function parsePointer(path: string): string[] {
  if (path === '') return [];
  if (!path.startsWith('/')) throw unsupported();
  return path.slice(1).split('/').map(unescapeToken);
}

/** Walks a patch path down the stored schema and the document together, to the node it edits. */
function siteOf(path: string, baseSchema: Record<string, unknown>, source: SchemaSource): Site {
  const tokens = parsePointer(path);
  let node: unknown = baseSchema;
  let compiled: string[] = [];
  let at = source.root;
  let index = 0;
  if (tokens[0] === '$defs') {
    const defs = baseSchema.$defs;
    const name = tokens[1];
    if (tokens.length < 3 || !isPlainObject(defs) || !Object.hasOwn(defs, name)) throw unsupported();
    node = defs[name];
    compiled = ['$defs', name];
    at = source.definition(name);
  }
  if (compiled.length > 0) index = 2;
  for (;;) {
    const written = sourceNode(source, at, node);
    // The patch replaces a whole node: nothing in the document says which object that was.
    if (index >= tokens.length) throw unsupported();
    const key = tokens[index];
    const stored = node as Record<string, unknown>;
    if (key === 'properties' && index + 2 < tokens.length) {
      const name = tokens[index + 1];
      const members = stored.properties;
      const writtenMembers = written.properties;
      if (isPlainObject(members) && Object.hasOwn(members, name) && isPlainObject(members[name])) {
        if (!isPlainObject(writtenMembers) || !Object.hasOwn(writtenMembers, name)) throw unsupported();
        node = members[name];
        compiled = [...compiled, 'properties', name];
        at = [...at, 'properties', name];
        index += 2;
        continue;
      }
    }
    if ((key === 'items' || key === 'additionalProperties') && index + 1 < tokens.length && isPlainObject(stored[key])) {
      if (!isPlainObject(written[key])) throw unsupported();
      node = stored[key];
      compiled = [...compiled, key];
      at = [...at, key];
      index += 1;
      continue;
    }
    const member = key === 'properties' && index + 1 < tokens.length ? tokens[index + 1] : undefined;
    return { compiled, source: at, keyword: key, ...(member === undefined ? {} : { member }) };
  }
}

/**
 * The schema object of the document a stored node was read from. It must be that node's own
 * source: not a flattened composition, and a `$ref` there must still be a `$ref` in the stored node.
 */
function sourceNode(source: SchemaSource, at: string[], stored: unknown): Record<string, unknown> {
  const written = resolveTokens(source.document, at);
  if (!isPlainObject(written) || !isPlainObject(stored)) throw unsupported();
  if (FLATTENED.some((keyword) => Object.hasOwn(written, keyword))) throw unsupported();
  if (Object.hasOwn(written, '$ref') !== Object.hasOwn(stored, '$ref')) throw unsupported();
  return written;
}

interface WrittenEdit {
  source: string[];
  actions: PlannedAction[];
  /** Pointers (in the document) of members and keywords the edit writes whole. */
  whole: string[];
}

class Writer {
  readonly notes = new Set<string>();

  constructor(
    private readonly baseSchema: Record<string, unknown>,
    private readonly patched: Record<string, unknown>,
    private readonly source: SchemaSource,
  ) {}

  private get dialect(): SchemaDialect {
    return this.source.dialect;
  }

  write(edit: NodeEdit): WrittenEdit {
    const written = resolveTokens(this.source.document, edit.source) as Record<string, unknown>;
    const before = resolveTokens(this.baseSchema, edit.compiled);
    const after = resolveTokens(this.patched, edit.compiled);
    if (!isPlainObject(before) || !isPlainObject(after)) throw unsupported();
    // OpenAPI 3.0 and JSON Schema up to draft 07 ignore every member beside a `$ref`.
    if (Object.hasOwn(written, '$ref') && !this.dialect.refSiblings) throw unsupported();
    const at = pointerOf(edit.source);
    const removes: PlannedAction[] = [];
    const update: Record<string, unknown> = {};
    const whole: string[] = [];
    const members = new Set(edit.members);

    const set = (keyword: string, value: unknown): void => {
      const current = Object.hasOwn(written, keyword) ? written[keyword] : undefined;
      if (value !== undefined && current !== undefined && canonicalJson(current) === canonicalJson(value)) return;
      if (typeof current === 'object' && current !== null) {
        removes.push({
          tokens: [...edit.source, keyword],
          description:
            value === undefined
              ? `Remove \`${keyword}\``
              : `Remove \`${keyword}\`, set whole by the next action (an Overlay update would merge into it)`,
          remove: true,
        });
        whole.push(`${at}/${keyword}`);
      } else if (value === undefined && current !== undefined) {
        // Overlay 1.0.0 removes objects and arrays only.
        throw unsupported();
      }
      if (value !== undefined) update[keyword] = value;
    };

    for (const keyword of [...edit.keywords].sort(compare)) {
      switch (keyword) {
        case 'type': {
          const typed = this.typeOf(after.type, at);
          set('type', typed.type);
          if (this.dialect.nullable && typed.nullable !== (written.nullable === true)) update.nullable = typed.nullable;
          break;
        }
        case 'required':
        case 'enum':
          set(
            keyword,
            Array.isArray(after[keyword]) && (after[keyword] as unknown[]).length > 0 ? structuredClone(after[keyword]) : undefined,
          );
          if (keyword === 'enum' && Object.hasOwn(written, 'const')) throw unsupported();
          break;
        case 'items':
        case 'additionalProperties':
          set(
            keyword,
            Object.hasOwn(after, keyword)
              ? this.toSource(after[keyword], `${at}/${keyword}`, keyword === 'additionalProperties')
              : undefined,
          );
          break;
        case 'properties': {
          const old = isPlainObject(before.properties) ? before.properties : {};
          const next = isPlainObject(after.properties) ? after.properties : {};
          for (const name of new Set([...Object.keys(old), ...Object.keys(next)])) {
            const was = Object.hasOwn(old, name) ? canonicalJson(old[name]) : undefined;
            const is = Object.hasOwn(next, name) ? canonicalJson(next[name]) : undefined;
            if (was !== is) members.add(name);
          }
          break;
        }
        default:
          throw unsupported();
      }
    }

    const writtenMembers = Object.hasOwn(written, 'properties') ? written.properties : undefined;
    if (writtenMembers !== undefined && !isPlainObject(writtenMembers)) throw unsupported();
    const nextMembers = isPlainObject(after.properties) ? after.properties : {};
    const added: Record<string, unknown> = {};
    for (const name of [...members].sort(compare)) {
      const exists = writtenMembers !== undefined && Object.hasOwn(writtenMembers, name);
      const current = exists ? writtenMembers[name] : undefined;
      const memberTokens = [...edit.source, 'properties', name];
      if (exists && typeof current === 'object' && current !== null) {
        removes.push({ tokens: memberTokens, description: `Remove property \`${name}\``, remove: true });
      }
      whole.push(pointerOf(memberTokens));
      if (!Object.hasOwn(nextMembers, name)) {
        if (exists && (typeof current !== 'object' || current === null)) throw unsupported();
        continue;
      }
      setOwn(added, name, this.toSource(nextMembers[name], pointerOf(memberTokens), false));
    }

    const actions = [...removes];
    const addedNames = Object.keys(added);
    if (addedNames.length > 0 && writtenMembers === undefined) update.properties = added;
    const updated = Object.keys(update);
    if (updated.length > 0)
      actions.push({ tokens: edit.source, description: `Set ${updated.map((key) => `\`${key}\``).join(', ')}`, update });
    if (addedNames.length > 0 && writtenMembers !== undefined) {
      actions.push({
        tokens: [...edit.source, 'properties'],
        description: `Add ${addedNames.length === 1 ? 'property' : 'properties'} ${addedNames.map((name) => `\`${name}\``).join(', ')}`,
        update: added,
      });
    }
    return { source: edit.source, actions, whole };
  }

  /** A stored `type` as the document's dialect writes it. */
  private typeOf(type: unknown, at: string): { type: unknown; nullable: boolean } {
    if (type === undefined) return { type: undefined, nullable: false };
    const types = Array.isArray(type) ? (type as string[]) : [type as string];
    if (this.dialect.typeArrays) return { type: types.length === 1 ? types[0] : [...types], nullable: false };
    const listed = this.dialect.nullable ? types.filter((name) => name !== 'null') : types;
    const nullable = this.dialect.nullable && listed.length < types.length;
    if (listed.length === 0) {
      this.notes.add(
        `\`${at}\` gets \`type: null\`, a type ${this.dialectName()} does not have; this service reads it as JSON Schema does`,
      );
      return { type: 'null', nullable: false };
    }
    if (listed.length > 1) {
      this.notes.add(
        `\`${at}\` gets \`type: [${listed.join(', ')}]\`: ${this.dialectName()} has no list of types; this service reads it as JSON Schema and OpenAPI 3.1 do, a strict ${this.dialectName()} validator does not`,
      );
    }
    return { type: listed.length === 1 ? listed[0] : listed, nullable };
  }

  private dialectName(): string {
    return this.dialect.name === 'swagger-2.0' ? 'Swagger 2.0' : 'OpenAPI 3.0';
  }

  /** A stored sub-schema written for the document: `$defs` references back to the document's own. */
  private toSource(schema: unknown, at: string, isAdditional: boolean): unknown {
    if (schema === true) return isAdditional ? true : {};
    if (schema === false) {
      if (isAdditional || this.dialect.typeArrays) return false;
      throw unsupported();
    }
    if (!isPlainObject(schema)) throw unsupported();
    const keys = Object.keys(schema);
    if (Object.hasOwn(schema, '$ref') && keys.length > 1 && !this.dialect.refSiblings) throw unsupported();
    const out: Record<string, unknown> = {};
    for (const key of keys) {
      const value = schema[key];
      switch (key) {
        case '$ref':
          out.$ref = this.reference(value);
          break;
        case 'type': {
          const written = this.typeOf(value, at);
          out.type = written.type;
          if (written.nullable) out.nullable = true;
          break;
        }
        case 'properties': {
          if (!isPlainObject(value)) throw unsupported();
          const members: Record<string, unknown> = {};
          for (const name of Object.keys(value)) setOwn(members, name, this.toSource(value[name], `${at}/properties/${name}`, false));
          out.properties = members;
          break;
        }
        case 'items':
          out.items = this.toSource(value, `${at}/items`, false);
          break;
        case 'additionalProperties':
          out.additionalProperties = this.toSource(value, `${at}/additionalProperties`, true);
          break;
        case 'required':
        case 'enum':
          out[key] = structuredClone(value);
          break;
        default:
          throw unsupported();
      }
    }
    return out;
  }

  /** A stored `#/$defs/<name>` (or `#`, the root of a JSON Schema) as a reference into the document. */
  private reference(ref: unknown): string {
    const parsed = typeof ref === 'string' ? parseReference(ref) : null;
    if (parsed?.kind !== 'local') throw unsupported();
    if (parsed.tokens.length === 0 && this.source.root.length === 0) return this.source.reference([]);
    if (parsed.tokens.length !== 2 || parsed.tokens[0] !== '$defs') throw unsupported();
    return this.source.reference(this.source.definition(parsed.tokens[1]));
  }
}
