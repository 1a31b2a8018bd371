// Reduces a source schema to the subset the Contract API stores (01 "Import rules" 4–5):
// `type`, `properties`, `required`, `items`, `enum`, `additionalProperties`, plus `$ref`/`$defs`
// for local references. Every reachable referenced schema is copied once into `$defs`, so a
// recursive schema is stored as a finite graph and its import terminates. `allOf` is flattened
// (schemaMerge.ts). What lies outside the subset is either a problem (strict: a `json-schema`
// contract is refused) or, for published OpenAPI documents (00-decisions §7), left unchecked:
// the keyword is dropped and the stored sub-schema that held it is noted, so the analyzer
// reports nothing its dropped keyword could have allowed.

import { childPointer, escapeToken, fragmentRef, isPlainObject, parseReference, resolveTokens, setOwn } from './jsonPointer.js';
import { invalidContract } from './invalidContract.js';
import { quote } from './operationKey.js';
import { mergeSchemas, withNull, type MergeContext } from './schemaMerge.js';
import { writeShared, type WrittenSchema } from './sharedSubschemas.js';
import type { UncheckedSubschema } from './types.js';

/** Something in a schema that keeps it from being imported; `at` points at the keyword. */
export interface SchemaProblem {
  at: string;
  reason: string;
}

export interface CompiledSchema {
  /** Set when `problems` is empty. */
  schema: Record<string, unknown> | null;
  /** Sorted by `at`, then `reason`. Always empty when unsupported keywords are left unchecked. */
  problems: SchemaProblem[];
  /** Sub-schemas left unchecked, sorted by schemaPointer, pointer, reason. */
  unchecked: UncheckedSubschema[];
}

export interface SchemaCompilerOptions {
  /**
   * OpenAPI 3.0 ignores every member beside `$ref`; OpenAPI 3.1 and JSON Schema 2019-09/2020-12
   * apply them together with the reference.
   */
  refSiblingsApply: boolean;
  /** `#` is a schema only in a JSON Schema document, not in an OpenAPI document. */
  rootIsSchema: boolean;
  /** Container whose members keep their own name in `$defs` (`/components/schemas`, `/$defs`). */
  namedContainer: readonly string[];
  /**
   * 00-decisions §7: in a published OpenAPI document what lies outside the subset is left
   * unchecked (the rest is compared); in a `json-schema` contract it is a problem. Only strict
   * mode keeps `oneOf`/`anyOf` out entirely; lenient mode also reads `oneOf`/`anyOf` of one
   * schema and `null` as that schema or null.
   */
  leaveUnchecked: boolean;
}

const TYPES = new Set(['object', 'array', 'string', 'number', 'integer', 'boolean', 'null']);
// `allOf` is flattened and `oneOf`/`anyOf` handled in normalize(); `not` only narrows, and is dropped.
const COMPOSITION = new Set(['not']);
// Keywords that change which members or items exist, or apply schemas conditionally: dropping
// them would change the shape, so a schema that uses them is not imported.
const UNSUPPORTED = new Set([
  'patternProperties',
  'prefixItems',
  'unevaluatedProperties',
  'unevaluatedItems',
  'if',
  'then',
  'else',
  'dependentSchemas',
  'dependencies',
  '$dynamicRef',
  '$recursiveRef',
]);
// Members that describe a schema without constraining it.
const ANNOTATIONS = new Set(['title', 'description', 'deprecated', 'example', 'examples', '$comment', 'x-enum-varnames', 'x-enumNames']);
const SAFE_NAME = /^[A-Za-z0-9._-]+$/;
// Inline nesting this deep is not a real contract; the limit keeps recursion off the stack limit.
const MAX_DEPTH = 200;
// Enum and const values are stored verbatim; bounded so that serialising them cannot overflow.
const MAX_VALUE_DEPTH = 64;
/** Reduction steps one import may take: about 65 times the corpus's largest (docs/decisions/contracts.md). */
export const MAX_IMPORT_STEPS = 200_000;

interface Unit {
  schema: unknown;
  /** Pointers of the definitions the stored schema references. */
  refs: string[];
  problems: SchemaProblem[];
  /** Target pointer when the schema is nothing but a reference (for reference-only cycles). */
  pureRef: string | null;
  /** Accumulator.refused and .inlined of its reduction: the path it was reduced on mattered for them. */
  refused: Set<string>;
  inlined: Set<string>;
}

