// Compiles the stored subset schemas of a contract (shared/contracts/schemaSubset.ts) into the
// form compareShape walks, and indexes the contract's operations for 00-decisions §5 matching.
//
// A node of the compiled form is the conjunction of one or more stored schema objects: a `$ref`
// with sibling keywords applies both (OpenAPI 3.1, JSON Schema), so `{$ref, required}` is the
// node {siblings, target}. Nodes are cached by their set of schema objects and their children are
// compiled on first use, so a recursive schema compiles to a finite graph and compiling ends.

import { parseReference, resolveTokens, unescapeToken } from '../contracts/jsonPointer.js';
import type { AnalysedOperation, ObservedOperation } from './types.js';

/** One bit per schemaShape kind; `UNKNOWN_KIND` stands for a kind outside 00-decisions §5. */
export const KIND_OBJECT = 1;
export const KIND_ARRAY = 2;
export const KIND_STRING = 4;
export const KIND_NUMBER = 8;
export const KIND_INTEGER = 16;
export const KIND_BOOLEAN = 32;
export const KIND_NULL = 64;
export const KIND_UNKNOWN = 128;
/** A schema without `type` and `enum` accepts every kind, even one it does not know. */
export const ANY_KIND = 255;

const TYPE_BITS: Record<string, number> = {
  object: KIND_OBJECT,
  array: KIND_ARRAY,
  string: KIND_STRING,
  // An integer is a number, so `type: number` accepts the shape kind `integer` too.
  number: KIND_NUMBER | KIND_INTEGER,
  integer: KIND_INTEGER,
  boolean: KIND_BOOLEAN,
  null: KIND_NULL,
};

/** The bit of a shape kind (`KIND_UNKNOWN` for anything else). */
export function kindBit(kind: unknown): number {
  switch (kind) {
    case 'object':
      return KIND_OBJECT;
    case 'array':
      return KIND_ARRAY;
    case 'string':
      return KIND_STRING;
    case 'number':
      return KIND_NUMBER;
    case 'integer':
      return KIND_INTEGER;
    case 'boolean':
      return KIND_BOOLEAN;
    case 'null':
      return KIND_NULL;
    default:
      return KIND_UNKNOWN;
  }
}

/**
 * What a kind mask allows, in words: the types joined with `|` in the order object, array,
 * string, number, integer, boolean, null (`integer` left out when `number` is there); `any` for
 * a schema without `type` and `enum`; `nothing` for one that allows no value (`false`, `enum: []`,
 * types whose intersection is empty).
 */
export function describeKinds(mask: number): string {
  if (mask === ANY_KIND) return 'any';
  const parts: string[] = [];
  if (mask & KIND_OBJECT) parts.push('object');
  if (mask & KIND_ARRAY) parts.push('array');
  if (mask & KIND_STRING) parts.push('string');
  if (mask & KIND_NUMBER) parts.push('number');
  else if (mask & KIND_INTEGER) parts.push('integer');
  if (mask & KIND_BOOLEAN) parts.push('boolean');
  if (mask & KIND_NULL) parts.push('null');
  return parts.length === 0 ? 'nothing' : parts.join('|');
}

type RawSchema = Record<string, unknown>;

/** Stands for the boolean schema `false` (a property declared `false` is stored as is). */
const FALSE_SCHEMA: RawSchema = Object.freeze({ enum: [] }) as RawSchema;

