// The reduced schemas are graphs, not trees: an `allOf` that inlines a definition shares that
// definition's sub-schemas by reference, so one object can sit under many members. Written out as
// a tree, a document of a few kilobytes unfolds to gigabytes (two members a level double it). A
// schema whose tree is much larger than its graph is therefore written with every large shared
// sub-schema moved into `$defs` once, named by its content, and referenced from each place; every
// later step (fingerprint, storage, the analyzer's compile, coverage) then reads each once.
// A schema whose tree stays close to its graph is written as it is, so ordinary documents keep
// their stored form and fingerprints.

import { createHash } from 'node:crypto';
import { canonicalJson } from '../fingerprint.js';
import { fragmentRef, isPlainObject, setOwn } from './jsonPointer.js';

/**
 * Prefix of the `$defs` names of moved sub-schemas. Names of document definitions are either
 * component names (`[A-Za-z0-9._-]+`) or pointers starting with `/`, so these never collide.
 */
export const SHARED_NAME_PREFIX = 'shared:';

/** A tree up to this many times its graph (or up to MIN_UNFOLDED_NODES) is written as it is. */
const MAX_UNFOLD_RATIO = 4;
const MIN_UNFOLDED_NODES = 1_000;
/** Smaller shared sub-schemas are copied at each place: a reference would save little. */
const MIN_SHARED_NODES = 32;

type Schema = Record<string, unknown>;

export interface WrittenSchema {
  /** The schema to store in place of the graph (the graph's own root when nothing moved). */
  schema: unknown;
  /** Moved sub-schemas by `$defs` name. */
  moved: Map<string, Schema>;
}

/**
 * Writes the schema graph under `root` so that its stored size follows the graph, not its
 * unfolding. `origin` receives, for every object written anew, the graph object it copies (the
 * importer's notes on unchecked sub-schemas are kept by object identity).
 */
export function writeShared(root: unknown, origin: WeakMap<object, object>): WrittenSchema {
  if (!isPlainObject(root)) return { schema: root, moved: new Map() };
  const graph = measure(root);
  const unfolded = graph.unfolded.get(root) as number;
  if (unfolded <= Math.max(MIN_UNFOLDED_NODES, MAX_UNFOLD_RATIO * graph.unfolded.size)) return { schema: root, moved: new Map() };

  const moved = new Map<string, Schema>();
  const written = new Map<Schema, Schema>();
  const names = new Map<Schema, string>();
  const write = (node: Schema): Schema => {
    const done = written.get(node);
    if (done) return done;
    const out: Schema = {};
    for (const key of Object.keys(node)) setOwn(out, key, node[key]);
    forEachSubschema(node, (child, put) => {
      const copy = write(child);
      const shared = (graph.parents.get(child) as number) >= 2 && (graph.unfolded.get(child) as number) >= MIN_SHARED_NODES;
      if (!shared) return put(out, copy);
      let name = names.get(child);
      if (name === undefined) {
        name = SHARED_NAME_PREFIX + createHash('sha256').update(canonicalJson(copy)).digest('hex').slice(0, 24);
        names.set(child, name);
        moved.set(name, copy);
      }
      put(out, { $ref: fragmentRef(['$defs', name]) });
    });
    origin.set(out, node);
    written.set(node, out);
    return out;
  };
  return { schema: write(root), moved };
}

interface Graph {
  /** Distinct objects of the graph → the size of their unfolded tree, in schema objects. */
  unfolded: Map<Schema, number>;
  /** How many places hold each object. */
  parents: Map<Schema, number>;
}

function measure(root: Schema): Graph {
  const unfolded = new Map<Schema, number>();
  const parents = new Map<Schema, number>();
  // Depth is bounded by the importer's nesting limits, so recursion stays shallow.
  const visit = (node: Schema): number => {
    const known = unfolded.get(node);
    if (known !== undefined) return known;
    let size = 1;
    forEachSubschema(node, (child) => {
      parents.set(child, (parents.get(child) ?? 0) + 1);
      size += visit(child);
    });
    unfolded.set(node, size);
    return size;
  };
  visit(root);
  return { unfolded, parents };
}

/**
 * Calls `each` with every sub-schema object of `node` (declared properties, `items`, an
 * `additionalProperties` schema) and a setter that writes a replacement at the same place of a copy.
 */
export function forEachSubschema(node: Schema, each: (child: Schema, put: (copy: Schema, value: unknown) => void) => void): void {
  const properties = Object.hasOwn(node, 'properties') ? node.properties : undefined;
  if (isPlainObject(properties)) {
    let copied: Schema | undefined;
    for (const name of Object.keys(properties)) {
      const child = properties[name];
      if (!isPlainObject(child)) continue;
      each(child, (copy, value) => {
        if (copied === undefined) {
          copied = {};
          for (const key of Object.keys(properties)) setOwn(copied, key, properties[key]);
          copy.properties = copied;
        }
        setOwn(copied, name, value);
      });
    }
  }
  for (const key of ['items', 'additionalProperties'] as const) {
    const child = Object.hasOwn(node, key) ? node[key] : undefined;
    if (isPlainObject(child))
      each(child, (copy, value) => {
        copy[key] = value;
      });
  }
}