interface Accumulator {
  problems: SchemaProblem[];
  /** Units in progress that an inlining had to refuse (recursion), its own included. */
  refused: Set<string>;
  /** Units inlined, transitively. */
  inlined: Set<string>;
}

/** Why a stored sub-schema is left open: the source pointer of what was dropped there. */
interface Note {
  pointer: string;
  reason: string;
}

/**
 * Compiles schemas of one source document. Units are memoised by pointer, so a component shared
 * by many operations is reduced once per document. Inlining (allOf, "X or null") stops at a unit
 * already in progress on the path, so a reduction depends on that path: a unit is memoised only
 * when it refused nothing but itself, and reused only where none of the units it inlined is in
 * progress. So an operation's schema never depends on the other operations of the document.
 */
export class SchemaCompiler {
  private readonly units = new Map<string, Unit>();
  private readonly targets = new Map<string, unknown>();
  private readonly names = new Map<string, string>();
  private readonly refPointers = new Map<string, string>();
  /** Units being normalized (a `$ref` into one of them cannot be inlined by an allOf). */
  private readonly building = new Set<string>();
  /** Stored sub-schemas left open, by object identity (objects are shared by every use). */
  private readonly notes = new WeakMap<object, Note[]>();
  /** Objects written anew by writeShared → the reduced object each copies (whose notes apply). */
  private readonly origins = new WeakMap<object, object>();
  private readonly definitionsWritten = new WeakMap<Unit, WrittenSchema>();
  /** Reduction steps taken so far (the work the document's schemas cost). */
  steps = 0;

  constructor(
    private readonly document: unknown,
    private readonly options: SchemaCompilerOptions,
  ) {}

  /** The stored schema of the payload schema `node` found at `pointer`, or its problems. */
  compile(node: unknown, pointer: string): CompiledSchema {
    const root = this.unit(pointer, node);
    const problems = [...root.problems];
    const defs = new Map<string, Unit>();
    const pending = [...root.refs];
    const seen = new Set(pending);
    while (pending.length > 0) {
      const target = pending.pop() as string;
      const unit = this.unit(target, this.targets.get(target));
      defs.set(target, unit);
      problems.push(...unit.problems);
      for (const next of unit.refs) {
        if (!seen.has(next)) {
          seen.add(next);
          pending.push(next);
        }
      }
    }
    for (const [target, unit] of [[pointer, root] as const, ...defs]) {
      if (unit.pureRef !== null && this.loopsWithoutSchema(target)) {
        // The analyzer expands such a loop to nothing, so the schema accepts anything there.
        this.problem(
          { problems, refused: new Set(), inlined: new Set() },
          unit.schema as object,
          `${target}/$ref`,
          'reference cycle without a schema',
        );
      }
    }
    if (problems.length > 0) return { schema: null, problems: sortProblems(problems), unchecked: [] };

    const written = writeShared(root.schema, this.origins);
    const schema: Record<string, unknown> = written.schema === false ? { enum: [] } : { ...(written.schema as Record<string, unknown>) };
    const entries = new Map<string, unknown>(written.moved);
    for (const [target, unit] of defs) {
      const definition = this.writtenDefinition(unit);
      entries.set(this.nameOf(target), definition.schema);
      for (const [name, moved] of definition.moved) entries.set(name, moved);
    }
    if (entries.size > 0) {
      const $defs: Record<string, unknown> = {};
      for (const name of [...entries.keys()].sort(compare)) setOwn($defs, name, entries.get(name));
      schema.$defs = $defs;
    }
    return { schema, problems: [], unchecked: this.uncheckedOf(schema, root.schema) };
  }

  /** A definition as stored, written once per document (so every operation shares the same objects). */
  private writtenDefinition(unit: Unit): WrittenSchema {
    let written = this.definitionsWritten.get(unit);
    if (written === undefined) {
      written = writeShared(unit.schema, this.origins);
      this.definitionsWritten.set(unit, written);
    }
    return written;
  }