/** One node of a compiled schema: everything compareShape needs, precomputed. */
export class SchemaNode {
  /** Kinds the node allows (`ANY_KIND` when it declares neither `type` nor `enum`). */
  readonly kinds: number;
  /** `describeKinds(kinds)`. */
  readonly expected: string;
  /** Set when the node says anything about object members (`properties`, `required`, `additionalProperties`). */
  readonly hasObjectRules: boolean;
  /** Fields outside `properties` are reported (the node has `properties` or a non-`true` `additionalProperties`). */
  readonly checksUndeclared: boolean;
  /** `additionalProperties: false` in any member of the conjunction. */
  readonly forbidsAdditional: boolean;
  /** Declared property name → index into `propertyNames`. */
  readonly propertyIndex: ReadonlyMap<string, number>;
  /** Declared property names in code-unit order. */
  readonly propertyNames: readonly string[];
  /** Per declared property: its index into `requiredDeclared`, or -1 when it is not required. */
  readonly propertyRequiredSlot: Int32Array;
  /** Positions (into `propertyNames`) of the required declared properties, in `required` order. */
  readonly requiredDeclared: readonly number[];
  /** Required names, code-unit order. */
  readonly required: readonly string[];
  /** Required names that `properties` does not declare, code-unit order. */
  readonly requiredUndeclared: readonly string[];
  /** The node has `items`. */
  readonly hasItems: boolean;
  /** The node has an `additionalProperties` schema. */
  readonly hasAdditionalSchema: boolean;
  /** A member is a sub-schema the import left unchecked (coverage lists it). */
  readonly unchecked: boolean;
  /**
   * The node is unchecked or lies below one: the keyword dropped there could declare members at
   * any depth under it, so no field here is undeclared. Kinds, declared properties and
   * `required` are still compared.
   */
  readonly open: boolean;

  private readonly propertyMembers: unknown[][];
  private readonly propertyNodes: (SchemaNode | undefined)[];
  private readonly itemMembers: unknown[];
  private itemNode: SchemaNode | undefined;
  private readonly additionalMembers: unknown[];
  private additionalNode: SchemaNode | undefined;

  constructor(
    private readonly compiler: SchemaCompiler,
    /** Key of the conjunction in the compiler's cache. */
    readonly key: string,
    /** The stored schema objects the node is the conjunction of. */
    readonly members: readonly object[],
    /** The members that are the root or one of its `$defs` (coverage stops at one already on its path). */
    readonly definitions: readonly object[],
    unchecked: boolean,
    open: boolean,
  ) {
    let kinds = ANY_KIND;
    let hasProperties = false;
    let forbids = false;
    const properties = new Map<string, unknown[]>();
    const required = new Set<string>();
    const itemMembers: unknown[] = [];
    const additionalMembers: unknown[] = [];
    for (const member of members as readonly RawSchema[]) {
      kinds &= kindsOf(member);
      const declared = own(member, 'properties');
      if (isObject(declared)) {
        hasProperties = true;
        for (const name of Object.keys(declared)) {
          const list = properties.get(name);
          if (list) list.push(declared[name]);
          else properties.set(name, [declared[name]]);
        }
      }
      const names = own(member, 'required');
      if (Array.isArray(names)) for (const name of names) if (typeof name === 'string') required.add(name);
      if (Object.hasOwn(member, 'items')) itemMembers.push(member.items);
      const additional = own(member, 'additionalProperties');
      if (additional === false) forbids = true;
      else if (additional !== undefined && additional !== true) additionalMembers.push(additional);
    }
    this.kinds = kinds;
    this.expected = describeKinds(kinds);
    this.forbidsAdditional = forbids;
    this.hasAdditionalSchema = !forbids && additionalMembers.length > 0;
    this.unchecked = unchecked;
    this.open = open;
    const membersRule = hasProperties || forbids || additionalMembers.length > 0;
    this.checksUndeclared = !open && membersRule;
    this.hasObjectRules = membersRule || required.size > 0;

    this.propertyNames = [...properties.keys()].sort(compareText);
    this.propertyIndex = new Map(this.propertyNames.map((name, index) => [name, index]));
    this.propertyMembers = this.propertyNames.map((name) => properties.get(name) as unknown[]);
    this.propertyNodes = new Array<SchemaNode | undefined>(this.propertyNames.length).fill(undefined);
    this.propertyRequiredSlot = new Int32Array(this.propertyNames.length).fill(-1);
    this.required = [...required].sort(compareText);
    const undeclared: string[] = [];
    const declaredRequired: number[] = [];
    for (const name of this.required) {
      const index = this.propertyIndex.get(name);
      if (index === undefined) {
        undeclared.push(name);
      } else {
        this.propertyRequiredSlot[index] = declaredRequired.length;
        declaredRequired.push(index);
      }
    }
    this.requiredUndeclared = undeclared;
    this.requiredDeclared = declaredRequired;
    this.itemMembers = itemMembers;
    this.hasItems = itemMembers.length > 0;
    this.additionalMembers = additionalMembers;
  }

