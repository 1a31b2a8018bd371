import { SHAPE_KINDS, SHAPE_MAX_DEPTH, SHAPE_MAX_FIELDS, SHAPE_MAX_FIELD_NAME } from './types.js';

/**
 * A schemaShape tree checked and serialised in one walk: its JSON text with members in a fixed
 * order (`kind`, then `fields` or `items`), whatever order the collector sent them in, so equal
 * shapes are equal text; or null when the tree breaks a rule of SCHEMA_SHAPE_SCHEMA (schemas.ts).
 *
 * Why a walk of our own beside the schema: ajv spent about 6 µs per envelope on the shape's
 * recursive levels and the rows then walked the tree again to serialise it (bench/RESULTS.md,
 * issue 32). The envelope schema without the shape runs first (validate.ts), then this walk.
 * The schema stays the authority for what a refusal says: when this returns null, the whole
 * item is validated again against the full schema, whose errors become the issues. So this walk
 * must never accept a tree the schema refuses (test/shapeText.test.ts compares the two).
 */
export function shapeText(node: unknown): string | null {
  return levelText(node, 1);
}

const KINDS: ReadonlySet<unknown> = new Set(SHAPE_KINDS);
const NEEDS_JSON_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;

function levelText(node: unknown, level: number): string | null {
  if (typeof node !== 'object' || node === null || Array.isArray(node)) return null;
  let kind: unknown;
  let fields: unknown;
  let items: unknown;
  let hasFields = false;
  let hasItems = false;
  for (const key in node) {
    const value = (node as Record<string, unknown>)[key];
    if (key === 'kind') kind = value;
    else if (key === 'fields') {
      fields = value;
      hasFields = true;
    } else if (key === 'items') {
      items = value;
      hasItems = true;
    } else return null;
  }
  if (!KINDS.has(kind)) return null;
  if (level === SHAPE_MAX_DEPTH) return kind === 'object' || kind === 'array' || hasFields || hasItems ? null : `{"kind":"${kind}"}`;
  if (kind === 'object') {
    if (!hasFields || hasItems || typeof fields !== 'object' || fields === null || Array.isArray(fields)) return null;
    let out = '{"kind":"object","fields":{';
    let count = 0;
    for (const name in fields) {
      count += 1;
      if (count > SHAPE_MAX_FIELDS || !fieldNameFits(name)) return null;
      const child = levelText((fields as Record<string, unknown>)[name], level + 1);
      if (child === null) return null;
      out += `${count === 1 ? '' : ','}${NEEDS_JSON_ESCAPE.test(name) ? JSON.stringify(name) : `"${name}"`}:${child}`;
    }
    return `${out}}}`;
  }
  if (hasFields) return null;
  if (kind === 'array') {
    if (!hasItems) return '{"kind":"array"}';
    const child = levelText(items, level + 1);
    return child === null ? null : `{"kind":"array","items":${child}}`;
  }
  return hasItems ? null : `{"kind":"${kind}"}`;
}

/** ajv's maxLength counts code points (a surrogate pair is one character), as this does. */
function fieldNameFits(name: string): boolean {
  if (name.length <= SHAPE_MAX_FIELD_NAME) return true;
  let length = 0;
  for (const _ of name) length += 1;
  return length <= SHAPE_MAX_FIELD_NAME;
}