  /** Every noted sub-schema of a stored schema, by its pointer there (a shared one at each place). */
  private uncheckedOf(schema: Record<string, unknown>, original: unknown): UncheckedSubschema[] {
    const out = new Map<string, UncheckedSubschema>();
    const add = (node: unknown, schemaPointer: string): void => {
      for (const note of (isPlainObject(node) && this.notes.get(this.origins.get(node) ?? node)) || []) {
        out.set(`${schemaPointer}\u0000${note.pointer}\u0000${note.reason}`, { pointer: note.pointer, schemaPointer, reason: note.reason });
      }
    };
    const visit = (node: unknown, schemaPointer: string): void => {
      if (!isPlainObject(node)) return;
      add(node, schemaPointer);
      for (const key of ['properties', '$defs'] as const) {
        const members = node[key];
        if (Object.hasOwn(node, key) && isPlainObject(members)) {
          for (const name of Object.keys(members)) visit(members[name], `${schemaPointer}/${key}/${escapeToken(name)}`);
        }
      }
      if (Object.hasOwn(node, 'items')) visit(node.items, `${schemaPointer}/items`);
      if (Object.hasOwn(node, 'additionalProperties')) visit(node.additionalProperties, `${schemaPointer}/additionalProperties`);
    };
    add(original, '');
    visit(schema, '');
    return [...out.values()].sort(
      (a, b) => compare(a.schemaPointer, b.schemaPointer) || compare(a.pointer, b.pointer) || compare(a.reason, b.reason),
    );
  }

  /**
   * Records what keeps `at` out of the subset: a problem in strict mode, else a note on the
   * stored sub-schema `holder` that is left open. Returns `holder`.
   */
  private problem(acc: Accumulator, holder: object, at: string, reason: string): object {
    if (!this.options.leaveUnchecked) {
      acc.problems.push({ at, reason });
      return holder;
    }
    const list = this.notes.get(holder);
    if (!list) this.notes.set(holder, [{ pointer: at, reason }]);
    // A memoised unit's schema meets the same reference-cycle check once per operation using it.
    else if (!list.some((note) => note.pointer === at && note.reason === reason)) list.push({ pointer: at, reason });
    return holder;
  }

  private mergeContext(acc: Accumulator, at: string): MergeContext {
    return {
      definition: (ref) => {
        const target = this.refPointers.get(ref);
        if (target === undefined) return null;
        if (this.building.has(target)) {
          acc.refused.add(target);
          return null;
        }
        const unit = this.unit(target, target === '' ? this.document : this.targets.get(target));
        acc.inlined.add(target);
        for (const pointer of unit.inlined) acc.inlined.add(pointer);
        // Its refusal of itself happened inside itself, on any path.
        for (const pointer of unit.refused) if (pointer !== target) acc.refused.add(pointer);
        acc.problems.push(...unit.problems);
        return { pointer: target, schema: unit.schema };
      },
      hasNotes: (schema) => this.notes.has(schema),
      carryNotes: (from, to) => {
        for (const note of this.notes.get(from) ?? []) this.problem(acc, to, note.pointer, note.reason);
      },
      unexpressible: (path, reason) => this.problem(acc, {}, at, path === '' ? reason : `${reason} at ${path}`) as Record<string, unknown>,
      step: () => this.step(),
    };
  }

  private unit(pointer: string, node: unknown): Unit {
    const cached = this.units.get(pointer);
    if (cached && ![...cached.inlined].some((inlined) => this.building.has(inlined))) return cached;
    const acc: Accumulator = { problems: [], refused: new Set(), inlined: new Set() };
    this.building.add(pointer);
    let schema: unknown;
    try {
      schema = this.normalize(node, pointer, 0, acc);
    } finally {
      this.building.delete(pointer);
    }
    let pureRef: string | null = null;
    if (isPlainObject(schema) && Object.keys(schema).length === 1 && typeof schema.$ref === 'string') {
      pureRef = this.refPointers.get(schema.$ref) ?? null;
    }
    const unit: Unit = {
      schema,
      refs: this.referencedBy(schema),
      problems: acc.problems,
      pureRef,
      refused: acc.refused,
      inlined: acc.inlined,
    };
    if ([...acc.refused].every((refused) => refused === pointer)) this.units.set(pointer, unit);
    return unit;
  }

  /** The definitions a stored schema references (not those an allOf inlined), in first-seen order. */
  private referencedBy(schema: unknown): string[] {
    const out = new Set<string>();
    const visited = new Set<object>();
    const visit = (node: unknown): void => {
      if (!isPlainObject(node) || visited.has(node)) return;
      visited.add(node);
      const ref = node.$ref;
      if (typeof ref === 'string' && ref !== '#') {
        const target = this.refPointers.get(ref);
        if (target !== undefined) out.add(target);
      }
      if (isPlainObject(node.properties)) for (const name of Object.keys(node.properties)) visit(node.properties[name]);
      visit(node.items);
      visit(node.additionalProperties);
    };
    visit(schema);
    return [...out];
  }

