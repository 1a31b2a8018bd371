// The recent shapes seen per operation (method, route, payload location, status), each with its
// canonical text and fingerprint. The bodies of one operation have a handful of structures (a
// field null or not, an optional object present or not): checking a body against a remembered
// shape (matchesShape) allocates nothing, where building a tree, serialising it canonically and
// hashing it is most of an observation's cost (bench/RESULTS.md).

import { compileMatcher, type CompiledMatcher } from './compiledMatcher.js';
import { shapeDigest, type ShapeDigest } from './fingerprint.js';
import { matchesShape, shapeMatcher, shapeOf, type ShapeLimits, type ShapeMatcher } from './shape.js';

/**
 * Shapes remembered per operation, the most often matched first (bodies of an operation often
 * cycle through their variants: most-recent-first would try the right one last).
 */
const SHAPES_PER_OPERATION = 8;
/** Operations remembered at most; past it the cache starts over (a bound, not an LRU). */
const MAX_OPERATIONS = 1024;

/** Matches of a shape before its check is generated (compiledMatcher.ts): a shape seen once costs no code. */
const COMPILE_AFTER_HITS = 2;

interface Entry {
  matcher: ShapeMatcher;
  digest: ShapeDigest;
  hits: number;
  /** The generated check, once the shape recurred; null when it could not be generated. */
  compiled: CompiledMatcher | null | undefined;
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
        if (!(entry.compiled ? entry.compiled(value) : matchesShape(value, entry.matcher, this.limits))) continue;
        entry.hits++;
        if (entry.compiled === undefined && entry.hits > COMPILE_AFTER_HITS) entry.compiled = compileMatcher(entry.matcher, this.limits);
        for (let j = i; j > 0 && recent[j - 1].hits < entry.hits; j--) {
          recent[j] = recent[j - 1];
          recent[j - 1] = entry;
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
    // A new shape replaces the least matched one.
    if (recent.length >= SHAPES_PER_OPERATION) recent.pop();
    recent.push({ matcher: shapeMatcher(shape), digest, hits: 1, compiled: undefined });
    return digest;
  }
}
