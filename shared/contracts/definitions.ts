// Storage of operation schemas with one copy of each definition per contract version. An
// imported operation's schema is self-contained (its `$defs` hold every definition it reaches),
// which is what the API returns and fingerprints; stored that way, a definition shared by every
// operation of a vendor document is written once per operation. So the version keeps the
// `$defs` members once and each operation is stored without them; reads put back what each
// operation reaches.

import { canonicalJson } from '../fingerprint.js';
import { isPlainObject, parseReference, setOwn } from './jsonPointer.js';
import { compare } from './schemaSubset.js';
import { forEachSubschema } from './sharedSubschemas.js';

type Schema = Record<string, unknown>;

export interface StoredSchemas {
  /** `$defs` members by name, each once. */
  definitions: Schema;
  /** The operations' schemas without the members moved to `definitions`, in input order. */
  schemas: Schema[];
}

/**
 * Moves the `$defs` members of `schemas` into one map. Members of the same name are the same
 * definition when they come from one import (the same object); a schema whose member differs
 * from the one already kept under its name keeps all of its `$defs` (never seen from an import).
 */
export function splitDefinitions(schemas: readonly Schema[]): StoredSchemas {
  const definitions = new Map<string, unknown>();
  const canonical = new WeakMap<object, string>();
  const same = (a: unknown, b: unknown): boolean => a === b || canonicalOf(a, canonical) === canonicalOf(b, canonical);
  const stored = schemas.map((schema) => {
    const defs = Object.hasOwn(schema, '$defs') ? schema.$defs : undefined;
    if (!isPlainObject(defs)) return schema;
    const names = Object.keys(defs);
    if (names.some((name) => definitions.has(name) && !same(definitions.get(name), defs[name]))) return schema;
    for (const name of names) if (!definitions.has(name)) definitions.set(name, defs[name]);
    const { $defs: _moved, ...rest } = schema;
    return rest;
  });
  const out: Schema = {};
  for (const name of [...definitions.keys()].sort(compare)) setOwn(out, name, definitions.get(name));
  return { definitions: out, schemas: stored };
}

/**
 * The self-contained schema of a stored operation: `schema` with the members of `definitions` it
 * reaches as its `$defs` (the objects of `definitions`, shared by every operation read with it).
 * A schema stored with its own `$defs` is returned as it is.
 */
export function withDefinitions(schema: Schema, definitions: Schema): Schema {
  if (Object.hasOwn(schema, '$defs')) return schema;
  const reached = new Set<string>();
  const pending: unknown[] = [schema];
  while (pending.length > 0) {
    const node = pending.pop();
    if (!isPlainObject(node)) continue;
    const ref = Object.hasOwn(node, '$ref') ? node.$ref : undefined;
    if (typeof ref === 'string') {
      const parsed = parseReference(ref);
      const name = parsed.kind === 'local' && parsed.tokens.length === 2 && parsed.tokens[0] === '$defs' ? parsed.tokens[1] : undefined;
      if (name !== undefined && !reached.has(name) && Object.hasOwn(definitions, name)) {
        reached.add(name);
        pending.push(definitions[name]);
      }
    }
    forEachSubschema(node, (child) => pending.push(child));
  }
  if (reached.size === 0) return schema;
  const $defs: Schema = {};
  for (const name of [...reached].sort(compare)) setOwn($defs, name, definitions[name]);
  return { ...schema, $defs };
}

function canonicalOf(value: unknown, cache: WeakMap<object, string>): string {
  if (typeof value !== 'object' || value === null) return canonicalJson(value);
  let text = cache.get(value);
  if (text === undefined) {
    text = canonicalJson(value);
    cache.set(value, text);
  }
  return text;
}
