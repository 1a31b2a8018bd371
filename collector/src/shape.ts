// The structure of a JSON value as a schemaShape tree (00-decisions §5): kinds and field names,
// never a value. Bounded so that what is built always passes the edge's schema (at most 32 levels,
// the last one leaves only; at most 500 fields per object; field names of at most 256 characters).

import type { SchemaShape } from './types.js';

/** The edge's bounds (shared/envelope/types.ts): levels, fields per object, field-name length. */
export const EDGE_MAX_DEPTH = 32;
export const EDGE_MAX_FIELDS = 500;
export const EDGE_MAX_FIELD_NAME = 256;

/** The shape sent for a body that was not inspected (`schemaInspected: false`). */
export const PLACEHOLDER_SHAPE: SchemaShape = Object.freeze({ kind: 'object', fields: Object.freeze({}) }) as SchemaShape;

export interface ShapeLimits {
  /** Levels of the tree, the root being level 1 (2–32). Containers only above the last level. */
  maxDepth: number;
  /** Fields kept per object node (1–500): the first ones in UTF-16 code-unit order. */
  maxFields: number;
  /** Array items examined (1+): the first ones. */
  maxArrayItems: number;
}

export const DEFAULT_SHAPE_LIMITS: ShapeLimits = { maxDepth: EDGE_MAX_DEPTH, maxFields: EDGE_MAX_FIELDS, maxArrayItems: 64 };

const clampInt = (value: unknown, min: number, max: number, fallback: number): number =>
  typeof value === 'number' && Number.isFinite(value) ? Math.min(max, Math.max(min, Math.floor(value))) : fallback;

/** The options' limits, clamped into what the edge accepts. */
export function shapeLimitsOf(options: { maxDepth?: number; maxFields?: number; maxArrayItems?: number } | undefined): ShapeLimits {
  return {
    maxDepth: clampInt(options?.maxDepth, 2, EDGE_MAX_DEPTH, DEFAULT_SHAPE_LIMITS.maxDepth),
    maxFields: clampInt(options?.maxFields, 1, EDGE_MAX_FIELDS, DEFAULT_SHAPE_LIMITS.maxFields),
    maxArrayItems: clampInt(options?.maxArrayItems, 1, 1_000_000, DEFAULT_SHAPE_LIMITS.maxArrayItems),
  };
}

/** UTF-16 code-unit order (the order of RFC 8785 and of `Array.prototype.sort` without a comparator). */
export const byCodeUnits = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

type Kind = SchemaShape['kind'];

/** Sets a field as an own property, `__proto__` included (a body's field name is data). */
function setField(fields: Record<string, SchemaShape>, name: string, shape: SchemaShape): void {
  if (name === '__proto__') Object.defineProperty(fields, name, { value: shape, enumerable: true, writable: true, configurable: true });
  else fields[name] = shape;
}

/**
 * The shape of a JSON value (or of what JSON.stringify would make of a JavaScript value).
 * Throws if reading the value throws (a getter of a host object) or needs more than
 * MAX_SHAPE_NODES reads; callers treat that as a body that could not be inspected.
 *
 * Rules (collector/README.md "Shapes"):
 * - integers (`Number.isInteger`, bigint) are `integer`, other numbers `number`; NaN and
 *   ±Infinity are `null`, as JSON.stringify writes them; a Date (anything with `toJSON`) is read
 *   through `toJSON`.
 * - an object keeps the first `maxFields` field names in code-unit order; names longer than
 *   256 characters, and fields whose value JSON.stringify omits (undefined, functions, symbols),
 *   are left out.
 * - depth: containers exist only above the last level. A container that would sit on the last
 *   level is cut: an object field holding it is left out; an array with such an item gets no
 *   `items` (nothing is compared below it, as for an empty array).
 * - arrays: the first `maxArrayItems` items are examined and merged (mergeShapes).
 */
export function shapeOf(value: unknown, limits: ShapeLimits = DEFAULT_SHAPE_LIMITS): SchemaShape {
  const shape = build(value, 1, limits, { nodes: 0 });
  // Only a container at level 1 of a tree of one level can be cut: maxDepth ≥ 2 prevents that.
  return shape ?? PLACEHOLDER_SHAPE;
}

const CUT = undefined;