  private loopsWithoutSchema(start: string): boolean {
    const visited = new Set<string>();
    let current: string | null = start;
    while (current !== null) {
      if (visited.has(current)) return true;
      visited.add(current);
      const unit = this.units.get(current);
      if (!unit) return false;
      current = unit.pureRef;
    }
    return false;
  }

  /**
   * Every schema the reduction visits and every conjunction it merges is one step; past the
   * budget the import is refused, whatever the document's shape (recursion through `allOf` can
   * defeat memoisation), so one document cannot hold a thread for long.
   */
  private step(): void {
    if (++this.steps > MAX_IMPORT_STEPS) {
      throw invalidContract(`the document's schemas need more than ${MAX_IMPORT_STEPS} reduction steps to import (the limit per import)`, [
        '',
      ]);
    }
  }

  private normalize(node: unknown, pointer: string, depth: number, acc: Accumulator): unknown {
    this.step();
    if (depth > MAX_DEPTH) return this.problem(acc, {}, pointer, 'schema nested too deeply');
    if (node === true) return {};
    if (node === false) return false;
    if (!isPlainObject(node)) return this.problem(acc, {}, pointer, 'invalid schema (not an object or boolean)');
    const out: Record<string, unknown> = {};
    if (Object.hasOwn(node, '$ref')) {
      const ref = this.reference(node.$ref, `${pointer}/$ref`);
      if (!this.options.refSiblingsApply) return typeof ref === 'string' ? { $ref: ref } : this.problem(acc, {}, ref.at, ref.reason);
      if (typeof ref === 'string') out.$ref = ref;
      else this.problem(acc, out, ref.at, ref.reason);
    }
    let types: string[] | undefined;
    let nullable = false;
    let constant: { value: unknown } | undefined;
    // Schemas that the node is the conjunction of besides its own keywords (allOf members, and
    // a `oneOf`/`anyOf` of one schema and null).
    const conjuncts: unknown[] = [];
    // Sorted, so that nothing (which recursive member is reduced first, the order of merged
    // members) depends on the order of members in the document: its fingerprint does not either.
    for (const key of Object.keys(node).sort(compare)) {
      const value = node[key];
      const at = childPointer(pointer, key);
      switch (key) {
        case 'type':
          types = this.types(value, pointer, out, acc);
          break;
        case 'nullable':
          nullable = value === true;
          break;
        case 'properties':
          if (!isPlainObject(value)) this.problem(acc, out, at, 'invalid properties (not an object)');
          else out.properties = this.properties(value, at, depth, acc);
          break;
        case 'required':
          if (!Array.isArray(value) || !value.every((name) => typeof name === 'string')) {
            this.problem(acc, out, at, 'invalid required (not an array of strings)');
          } else if (value.length > 0) {
            out.required = [...new Set(value as string[])].sort(compare);
          }
          break;
        case 'items':
          if (Array.isArray(value)) this.problem(acc, out, at, 'unsupported keyword items (array form)');
          // With `prefixItems`, `items` applies only after the prefix: comparing every item with it would be wrong.
          else if (!Object.hasOwn(node, 'prefixItems')) out.items = this.normalize(value, at, depth + 1, acc);
          break;
        case 'additionalProperties':
          out.additionalProperties = typeof value === 'boolean' ? value : this.normalize(value, at, depth + 1, acc);
          break;
        case 'enum':
          if (!Array.isArray(value)) this.problem(acc, out, at, 'invalid enum (not an array)');
          else if (nestingDepth(value) > MAX_VALUE_DEPTH) this.problem(acc, out, at, 'enum value nested too deeply');
          else out.enum = value;
          break;
        case 'const':
          if (nestingDepth(value) > MAX_VALUE_DEPTH) this.problem(acc, out, at, 'const value nested too deeply');
          else constant = { value };
          break;
        case 'allOf':
          if (!Array.isArray(value) || value.length === 0) this.problem(acc, out, at, 'invalid allOf (not a non-empty array)');
          else
            value.forEach((member, index) => {
              conjuncts.push(this.normalize(member, childPointer(at, index), depth + 1, acc));
            });
          break;
        case 'oneOf':
        case 'anyOf': {
          const alternative = this.options.leaveUnchecked ? nullableAlternative(value) : undefined;
          const values = this.options.leaveUnchecked ? valueAlternatives(value) : undefined;
          if (alternative !== undefined && !alternative.nullable)
            conjuncts.push(this.normalize((value as unknown[])[alternative.index], childPointer(at, alternative.index), depth + 1, acc));
          else if (alternative !== undefined)
            conjuncts.push(this.orNull((value as unknown[])[alternative.index], childPointer(at, alternative.index), depth, acc));
          else if (values !== undefined) conjuncts.push({ enum: values });
          else this.problem(acc, out, at, `composition keyword ${key}`);
          break;
        }
        default:
          if (COMPOSITION.has(key)) this.problem(acc, out, at, `composition keyword ${key}`);
          else if (UNSUPPORTED.has(key)) this.problem(acc, out, at, `unsupported keyword ${key}`);
        // Everything else is an annotation (description, format, example, title, default, …) or a
        // value constraint (minimum, pattern, maxLength, …) that a redacted shape cannot show.
      }
    }
    if (constant !== undefined && out.enum === undefined) out.enum = [constant.value];
    if (types !== undefined) out.type = types.length === 1 ? types[0] : types;
    if (conjuncts.length === 0) return nullable ? withNull(out) : out;
    // OpenAPI 3.0 documents write "this reference, or null" as `allOf: [{$ref}]` with
    // `nullable: true`; the null is applied to the flattened result (docs/decisions/contracts.md).
    const merged = mergeSchemas(
      [out, ...conjuncts],
      this.mergeContext(acc, pointer + (Object.hasOwn(node, 'allOf') ? '/allOf' : '')),
      nullable,
    );
    return nullable ? withNull(merged) : merged;
  }