  /** The node of declared property `index` (compiled on first use). */
  property(index: number): SchemaNode {
    let node = this.propertyNodes[index];
    if (node === undefined) {
      node = this.compiler.node(this.propertyMembers[index], this.open);
      this.propertyNodes[index] = node;
    }
    return node;
  }

  /** The node of `items`; only when `hasItems`. */
  items(): SchemaNode {
    if (this.itemNode === undefined) this.itemNode = this.compiler.node(this.itemMembers, this.open);
    return this.itemNode;
  }

  /** The node of the `additionalProperties` schema; only when `hasAdditionalSchema`. */
  additional(): SchemaNode {
    if (this.additionalNode === undefined) this.additionalNode = this.compiler.node(this.additionalMembers, this.open);
    return this.additionalNode;
  }
}

/** Builds and caches the nodes of one stored schema (one operation). */
class SchemaCompiler {
  private readonly ids = new Map<RawSchema, number>();
  private readonly nodes = new Map<string, SchemaNode>();
  private readonly targets = new Map<string, unknown>();

  /** The schemas a stored `$ref` names: the root (`#`) and the members of its `$defs`. */
  private readonly definitions = new Set<object>();

  /** The stored sub-schemas left unchecked (AnalysedOperation.uncheckedPointers), by identity. */
  private readonly unchecked = new Set<object>();

  constructor(
    private readonly root: RawSchema,
    uncheckedPointers: readonly string[],
  ) {
    this.definitions.add(root);
    for (const pointer of uncheckedPointers) {
      const target = pointer === '' ? root : resolveTokens(root, pointer.slice(1).split('/').map(unescapeToken));
      if (isObject(target)) this.unchecked.add(target);
    }
    const defs = own(root, '$defs');
    if (isObject(defs)) for (const name of Object.keys(defs)) if (isObject(defs[name])) this.definitions.add(defs[name] as object);
  }

  /** The node of the conjunction of `schemas`, each expanded through its `$ref` chain; `insideOpen` below an open node. */
  node(schemas: readonly unknown[], insideOpen = false): SchemaNode {
    const members: RawSchema[] = [];
    const seen = new Set<RawSchema>();
    for (const schema of schemas) this.expand(schema, members, seen);
    // Members that constrain nothing (`{$ref}` alone, the root's `$defs`) are left out of the
    // key, so every reference to one definition shares one node.
    const constraining = members.filter(constrains);
    const unchecked = members.some((member) => this.unchecked.has(member));
    const open = unchecked || insideOpen;
    const key =
      constraining
        .map((member) => this.idOf(member))
        .sort((a, b) => a - b)
        .join(',')
      + (unchecked ? '?' : '')
      + (open ? '~' : '');
    let node = this.nodes.get(key);
    if (node === undefined) {
      node = new SchemaNode(
        this,
        key,
        constraining,
        constraining.filter((member) => this.definitions.has(member)),
        unchecked,
        open,
      );
      this.nodes.set(key, node);
    }
    return node;
  }

  /**
   * Adds `schema` and what its `$ref` points at to `members`. A reference back into the
   * conjunction being built adds nothing (X = X ∧ S is satisfied by S), so expansion ends.
   * An unresolvable reference is left unchecked, as the importer leaves what it cannot import.
   */
  private expand(schema: unknown, members: RawSchema[], seen: Set<RawSchema>): void {
    const raw = schema === false ? FALSE_SCHEMA : isObject(schema) ? schema : null;
    if (raw === null || seen.has(raw)) return;
    seen.add(raw);
    members.push(raw);
    const ref = own(raw, '$ref');
    if (typeof ref === 'string') this.expand(this.target(ref), members, seen);
  }

  private target(ref: string): unknown {
    if (this.targets.has(ref)) return this.targets.get(ref);
    const parsed = parseReference(ref);
    const target = parsed.kind === 'local' ? resolveTokens(this.root, parsed.tokens) : undefined;
    this.targets.set(ref, target);
    return target;
  }

