// Reduces a source schema to the subset the Contract API stores (01 "Import rules" 4–5):
// `type`, `properties`, `required`, `items`, `enum`, `additionalProperties`, plus `$ref`/`$defs`
// for local references. Every reachable referenced schema is copied once into `$defs`, so a
// recursive schema is stored as a finite graph and its import terminates.

import { childPointer, fragmentRef, isPlainObject, parseReference, resolveTokens, setOwn } from './jsonPointer.js';
import { quote } from './operationKey.js';

/** Something in a schema that keeps it from being imported; `at` points at the keyword. */
export interface SchemaProblem {
  at: string;
  reason: string;
}

export interface CompiledSchema {
  /** Set when `problems` is empty. */
  schema: Record<string, unknown> | null;
  /** Sorted by `at`, then `reason`. */
  problems: SchemaProblem[];
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
}

const TYPES = new Set(['object', 'array', 'string', 'number', 'integer', 'boolean', 'null']);
const COMPOSITION = new Set(['allOf', 'oneOf', 'anyOf', 'not']);
// Keywords that change which members or items exist, or apply schemas conditionally: dropping
// them would change the shape, so a schema that uses them is not imported.
const UNSUPPORTED = new Set([
  'patternProperties', 'prefixItems', 'unevaluatedProperties', 'unevaluatedItems',
  'if', 'then', 'else', 'dependentSchemas', 'dependencies', '$dynamicRef', '$recursiveRef',
]);
const SAFE_NAME = /^[A-Za-z0-9._-]+$/;
// Inline nesting this deep is not a real contract; the limit keeps recursion off the stack limit.
const MAX_DEPTH = 200;
// Enum and const values are stored verbatim; bounded so that serialising them cannot overflow.
const MAX_VALUE_DEPTH = 64;

interface Unit {
  schema: unknown;
  refs: string[];
  problems: SchemaProblem[];
  /** Target pointer when the schema is nothing but a reference (for reference-only cycles). */
  pureRef: string | null;
}

interface Accumulator {
  refs: Set<string>;
  problems: SchemaProblem[];
}

/**
 * Compiles schemas of one source document. Units are memoised by pointer, so a component shared
 * by many operations is reduced once per document.
 */
