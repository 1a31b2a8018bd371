// Schema words for repair candidates: the `type` of a kind mask in compile.ts's order, and the
// subset schema (00-decisions §7) that describes a set of observed shapes (00-decisions §5).

import {
  KIND_ARRAY,
  KIND_BOOLEAN,
  KIND_INTEGER,
  KIND_NULL,
  KIND_NUMBER,
  KIND_OBJECT,
  KIND_STRING,
  KIND_UNKNOWN,
  kindBit,
} from '../analysis/compile.js';
import { setOwn } from '../contracts/jsonPointer.js';
import type { SchemaShape } from '../analysis/types.js';

type Schema = Record<string, unknown>;

/** compile.ts describeKinds order: object, array, string, number, integer, boolean, null. */
const KIND_ORDER: readonly [number, string][] = [
  [KIND_OBJECT, 'object'],
  [KIND_ARRAY, 'array'],
  [KIND_STRING, 'string'],
  [KIND_NUMBER, 'number'],
  [KIND_INTEGER, 'integer'],
  [KIND_BOOLEAN, 'boolean'],
  [KIND_NULL, 'null'],
];

/** The type names of a kind mask, in the fixed order; `integer` is left out beside `number` (which accepts it). */
export function typeNames(mask: number): string[] {
  const names: string[] = [];
  for (const [bit, name] of KIND_ORDER) {
    if ((mask & bit) === 0) continue;
    if (bit === KIND_INTEGER && (mask & KIND_NUMBER) !== 0) continue;
    names.push(name);
  }
  return names;
}

/** The value of a `type` keyword: one name as a string, several as an array. */
export function typeValue(names: readonly string[]): string | string[] {
  return names.length === 1 ? names[0] : [...names];
}

/**
 * The subset schema of what `shapes` show: the kinds seen as `type`; for objects every field
 * seen, described the same way, as optional `properties`; for arrays the items seen as `items`
 * (no `items` when every array was empty). Output keys come in a fixed order and property names
 * in byte order, so the result does not depend on the order of shapes or of their fields.
 */
export function describeShapes(shapes: readonly SchemaShape[]): Schema {
  let mask = 0;
  const fields = new Map<string, SchemaShape[]>();
  const items: SchemaShape[] = [];
  for (const shape of shapes) {
    const bit = kindBit(shape?.kind);
    if (bit === KIND_UNKNOWN) continue;
    mask |= bit;
    if (bit === KIND_OBJECT) {
      const members = (shape as { fields?: Record<string, SchemaShape> | null }).fields;
      if (members == null) continue;
      for (const name in members) {
        if (!Object.hasOwn(members, name)) continue;
        const list = fields.get(name);
        if (list) list.push(members[name]);
        else fields.set(name, [members[name]]);
      }
    } else if (bit === KIND_ARRAY) {
      const item = (shape as { items?: SchemaShape | null }).items;
      if (item != null) items.push(item);
    }
  }
  // Only kinds outside 00-decisions §5 were seen: no subset `type` names them.
  if (mask === 0) return {};
  const out: Schema = { type: typeValue(typeNames(mask)) };
  if (mask & KIND_OBJECT) {
    const properties: Schema = {};
    for (const name of [...fields.keys()].sort(compareBytes)) setOwn(properties, name, describeShapes(fields.get(name) as SchemaShape[]));
    out.properties = properties;
  }
  if (mask & KIND_ARRAY && items.length > 0) out.items = describeShapes(items);
  return out;
}

/**
 * UTF-8 byte order (code point order): code-unit order except that a surrogate (a code point
 * above U+FFFF) sorts after U+E000–U+FFFF, as its UTF-8 bytes do.
 */
export function compareBytes(a: string, b: string): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    const xSurrogate = x >= 0xd800 && x <= 0xdfff;
    const ySurrogate = y >= 0xd800 && y <= 0xdfff;
    if (xSurrogate !== ySurrogate) return xSurrogate ? 1 : -1;
    return x < y ? -1 : 1;
  }
  return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
}