  private idOf(member: RawSchema): number {
    let id = this.ids.get(member);
    if (id === undefined) {
      id = this.ids.size;
      this.ids.set(member, id);
    }
    return id;
  }
}

/** A stored schema compiled for comparison (see compareShape). */
export interface CompiledSchema {
  readonly root: SchemaNode;
  /** The stored schema it was compiled from. */
  readonly source: Record<string, unknown>;
}

/** Compiles one stored subset schema. Cheap: children compile when a shape first reaches them. */
export function compileSchema(schema: Record<string, unknown>, uncheckedPointers: readonly string[] = []): CompiledSchema {
  const compiler = new SchemaCompiler(schema, uncheckedPointers);
  return { root: compiler.node([schema]), source: schema };
}

interface StatusIndex {
  exact: Map<number, AnalysedOperation>;
  /** Index 1–5: the `1XX`–`5XX` operation. */
  ranges: (AnalysedOperation | undefined)[];
  fallback: AnalysedOperation | undefined;
}

/** A contract's operations indexed for matching, with their compiled schemas. */
export interface CompiledContract {
  readonly operations: readonly AnalysedOperation[];
  /** Compiled schema per operation id. */
  readonly schemas: ReadonlyMap<string, CompiledSchema>;
  /**
   * 00-decisions §5: the operation with the observation's method, routeTemplate and
   * payloadLocation whose statusSelector matches: the exact code, then the range (`2XX`), then
   * `default`. `null` when none does, and always for statusCode 0 (a transport error).
   * The routeTemplate is the operation's, or one of its base paths followed by it (issue 26):
   * a route some operation declares as it is wins; otherwise the longest base path that gives a
   * declared route does.
   */
  match(observed: ObservedOperation): AnalysedOperation | null;
  /** The compiled schema of one of `operations`. */
  schemaOf(operation: AnalysedOperation): CompiledSchema;
}

type Selector = { kind: 'exact'; code: number } | { kind: 'range'; hundred: number } | { kind: 'default' };

function parseSelector(value: string): Selector | null {
  if (/^[1-5][0-9][0-9]$/.test(value)) return { kind: 'exact', code: Number(value) };
  if (/^[1-5][xX][xX]$/.test(value)) return { kind: 'range', hundred: Number(value[0]) };
  if (value.toLowerCase() === 'default') return { kind: 'default' };
  return null;
}

/** Of two operations with the same selector, the first by operationKey, then id, wins (whatever the input order). */
function earlier(current: AnalysedOperation | undefined, candidate: AnalysedOperation): boolean {
  if (current === undefined) return true;
  return (compareText(candidate.operationKey, current.operationKey) || compareText(candidate.id, current.id)) < 0;
}

// method → payloadLocation → routeTemplate → statuses: lookups without building a key string.
type RouteIndex = Map<string, Map<string, Map<string, StatusIndex>>>;

function addToIndex(index: RouteIndex, operation: AnalysedOperation, selector: Selector): void {
  let byLocation = index.get(operation.method);
  if (!byLocation) {
    byLocation = new Map();
    index.set(operation.method, byLocation);
  }
  let byRoute = byLocation.get(operation.payloadLocation);
  if (!byRoute) {
    byRoute = new Map();
    byLocation.set(operation.payloadLocation, byRoute);
  }
  let statuses = byRoute.get(operation.routeTemplate);
  if (!statuses) {
    statuses = { exact: new Map(), ranges: [], fallback: undefined };
    byRoute.set(operation.routeTemplate, statuses);
  }
  if (selector.kind === 'exact') {
    if (earlier(statuses.exact.get(selector.code), operation)) statuses.exact.set(selector.code, operation);
  } else if (selector.kind === 'range') {
    if (earlier(statuses.ranges[selector.hundred], operation)) statuses.ranges[selector.hundred] = operation;
  } else if (earlier(statuses.fallback, operation)) {
    statuses.fallback = operation;
  }
}

const SLASH = 0x2f;