export class SchemaCompiler {
  private readonly units = new Map<string, Unit>();
  private readonly targets = new Map<string, unknown>();
  private readonly names = new Map<string, string>();
  private readonly refPointers = new Map<string, string>();

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
        problems.push({ at: target + '/$ref', reason: 'reference cycle without a schema' });
      }
    }
    if (problems.length > 0) return { schema: null, problems: sortProblems(problems) };

    const schema: Record<string, unknown> = root.schema === false ? { enum: [] } : { ...(root.schema as Record<string, unknown>) };
    if (defs.size > 0) {
      const $defs: Record<string, unknown> = {};
      for (const target of [...defs.keys()].sort((a, b) => compare(this.nameOf(a), this.nameOf(b)))) {
        setOwn($defs, this.nameOf(target), (defs.get(target) as Unit).schema);
      }
      schema.$defs = $defs;
    }
    return { schema, problems: [] };
  }

  private unit(pointer: string, node: unknown): Unit {
    const cached = this.units.get(pointer);
    if (cached) return cached;
    const acc: Accumulator = { refs: new Set(), problems: [] };
    const schema = this.normalize(node, pointer, 0, acc);
    let pureRef: string | null = null;
    if (isPlainObject(schema) && Object.keys(schema).length === 1 && typeof schema.$ref === 'string') {
      pureRef = this.refPointers.get(schema.$ref) ?? null;
    }
    const unit: Unit = { schema, refs: [...acc.refs], problems: acc.problems, pureRef };
    this.units.set(pointer, unit);
    return unit;
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

  private normalize(node: unknown, pointer: string, depth: number, acc: Accumulator): unknown {
    if (depth > MAX_DEPTH) {
      acc.problems.push({ at: pointer, reason: 'schema nested too deeply' });
      return {};
    }
    if (node === true) return {};
    if (node === false) return false;
    if (!isPlainObject(node)) {
      acc.problems.push({ at: pointer, reason: 'invalid schema (not an object or boolean)' });
      return {};
    }
    const out: Record<string, unknown> = {};
    if (Object.hasOwn(node, '$ref')) {
      const ref = this.reference(node.$ref, pointer + '/$ref', acc);
      if (!this.options.refSiblingsApply) return ref;
      if (ref.$ref !== undefined) out.$ref = ref.$ref;
    }
    let types: string[] | undefined;
    let nullable = false;
    let constant: { value: unknown } | undefined;
    for (const key of Object.keys(node)) {
      const value = node[key];
      switch (key) {
        case 'type':
          types = this.types(value, pointer, acc);
          break;
        case 'nullable':
          nullable = value === true;
          break;
        case 'properties':
          if (!isPlainObject(value)) {
            acc.problems.push({ at: pointer + '/properties', reason: 'invalid properties (not an object)' });
            break;
          }
          out.properties = this.properties(value, pointer + '/properties', depth, acc);
          break;
        case 'required':
          if (!Array.isArray(value) || !value.every((name) => typeof name === 'string')) {
            acc.problems.push({ at: pointer + '/required', reason: 'invalid required (not an array of strings)' });
          } else if (value.length > 0) {
            out.required = [...new Set(value as string[])].sort(compare);
          }
          break;
        case 'items':
          if (Array.isArray(value)) acc.problems.push({ at: pointer + '/items', reason: 'unsupported keyword items (array form)' });
          else out.items = this.normalize(value, pointer + '/items', depth + 1, acc);
          break;
        case 'additionalProperties':
          out.additionalProperties = typeof value === 'boolean' ? value : this.normalize(value, pointer + '/additionalProperties', depth + 1, acc);
          break;
        case 'enum':
          if (!Array.isArray(value)) acc.problems.push({ at: pointer + '/enum', reason: 'invalid enum (not an array)' });
          else if (nestingDepth(value) > MAX_VALUE_DEPTH) acc.problems.push({ at: pointer + '/enum', reason: 'enum value nested too deeply' });
          else out.enum = value;
          break;
        case 'const':
          if (nestingDepth(value) > MAX_VALUE_DEPTH) acc.problems.push({ at: pointer + '/const', reason: 'const value nested too deeply' });
          else constant = { value };
          break;
        default:
          if (COMPOSITION.has(key)) acc.problems.push({ at: childPointer(pointer, key), reason: `composition keyword ${key}` });
          else if (UNSUPPORTED.has(key)) acc.problems.push({ at: childPointer(pointer, key), reason: `unsupported keyword ${key}` });
        // Everything else is an annotation (description, format, example, title, default, …) or a
        // value constraint (minimum, pattern, maxLength, …) that a redacted shape cannot show.
      }
    }
    if (constant !== undefined && out.enum === undefined) out.enum = [constant.value];
    if (nullable) {
      if (types !== undefined && !types.includes('null')) types = [...types, 'null'].sort(compare);
      if (Array.isArray(out.enum) && !out.enum.includes(null)) out.enum = [...out.enum, null];
    }
    if (types !== undefined) out.type = types.length === 1 ? types[0] : types;
    return out;
  }

  private properties(value: Record<string, unknown>, pointer: string, depth: number, acc: Accumulator): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const name of Object.keys(value)) {
      setOwn(out, name, this.normalize(value[name], childPointer(pointer, name), depth + 1, acc));
    }
    return out;
  }

  private types(value: unknown, pointer: string, acc: Accumulator): string[] | undefined {
    const list = typeof value === 'string' ? [value] : value;
    if (!Array.isArray(list) || list.length === 0 || !list.every((type) => typeof type === 'string')) {
      acc.problems.push({ at: pointer + '/type', reason: 'invalid type' });
      return undefined;
    }
    const unknown = list.find((type) => !TYPES.has(type));
    if (unknown !== undefined) {
      acc.problems.push({ at: pointer + '/type', reason: `unsupported type ${quote(unknown)}` });
      return undefined;
    }
    return [...new Set(list as string[])].sort(compare);
  }

  /** `{$ref}` naming the stored definition, or `{}` after recording why the reference is not importable. */
  private reference(value: unknown, at: string, acc: Accumulator): { $ref?: string } {
    if (typeof value !== 'string') {
      acc.problems.push({ at, reason: 'invalid reference (not a string)' });
      return {};
    }
    const parsed = parseReference(value);
    if (parsed.kind === 'remote') {
      acc.problems.push({ at, reason: `remote reference ${quote(value)}` });
      return {};
    }
    // A lone surrogate cannot be written into a URI fragment, so such a target has no stored name.
    if (parsed.kind === 'invalid' || (parsed.kind === 'local' && /\p{Cs}/u.test(parsed.pointer))) {
      acc.problems.push({ at, reason: `invalid reference ${quote(value)}` });
      return {};
    }
    if (parsed.kind !== 'local') {
      acc.problems.push({ at, reason: `unsupported reference ${quote(value)} (only JSON-pointer fragments)` });
      return {};
    }
    if (parsed.pointer === '') {
      if (!this.options.rootIsSchema) {
        acc.problems.push({ at, reason: 'invalid reference # (the document root is not a schema)' });
        return {};
      }
      this.refPointers.set('#', '');
      return { $ref: '#' };
    }
    if (!this.targets.has(parsed.pointer)) {
      const target = resolveTokens(this.document, parsed.tokens);
      if (target === undefined) {
        acc.problems.push({ at, reason: `unresolved reference ${quote(value)}` });
        return {};
      }
      this.targets.set(parsed.pointer, target);
    }
    acc.refs.add(parsed.pointer);
    const ref = fragmentRef(['$defs', this.nameOf(parsed.pointer)]);
    this.refPointers.set(ref, parsed.pointer);
    return { $ref: ref };
  }

  /**
   * The `$defs` name of a referenced pointer: a member of the named container keeps its own
   * name (`/components/schemas/Pet` → `Pet`); any other target is named by its whole pointer,
   * which starts with `/` and so never collides with a kept name.
   */
  private nameOf(pointer: string): string {
    let name = this.names.get(pointer);
    if (name === undefined) {
      const prefix = this.options.namedContainer.map((token) => '/' + token).join('') + '/';
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

function sortProblems(problems: SchemaProblem[]): SchemaProblem[] {
  const unique = new Map<string, SchemaProblem>();
  for (const problem of problems) unique.set(problem.at + '\u0000' + problem.reason, problem);
  return [...unique.values()].sort((a, b) => compare(a.at, b.at) || compare(a.reason, b.reason));
}