  /** `schema` ∨ null: the alternative inlined, with `null` added to its types and values. */
  private orNull(schema: unknown, pointer: string, depth: number, acc: Accumulator): unknown {
    const inlined = mergeSchemas([this.normalize(schema, pointer, depth + 1, acc)], this.mergeContext(acc, pointer), true);
    // A recursive reference cannot be inlined, so null cannot be added to it: left unchecked.
    if (isPlainObject(inlined) && Object.hasOwn(inlined, '$ref')) return this.problem(acc, {}, pointer, 'nullable recursive reference');
    return withNull(inlined);
  }

  private properties(value: Record<string, unknown>, pointer: string, depth: number, acc: Accumulator): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const name of Object.keys(value).sort(compare)) {
      setOwn(out, name, this.normalize(value[name], childPointer(pointer, name), depth + 1, acc));
    }
    return out;
  }

  private types(value: unknown, pointer: string, holder: object, acc: Accumulator): string[] | undefined {
    const list = typeof value === 'string' ? [value] : value;
    if (!Array.isArray(list) || list.length === 0 || !list.every((type) => typeof type === 'string')) {
      this.problem(acc, holder, `${pointer}/type`, 'invalid type');
      return undefined;
    }
    const unknown = list.find((type) => !TYPES.has(type));
    if (unknown !== undefined) {
      this.problem(acc, holder, `${pointer}/type`, `unsupported type ${quote(unknown)}`);
      return undefined;
    }
    return [...new Set(list as string[])].sort(compare);
  }

  /** The stored `$ref` naming the definition, or what keeps the reference from being imported. */
  private reference(value: unknown, at: string): string | SchemaProblem {
    if (typeof value !== 'string') return { at, reason: 'invalid reference (not a string)' };
    const parsed = parseReference(value);
    if (parsed.kind === 'remote') return { at, reason: `remote reference ${quote(value)}` };
    // A lone surrogate cannot be written into a URI fragment, so such a target has no stored name.
    if (parsed.kind === 'invalid' || (parsed.kind === 'local' && /\p{Cs}/u.test(parsed.pointer))) {
      return { at, reason: `invalid reference ${quote(value)}` };
    }
    if (parsed.kind !== 'local') return { at, reason: `unsupported reference ${quote(value)} (only JSON-pointer fragments)` };
    if (parsed.pointer === '') {
      if (!this.options.rootIsSchema) return { at, reason: 'invalid reference # (the document root is not a schema)' };
      this.refPointers.set('#', '');
      return '#';
    }
    if (!this.targets.has(parsed.pointer)) {
      const target = resolveTokens(this.document, parsed.tokens);
      if (target === undefined) return { at, reason: `unresolved reference ${quote(value)}` };
      this.targets.set(parsed.pointer, target);
    }
    const ref = fragmentRef(['$defs', this.nameOf(parsed.pointer)]);
    this.refPointers.set(ref, parsed.pointer);
    return ref;
  }

  /**
   * The `$defs` name of a referenced pointer: a member of the named container keeps its own
   * name (`/components/schemas/Pet` → `Pet`); any other target is named by its whole pointer,
   * which starts with `/` and so never collides with a kept name.
   */
  private nameOf(pointer: string): string {
    let name = this.names.get(pointer);
    if (name === undefined) {
      const prefix = `${this.options.namedContainer.map((token) => `/${token}`).join('')}/`;
      const rest = pointer.startsWith(prefix) ? pointer.slice(prefix.length) : '';
      name = SAFE_NAME.test(rest) ? rest : pointer;
      this.names.set(pointer, name);
    }
    return name;
  }
}

