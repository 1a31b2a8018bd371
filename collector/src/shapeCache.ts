// The recent shapes seen per operation (method, route, payload location, status), each with its
// canonical text and fingerprint. The bodies of one operation have a handful of structures (a
// field null or not, an optional object present or not): checking a body against a remembered
// shape (matchesShape) allocates nothing, where building a tree, serialising it canonically and
// hashing it is most of an observation's cost (bench/RESULTS.md).

import { shapeDigest, type ShapeDigest } from './fingerprint.js';
import { matchesShape, shapeOf, type ShapeLimits } from './shape.js';
import type { SchemaShape } from './types.js';

/** Shapes remembered per operation, most recently matched first. */
const SHAPES_PER_OPERATION = 8;
/** Operations remembered at most; past it the cache starts over (a bound, not an LRU). */
const MAX_OPERATIONS = 1024;

interface Entry {
  shape: SchemaShape;
  digest: ShapeDigest;
}

export class ShapeCache {
  private readonly operations = new Map<string, Entry[]>();

  constructor(private readonly limits: ShapeLimits) {}

  /** The digest of `value`'s shape; throws what shapeOf throws (an unreadable value). */
  digestOf(operation: string, value: unknown): ShapeDigest {
    let recent = this.operations.get(operation);
    if (recent !== undefined) {
      for (let i = 0; i < recent.length; i++) {
        const entry = recent[i];
        if (!matchesShape(value, entry.shape, this.limits)) continue;
        if (i > 0) {
          recent.splice(i, 1);
          recent.unshift(entry);
        }
        return entry.digest;
      }
    } else {
      if (this.operations.size >= MAX_OPERATIONS) this.operations.clear();
      recent = [];
      this.operations.set(operation, recent);
    }
    const shape = shapeOf(value, this.limits);
    const digest = shapeDigest(shape);
    recent.unshift({ shape, digest });
    if (recent.length > SHAPES_PER_OPERATION) recent.pop();
    return digest;
  }
}