export function compileContract(operations: AnalysedOperation[]): CompiledContract {
  const index: RouteIndex = new Map();
  // One index per base path, of the operations served under it: a lookup is one slice of the
  // observed route per base path it starts with.
  const byBasePath = new Map<string, RouteIndex>();
  const schemas = new Map<string, CompiledSchema>();
  for (const operation of operations) {
    if (!schemas.has(operation.id)) schemas.set(operation.id, compileSchema(operation.schema, operation.uncheckedPointers));
    const selector = parseSelector(operation.statusSelector);
    if (selector === null) continue;
    addToIndex(index, operation, selector);
    for (const basePath of operation.basePaths ?? []) {
      let prefixed = byBasePath.get(basePath);
      if (!prefixed) {
        prefixed = new Map();
        byBasePath.set(basePath, prefixed);
      }
      addToIndex(prefixed, operation, selector);
    }
  }
  // Longest first: `/api/v3/pets` is `/pets` under `/api/v3` before it is `/v3/pets` under `/api`.
  const prefixes = [...byBasePath].sort(([a], [b]) => b.length - a.length || compareText(a, b));

  return {
    operations,
    schemas,
    match(observed) {
      const code = observed.statusCode;
      if (!Number.isInteger(code) || code < 100 || code > 599) return null;
      const route = observed.routeTemplate;
      let statuses = index.get(observed.method)?.get(observed.payloadLocation)?.get(route);
      for (let i = 0; statuses === undefined && i < prefixes.length; i++) {
        const [basePath, prefixed] = prefixes[i];
        if (!route.startsWith(basePath)) continue;
        // `/v1` is a prefix of `/v1/models` and of `/v1` itself (the root `/`), not of `/v10/x`.
        if (route.length > basePath.length && route.charCodeAt(basePath.length) !== SLASH) continue;
        const rest = route.length === basePath.length ? '/' : route.slice(basePath.length);
        statuses = prefixed.get(observed.method)?.get(observed.payloadLocation)?.get(rest);
      }
      if (statuses === undefined) return null;
      return statuses.exact.get(code) ?? statuses.ranges[Math.floor(code / 100)] ?? statuses.fallback ?? null;
    },
    schemaOf(operation) {
      const schema = schemas.get(operation.id);
      if (schema === undefined) throw new Error(`operation ${operation.id} is not part of this contract`);
      return schema;
    },
  };
}

/** Kinds one stored schema object allows on its own: its `type`, else its `enum` values' types. */
export function kindsOf(schema: RawSchema): number {
  const type = own(schema, 'type');
  if (typeof type === 'string') return TYPE_BITS[type] ?? 0;
  if (Array.isArray(type)) {
    let mask = 0;
    for (const name of type) if (typeof name === 'string') mask |= TYPE_BITS[name] ?? 0;
    return mask;
  }
  const values = own(schema, 'enum');
  if (Array.isArray(values)) {
    let mask = 0;
    for (const value of values) mask |= valueKinds(value);
    return mask;
  }
  return ANY_KIND;
}

/**
 * Kinds a shape may show for an enum value. A shape carries no value, and a producer may write
 * `1` as `1.0`, so any numeric value allows both `number` and `integer`.
 */
function valueKinds(value: unknown): number {
  if (value === null) return KIND_NULL;
  if (Array.isArray(value)) return KIND_ARRAY;
  switch (typeof value) {
    case 'object':
      return KIND_OBJECT;
    case 'string':
      return KIND_STRING;
    case 'number':
      return KIND_NUMBER | KIND_INTEGER;
    case 'boolean':
      return KIND_BOOLEAN;
    default:
      return 0;
  }
}

const CONSTRAINING_KEYWORDS = ['type', 'enum', 'properties', 'required', 'items', 'additionalProperties'];

function constrains(schema: RawSchema): boolean {
  return CONSTRAINING_KEYWORDS.some((keyword) => Object.hasOwn(schema, keyword));
}

function isObject(value: unknown): value is RawSchema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Own members only: a schema key such as `__proto__` is plain data. */
function own(schema: RawSchema, key: string): unknown {
  return Object.hasOwn(schema, key) ? schema[key] : undefined;
}

/** Code-unit order, the same on every machine and locale. */
export function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