/**
 * Values read per shape at most. A parsed body is a tree, so its work is bounded by its size and
 * the limits; a JavaScript value handed over as `{json}` may share or cycle through objects, which
 * the limits alone would let grow exponentially.
 */
export const MAX_SHAPE_NODES = 100_000;

export class ShapeBudgetExceeded extends Error {
  constructor() {
    super(`more than ${MAX_SHAPE_NODES} values to read`);
  }
}

function build(input: unknown, level: number, limits: ShapeLimits, budget: { nodes: number }): SchemaShape | undefined {
  if (++budget.nodes > MAX_SHAPE_NODES) throw new ShapeBudgetExceeded();
  let value = input;
  if (value !== null && typeof value === 'object' && typeof (value as { toJSON?: unknown }).toJSON === 'function') {
    value = (value as { toJSON: (key: string) => unknown }).toJSON('');
  }
  switch (typeof value) {
    case 'string':
      return { kind: 'string' };
    case 'boolean':
      return { kind: 'boolean' };
    case 'bigint':
      return { kind: 'integer' };
    case 'number':
      if (!Number.isFinite(value)) return { kind: 'null' };
      return { kind: Number.isInteger(value) ? 'integer' : 'number' };
    case 'object':
      break;
    default:
      return { kind: 'null' }; // undefined, function, symbol as an array item: JSON writes null
  }
  if (value === null) return { kind: 'null' };
  if (level >= limits.maxDepth) return CUT;
  if (Array.isArray(value)) {
    const count = Math.min(value.length, limits.maxArrayItems);
    if (count === 0) return { kind: 'array' };
    const items: SchemaShape[] = [];
    for (let i = 0; i < count; i++) {
      const item = build(value[i], level + 1, limits, budget);
      if (item === CUT) return { kind: 'array' };
      items.push(item);
    }
    return { kind: 'array', items: mergeShapes(items, limits) };
  }
  const record = value as Record<string, unknown>;
  const names = Object.keys(record)
    .filter((name) => name.length <= EDGE_MAX_FIELD_NAME)
    .sort(byCodeUnits);
  const fields: Record<string, SchemaShape> = {};
  let kept = 0;
  for (const name of names) {
    if (kept >= limits.maxFields) break;
    const field = record[name];
    const type = typeof field;
    if (type === 'undefined' || type === 'function' || type === 'symbol') continue;
    const child = build(field, level + 1, limits, budget);
    if (child === CUT) continue;
    setField(fields, name, child);
    kept++;
  }
  return { kind: 'object', fields };
}

/**
 * One shape for several (the examined items of an array, or one field across merged objects):
 *
 * 1. `integer` and `number` together are `number`.
 * 2. objects merge field by field: the union of their fields, each merged by these same rules
 *    (then the first `maxFields` names in code-unit order); arrays merge their items likewise.
 * 3. when kinds still differ, the LEAST frequent kind wins (ties: the kind whose first occurrence
 *    comes last). A type change in a minority of items is then what the analyzer compares, and
 *    reports; the majority kind would hide it. A mixed array the contract allows (its items
 *    schema accepts several kinds) gives no finding whichever kind is sent.
 */
export function mergeShapes(shapes: readonly SchemaShape[], limits: ShapeLimits = DEFAULT_SHAPE_LIMITS): SchemaShape {
  if (shapes.length === 1) return shapes[0];
  let hasInteger = false;
  let hasNumber = false;
  for (const shape of shapes) {
    if (shape.kind === 'integer') hasInteger = true;
    else if (shape.kind === 'number') hasNumber = true;
  }
  const kindOf = (shape: SchemaShape): Kind => (hasInteger && hasNumber && shape.kind === 'integer' ? 'number' : shape.kind);
  // Count per kind and the index of each kind's first occurrence.
  const counts = new Map<Kind, { count: number; first: number }>();
  shapes.forEach((shape, index) => {
    const kind = kindOf(shape);
    const entry = counts.get(kind);
    if (entry) entry.count++;
    else counts.set(kind, { count: 1, first: index });
  });
  let chosen: Kind | undefined;
  let best = { count: Infinity, first: -1 };
  for (const [kind, entry] of counts) {
    if (entry.count < best.count || (entry.count === best.count && entry.first > best.first)) {
      chosen = kind;
      best = entry;
    }
  }
  const kind = chosen as Kind;
  const group = shapes.filter((shape) => kindOf(shape) === kind);
  if (kind === 'object') {
    const byName = new Map<string, SchemaShape[]>();
    for (const shape of group) {
      const fields = (shape as { fields: Record<string, SchemaShape> }).fields;
      for (const name of Object.keys(fields)) {
        const list = byName.get(name);
        if (list) list.push(fields[name]);
        else byName.set(name, [fields[name]]);
      }
    }
    const fields: Record<string, SchemaShape> = {};
    const names = [...byName.keys()].sort(byCodeUnits).slice(0, limits.maxFields);
    for (const name of names) setField(fields, name, mergeShapes(byName.get(name) as SchemaShape[], limits));
    return { kind: 'object', fields };
  }
  if (kind === 'array') {
    const items: SchemaShape[] = [];
    for (const shape of group) {
      const item = (shape as { items?: SchemaShape }).items;
      if (item !== undefined) items.push(item);
    }
    return items.length === 0 ? { kind: 'array' } : { kind: 'array', items: mergeShapes(items, limits) };
  }
  return { kind } as SchemaShape;
}