/** Nesting depth of a JSON value, measured without recursion (stops once past the limit). */
function nestingDepth(value: unknown): number {
  let deepest = 0;
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop() as [unknown, number];
    if (typeof node !== 'object' || node === null) continue;
    if (depth + 1 > deepest) deepest = depth + 1;
    if (deepest > MAX_VALUE_DEPTH) return deepest;
    for (const child of Object.values(node)) stack.push([child, depth + 1]);
  }
  return deepest;
}

/** Code-unit order, the same on every machine and locale. */
export function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * `oneOf`/`anyOf: [S, {type: null}]` (any order, any number of null alternatives) says "S, or
 * null", and `oneOf: [S]` says S: the index of S and whether null is allowed, else undefined.
 */
function nullableAlternative(alternatives: unknown): { index: number; nullable: boolean } | undefined {
  if (!Array.isArray(alternatives)) return undefined;
  let found = -1;
  for (let index = 0; index < alternatives.length; index++) {
    if (isNullSchema(alternatives[index])) continue;
    if (found >= 0) return undefined;
    found = index;
  }
  return found < 0 ? undefined : { index: found, nullable: alternatives.length > 1 };
}

/**
 * The values of `oneOf`/`anyOf` whose every alternative is only a `const` or an `enum` (the way
 * many documents write a documented enumeration), else undefined: such a list is that `enum`.
 */
function valueAlternatives(alternatives: unknown): unknown[] | undefined {
  if (!Array.isArray(alternatives) || alternatives.length === 0) return undefined;
  const values: unknown[] = [];
  for (const alternative of alternatives) {
    if (!isPlainObject(alternative)) return undefined;
    const { const: constant, enum: listed, ...rest } = alternative;
    if (Object.keys(rest).some((key) => !ANNOTATIONS.has(key))) return undefined;
    if (Object.hasOwn(alternative, 'const') && !Object.hasOwn(alternative, 'enum')) values.push(constant);
    else if (Array.isArray(listed) && !Object.hasOwn(alternative, 'const')) values.push(...listed);
    else return undefined;
  }
  return nestingDepth(values) > MAX_VALUE_DEPTH ? undefined : values;
}

/**
 * `{type: null}`, `{enum: [null]}`, or `{nullable: true}` alone: the last is how OpenAPI 3.0
 * documents write the null alternative of "X or null" (Qdrant: `anyOf: [{$ref}, {nullable:
 * true}]`); read literally it allows anything, which no author of such a list means.
 */
function isNullSchema(schema: unknown): boolean {
  if (!isPlainObject(schema)) return false;
  const { type, enum: values, nullable, ...rest } = schema;
  if (Object.keys(rest).some((key) => !ANNOTATIONS.has(key))) return false;
  if (nullable !== undefined && (nullable !== true || type !== undefined || values !== undefined)) return false;
  if (nullable === true) return true;
  if (type === 'null' && values === undefined) return true;
  return type === undefined && Array.isArray(values) && values.length === 1 && values[0] === null;
}

function sortProblems(problems: SchemaProblem[]): SchemaProblem[] {
  const unique = new Map<string, SchemaProblem>();
  for (const problem of problems) unique.set(`${problem.at}\u0000${problem.reason}`, problem);
  return [...unique.values()].sort((a, b) => compare(a.at, b.at) || compare(a.reason, b.reason));
}