/** A shape prepared for matching: an object's fields in a Map, its field count precomputed. */
export interface ShapeMatcher {
  kind: Kind;
  fields?: Map<string, ShapeMatcher>;
  items?: ShapeMatcher;
}

export function shapeMatcher(shape: SchemaShape): ShapeMatcher {
  if (shape.kind === 'object') {
    const fields = new Map<string, ShapeMatcher>();
    for (const name of Object.keys(shape.fields)) fields.set(name, shapeMatcher(shape.fields[name]));
    return { kind: 'object', fields };
  }
  if (shape.kind === 'array') return shape.items === undefined ? { kind: 'array' } : { kind: 'array', items: shapeMatcher(shape.items) };
  return { kind: shape.kind };
}

/**
 * Whether `shapeOf(value, limits)` would be exactly the shape `matcher` was prepared from, by a
 * walk that builds nothing. A body shaped like a recent one of its operation then costs this
 * walk, not a new tree and digest. Whenever the answer is not certain (a `toJSON`, a bigint, an
 * omitted or over-long field, a cut level, array items of differing shapes) it is false, and the
 * caller builds.
 */
export function matchesShape(value: unknown, matcher: ShapeMatcher, limits: ShapeLimits = DEFAULT_SHAPE_LIMITS): boolean {
  return matches(value, matcher, 1, limits, { nodes: 0 });
}

function matches(value: unknown, matcher: ShapeMatcher, level: number, limits: ShapeLimits, budget: { nodes: number }): boolean {
  if (++budget.nodes > MAX_SHAPE_NODES) return false;
  switch (typeof value) {
    case 'string':
      return matcher.kind === 'string';
    case 'boolean':
      return matcher.kind === 'boolean';
    case 'number':
      if (!Number.isFinite(value)) return matcher.kind === 'null';
      return matcher.kind === (Number.isInteger(value) ? 'integer' : 'number');
    case 'object':
      break;
    default:
      return false;
  }
  if (value === null) return matcher.kind === 'null';
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function' || level >= limits.maxDepth) return false;
  if (Array.isArray(value)) {
    if (matcher.kind !== 'array') return false;
    const count = Math.min(value.length, limits.maxArrayItems);
    if (count === 0) return matcher.items === undefined;
    const items = matcher.items;
    if (items === undefined) return false;
    for (let i = 0; i < count; i++) if (!matches(value[i], items, level + 1, limits, budget)) return false;
    return true;
  }
  const fields = matcher.fields;
  if (fields === undefined || fields.size > limits.maxFields) return false;
  const record = value as Record<string, unknown>;
  let count = 0;
  // for-in allocates no array of names; an inherited enumerable name (not in Object.keys, which
  // shapeOf reads) makes the answer uncertain, hence false.
  for (const name in record) {
    if (!Object.hasOwn(record, name)) return false;
    const child = fields.get(name);
    if (child === undefined) return false;
    const field = record[name];
    const type = typeof field;
    if (type === 'undefined' || type === 'function' || type === 'symbol') return false;
    if (!matches(field, child, level + 1, limits, budget)) return false;
    count++;
  }
  return count === fields.size;
}
