import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ObservationEnvelope } from '../shared/envelope/types.js';
import { validateEnvelope } from '../shared/envelope/validate.js';
import { canonicalJson as referenceCanonicalJson, fingerprint as referenceFingerprint } from '../shared/fingerprint.js';
import { backoffDelayMs } from '../collector/src/backoff.js';
import { SendBudget, SlidingWindow, WINDOW_MS } from '../collector/src/budget.js';
import { canonicalJson } from '../collector/src/canonicalJson.js';
import { createCollector } from '../collector/src/collector.js';
import type { CollectorOptions, Observation, SchemaShape } from '../collector/src/types.js';
import { MAX_ENVELOPE_BYTES, acceptedOf } from '../collector/src/delivery.js';
import { buildEnvelope } from '../collector/src/envelope.js';
import { fingerprint, shapeDigest } from '../collector/src/fingerprint.js';
import { createKeyedHasher, hashNamespaceOf } from '../collector/src/keyedHash.js';
import { settingsOf, type Settings } from '../collector/src/options.js';
import { BoundedQueue } from '../collector/src/queue.js';
import { httpDateMs, parseRetryAfterMs } from '../collector/src/retryAfter.js';
import {
  DEFAULT_SHAPE_LIMITS,
  PLACEHOLDER_SHAPE,
  matchesShape,
  mergeShapes,
  shapeLimitsOf,
  shapeMatcher,
  shapeOf,
} from '../collector/src/shape.js';
import { ShapeCache } from '../collector/src/shapeCache.js';
import { compileMatcher } from '../collector/src/compiledMatcher.js';
import { MARK, assertNoValues, assertOnlyStructure, markedValues } from './helpers/collector.js';
import { freePort } from './helpers/ports.js';

// The collector library's pure parts: shapes and their fingerprints, keyed hashes, Retry-After,
// backoff, and the envelopes it builds (each must pass the edge's own validator and carry no
// value of the observed body). Delivery against the real edge: collectorDelivery.test.ts.

const S = { kind: 'string' } as const;
const I = { kind: 'integer' } as const;
const N = { kind: 'number' } as const;
const B = { kind: 'boolean' } as const;
const NULL = { kind: 'null' } as const;
const obj = (fields: Record<string, SchemaShape>): SchemaShape => ({ kind: 'object', fields });
const arr = (items?: SchemaShape): SchemaShape => (items === undefined ? { kind: 'array' } : { kind: 'array', items });

const BASE_OPTIONS: CollectorOptions = {
  endpoint: 'http://127.0.0.1:9',
  integrationKey: 'svc_int_core_test',
  connectionKey: 'svc_conn_v1.core',
  ingestToken: `svc_ing_${'a'.repeat(43)}`,
  direction: 'outbound',
  protocol: 'http-api',
  hashKey: 'core-test-key',
  connectionCheck: false,
};

function settings(overrides: Partial<CollectorOptions> = {}): Settings {
  const checked = settingsOf({ ...BASE_OPTIONS, ...overrides });
  if ('error' in checked) throw new Error(checked.error);
  return checked.settings;
}

/** Builds and parses one envelope, failing the test if it was not built. */
function envelopeOf(observation: Observation, s: Settings = settings()): ObservationEnvelope {
  const built = buildEnvelope(observation, s);
  if (!built.ok) throw new Error(built.error);
  return JSON.parse(built.text);
}

describe('remembered shapes (shapeCache.ts)', () => {
  const limits = shapeLimitsOf({ maxDepth: 6, maxFields: 5, maxArrayItems: 4 });
  const json = fc.jsonValue({ maxDepth: 7 });

  it('matchesShape is true only for a value whose shape is exactly the one given (it may say false when unsure)', () => {
    fc.assert(
      fc.property(json, json, (a, b) => {
        const shape = shapeOf(a, limits);
        if (matchesShape(b, shapeMatcher(shape), limits)) expect(shapeOf(b, limits)).toStrictEqual(shape);
      }),
      { numRuns: 2_000 },
    );
  });

  it('matches the usual case: the same structure with other values', () => {
    const shape = shapeMatcher(shapeOf({ id: 'a', n: 1, tags: ['x'], nested: { ok: true, at: null } }));
    expect(matchesShape({ id: 'b', n: 2, tags: ['y', 'z'], nested: { ok: false, at: null } }, shape)).toBe(true);
    expect(matchesShape({ id: 'b', n: 2.5, tags: ['y'], nested: { ok: false, at: null } }, shape)).toBe(false);
    expect(matchesShape({ id: 'b', n: 2, tags: ['y'], nested: { ok: false, at: null, extra: 1 } }, shape)).toBe(false);
    expect(matchesShape({ id: 'b', n: 2, tags: ['y'], nested: { ok: false } }, shape)).toBe(false);
  });

  it('gives the digest a fresh build gives, for every body of an operation, whatever it saw before', () => {
    fc.assert(
      fc.property(fc.array(json, { minLength: 1, maxLength: 20 }), (bodies) => {
        const cache = new ShapeCache(limits);
        for (const body of bodies) expect(cache.digestOf('GET /x response 200', body)).toStrictEqual(shapeDigest(shapeOf(body, limits)));
      }),
      { numRuns: 300 },
    );
  });
});

describe('generated shape checks (compiledMatcher.ts)', () => {
  const limits = shapeLimitsOf({ maxDepth: 6, maxFields: 5, maxArrayItems: 4 });
  const json = fc.jsonValue({ maxDepth: 7 });
  /** The same structure with other values (strings, integers, numbers and booleans changed). */
  const revalued = (value: unknown, salt: number): unknown => {
    if (typeof value === 'string') return `${value}${salt}`;
    if (typeof value === 'number') return Number.isInteger(value) ? value + salt : Math.floor(value) + 0.5;
    if (typeof value === 'boolean') return !value;
    if (Array.isArray(value)) return value.map((item) => revalued(item, salt));
    if (value !== null && typeof value === 'object') {
      const copy: Record<string, unknown> = {};
      for (const [name, field] of Object.entries(value))
        Object.defineProperty(copy, name, { value: revalued(field, salt), enumerable: true, writable: true, configurable: true });
      return copy;
    }
    return value;
  };
  const compiledOf = (value: unknown, under = limits) => {
    const matcher = shapeMatcher(shapeOf(value, under));
    return { matcher, compiled: compileMatcher(matcher, under) };
  };

  it('answer as the generic walk on JSON values, other bodies and the same structure with other values', () => {
    fc.assert(
      fc.property(json, json, fc.integer({ min: 1, max: 9 }), (a, b, salt) => {
        const { matcher, compiled } = compiledOf(a);
        if (compiled === null) return; // a field named __proto__ (below)
        expect(compiled(b)).toBe(matchesShape(b, matcher, limits));
        const same = revalued(a, salt);
        expect(compiled(same)).toBe(matchesShape(same, matcher, limits));
        expect(compiled(a)).toBe(matchesShape(a, matcher, limits));
      }),
      { numRuns: 3_000 },
    );
  });

  it('read kinds as shapeOf does, and say false when unsure', () => {
    const { compiled } = compiledOf(
      { id: 'a', n: 1, x: 1.5, gone: null, tags: ['t'], none: [], nested: { ok: true } },
      DEFAULT_SHAPE_LIMITS,
    );
    const check = compiled!;
    expect(check({ id: 'b', n: 2, x: 2.5, gone: null, tags: ['u', 'v'], none: [], nested: { ok: false } })).toBe(true);
    expect(check({ id: 'b', n: 2, x: 2.5, gone: Number.NaN, tags: ['u'], none: [], nested: { ok: false } })).toBe(true);
    expect(check({ id: 'b', n: 2.5, x: 2.5, gone: null, tags: ['u'], none: [], nested: { ok: false } })).toBe(false);
    expect(check({ id: 'b', n: 2, x: 2, gone: null, tags: ['u'], none: [], nested: { ok: false } })).toBe(false);
    expect(check({ id: 'b', n: 2, x: 2.5, gone: null, tags: [], none: [], nested: { ok: false } })).toBe(false);
    expect(check({ id: 'b', n: 2, x: 2.5, gone: null, tags: ['u'], none: [1], nested: { ok: false } })).toBe(false);
    expect(check({ id: 'b', n: 2, x: 2.5, gone: null, tags: ['u'], none: [], nested: { ok: false }, extra: 1 })).toBe(false);
    expect(check({ id: 'b', n: 2, x: 2.5, gone: null, tags: ['u'], none: [], nested: { ok: false, toJSON: () => ({}) } })).toBe(false);
    expect(check({ id: 'b', n: 2, x: 2.5, tags: ['u'], none: [], nested: { ok: false }, other: null })).toBe(false);
    class Body {
      id = 'b';
      n = 2;
      x = 2.5;
      gone = null;
      tags = ['u'];
      none = [];
      nested = { ok: false };
    }
    expect(check(new Body())).toBe(false);
    // An enumerable name on Object.prototype: for-in lists it everywhere, so nothing is certain.
    (Object.prototype as Record<string, unknown>).polluted = 1;
    try {
      expect(check({ id: 'b', n: 2, x: 2.5, gone: null, tags: ['u'], none: [], nested: { ok: false } })).toBe(false);
    } finally {
      delete (Object.prototype as Record<string, unknown>).polluted;
    }
    expect(compiledOf(JSON.parse('{"__proto__": {"a": 1}}')).compiled).toBeNull();
  });

  it('give the remembered shapes the digests a fresh build gives, bodies recurring', () => {
    fc.assert(
      fc.property(fc.array(json, { minLength: 1, maxLength: 6 }), fc.array(fc.nat(), { minLength: 10, maxLength: 40 }), (bodies, picks) => {
        const cache = new ShapeCache(limits);
        for (const [index, pick] of picks.entries()) {
          const body = revalued(bodies[pick % bodies.length], index + 1);
          expect(cache.digestOf('GET /x response 200', body)).toStrictEqual(shapeDigest(shapeOf(body, limits)));
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe('shapes (00-decisions §5)', () => {
  it('gives each JSON kind, integers apart from other numbers, and never a value', () => {
    expect(shapeOf({ id: 'ord_1', total: 12.5, qty: 3, big: 1e21, paid: false, note: null, tags: ['a'], lines: [] })).toStrictEqual(
      obj({
        big: I,
        id: S,
        lines: arr(),
        note: NULL,
        paid: B,
        qty: I,
        tags: arr(S),
        total: N,
      }),
    );
    expect(shapeOf('x')).toStrictEqual(S);
    expect(shapeOf(-0)).toStrictEqual(I);
    expect(shapeOf(1.0)).toStrictEqual(I);
    expect(shapeOf(Number.NaN)).toStrictEqual(NULL);
    expect(shapeOf(10n)).toStrictEqual(I);
    // What JSON.stringify would write: Dates through toJSON, undefined and functions left out.
    expect(shapeOf({ at: new Date(0), gone: undefined, fn: () => 1, list: [undefined] })).toStrictEqual(obj({ at: S, list: arr(NULL) }));
    // A field name is data: `__proto__` of a parsed body is a field like any other.
    const proto = shapeOf(JSON.parse('{"__proto__": {"a": 1}, "b": [{"__proto__": true}, {"__proto__": 1}]}')) as {
      fields: Record<string, SchemaShape>;
    };
    expect(Object.getPrototypeOf(proto.fields)).toBe(Object.prototype);
    expect(canonicalJson(proto)).toBe(
      '{"fields":{"__proto__":{"fields":{"a":{"kind":"integer"}},"kind":"object"},"b":{"items":{"fields":{"__proto__":{"kind":"integer"}},"kind":"object"},"kind":"array"}},"kind":"object"}',
    );
  });

  it('keeps the first maxFields names in code-unit order and leaves out names over 256 characters', () => {
    const limits = shapeLimitsOf({ maxFields: 3 });
    expect(shapeOf({ d: 1, b: 1, '10': 1, '9': 1, a: 1 }, limits)).toStrictEqual(obj({ '10': I, '9': I, a: I }));
    expect(shapeOf({ ['x'.repeat(257)]: 1, ['y'.repeat(256)]: 's' })).toStrictEqual(obj({ ['y'.repeat(256)]: S }));
    const wide = Object.fromEntries(Array.from({ length: 600 }, (_, i) => [`f${String(i).padStart(3, '0')}`, i]));
    const fields = Object.keys((shapeOf(wide) as { fields: object }).fields);
    expect(fields).toHaveLength(500);
    expect(fields[0]).toBe('f000');
    expect(fields[499]).toBe('f499');
  });

  it('cuts containers at the last level: the field is left out, an array keeps no items', () => {
    const limits = shapeLimitsOf({ maxDepth: 3 });
    expect(shapeOf({ a: { leaf: 1, deep: { x: 1 }, list: [1] }, b: [[1], [2]], c: [{ x: 1 }] }, limits)).toStrictEqual(
      obj({
        a: obj({ leaf: I }),
        b: arr(),
        c: arr(),
      }),
    );
    expect(shapeOf({ b: [1, 2], c: [{ x: 1 }] }, shapeLimitsOf({ maxDepth: 4 }))).toStrictEqual(obj({ b: arr(I), c: arr(obj({ x: I })) }));
    // The edge's own bound: 32 levels, the last holding leaves only.
    let deep: unknown = 'bottom';
    for (let i = 0; i < 40; i++) deep = { next: deep };
    let node = shapeOf(deep);
    let levels = 1;
    while (node.kind === 'object' && Object.keys(node.fields).length > 0) {
      node = node.fields.next;
      levels++;
    }
    expect(levels).toBe(31);
    expect(node).toStrictEqual(obj({}));
    // Out-of-range limits are clamped into what the edge accepts.
    expect(shapeLimitsOf({ maxDepth: 99, maxFields: 10_000, maxArrayItems: 0 })).toStrictEqual({
      maxDepth: 32,
      maxFields: 500,
      maxArrayItems: 1,
    });
    expect(shapeLimitsOf({ maxDepth: 1 }).maxDepth).toBe(2);
  });

  it('examines the first maxArrayItems items only', () => {
    const items = [...Array.from({ length: 64 }, () => 1), 'late'];
    expect(shapeOf(items)).toStrictEqual(arr(I));
    expect(shapeOf(items, shapeLimitsOf({ maxArrayItems: 65 }))).toStrictEqual(arr(S));
  });

  describe('arrays whose items differ', () => {
    it('merges integer and number into number', () => {
      expect(shapeOf([1, 2, 2.5])).toStrictEqual(arr(N));
      expect(shapeOf([1, 2, 3])).toStrictEqual(arr(I));
    });

    it('merges objects field by field (union, recursively)', () => {
      expect(
        shapeOf([{ id: 'a', qty: 1 }, { id: 'b', price: 2.5 }, { id: 'c', qty: 1.5, meta: { x: 1 } }, { meta: { y: true } }]),
      ).toStrictEqual(
        arr(
          obj({
            id: S,
            meta: obj({ x: I, y: B }),
            price: N,
            qty: N,
          }),
        ),
      );
    });

    it('shows a type change in a minority of items (least frequent kind wins)', () => {
      const lines = Array.from({ length: 9 }, () => ({ sku: 'a', total: 10 }));
      lines.splice(4, 0, { sku: 'b', total: '10.00' as unknown as number });
      expect(shapeOf({ lines })).toStrictEqual(obj({ lines: arr(obj({ sku: S, total: S })) }));
      expect(shapeOf([1, 2, 3, 'x'])).toStrictEqual(arr(S));
      expect(shapeOf(['x', 'y', null])).toStrictEqual(arr(NULL));
      expect(shapeOf([{ a: 1 }, { a: 2 }, [1]])).toStrictEqual(arr(arr(I)));
    });

    it('breaks ties by the kind whose first occurrence comes last', () => {
      expect(shapeOf([1, 'x'])).toStrictEqual(arr(S));
      expect(shapeOf(['x', 1])).toStrictEqual(arr(I));
      expect(shapeOf([true, 'x', 'y', false, null, 1, 2])).toStrictEqual(arr(NULL));
    });

    it('is the same rule whatever the nesting (mergeShapes)', () => {
      expect(mergeShapes([obj({ a: I }), obj({ a: S }), obj({ a: I })])).toStrictEqual(obj({ a: S }));
      expect(mergeShapes([arr(), arr(I), arr(N)])).toStrictEqual(arr(N));
      expect(mergeShapes([S])).toStrictEqual(S);
    });
  });

  it('gives up (not inspected) on a value with too many nodes to read, e.g. a cycle', () => {
    const cyclic: Record<string, unknown> = {};
    for (let i = 0; i < 20; i++) cyclic[`k${i}`] = cyclic;
    const envelope = envelopeOf({ routeTemplate: '/v1/orders', statusCode: 200, durationMs: 1, body: { json: cyclic } });
    expect(envelope.payload.schemaInspected).toBe(false);
    expect(envelope.payload.schemaShape).toStrictEqual(PLACEHOLDER_SHAPE);
  });
});

const shapeNames = fc.oneof(
  fc.string({ maxLength: 8 }),
  fc.string({ unit: 'binary', maxLength: 6 }),
  fc.constantFrom('10', '9', 'a', 'B', 'é', '😀', '\u{10FFFF}', ''),
);
const shapes = fc.letrec<{ shape: SchemaShape; object: SchemaShape; array: SchemaShape; leaf: SchemaShape }>((tie) => ({
  shape: fc.oneof({ depthSize: 'small' }, tie('leaf'), tie('object'), tie('array')),
  leaf: fc.constantFrom<SchemaShape>(S, I, N, B, NULL),
  object: fc.dictionary(shapeNames, tie('shape'), { maxKeys: 8 }).map((fields) => obj(fields)),
  array: fc.option(tie('shape'), { nil: undefined }).map((items) => arr(items)),
})).shape;

describe('canonical JSON and fingerprints (00-decisions §4)', () => {
  it('equal shared/fingerprint.ts on random shapes', () => {
    fc.assert(
      fc.property(shapes, (shape) => {
        expect(canonicalJson(shape)).toBe(referenceCanonicalJson(shape));
        expect(shapeDigest(shape).fingerprint).toBe(referenceFingerprint(shape));
      }),
      { numRuns: 500 },
    );
  });

  it('equal shared/fingerprint.ts on random JSON values', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(canonicalJson(value)).toBe(referenceCanonicalJson(value));
        expect(fingerprint(value)).toBe(referenceFingerprint(value));
      }),
      { numRuns: 300 },
    );
  });

  it('are those of the shape built from random JSON bodies', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const shape = shapeOf(value);
        const text = referenceCanonicalJson(shape);
        expect(shapeDigest(shape)).toStrictEqual({
          text,
          fingerprint: referenceFingerprint(shape),
          bytes: Buffer.byteLength(text, 'utf8'),
        });
      }),
      { numRuns: 300 },
    );
  });
});

describe('keyed hashes', () => {
  it("are HMAC-SHA256 with the sender's key, prefixed with the algorithm", () => {
    const hash = createKeyedHasher('k1');
    const expected = createHmac('sha256', 'k1').update('evt-42').digest('hex');
    expect(hash('evt-42')).toBe(`hmac-sha256:${expected}`);
    expect(createKeyedHasher(new TextEncoder().encode('k1'))('evt-42')).toBe(hash('evt-42'));
    expect(createKeyedHasher('k2')('evt-42')).not.toBe(hash('evt-42'));
    expect(hash('evt-42')).toMatch(/^hmac-sha256:[0-9a-f]{64}$/);
  });

  it('use a random key per process when none is given', () => {
    expect(createKeyedHasher()('same')).not.toBe(createKeyedHasher()('same'));
  });

  it('name a versioned scheme', () => {
    expect(hashNamespaceOf(undefined)).toBe('default/v1');
    expect(hashNamespaceOf('orders')).toBe('orders/v1');
    expect(hashNamespaceOf('has space')).toBeNull();
    expect(hashNamespaceOf('x'.repeat(126))).toBeNull();
    expect(hashNamespaceOf('x'.repeat(125))).toHaveLength(128);
  });
});

/**
 * The edge's window as ingest/admission/scripts.ts counts it: one-second buckets of the edge's
 * clock, a bucket counted while it is one of the last 60 (so a unit counts 59 to 60 seconds).
 */
class EdgeWindowModel {
  private readonly buckets = new Map<number, number>();
  constructor(private readonly limit: number) {}
  fits(edgeNowMs: number, cost: number): boolean {
    const bucket = Math.floor(edgeNowMs / 1_000);
    let sum = 0;
    for (const [at, count] of this.buckets) if (at >= bucket - 59) sum += count;
    return sum + cost <= this.limit;
  }
  add(edgeNowMs: number, cost: number): void {
    const bucket = Math.floor(edgeNowMs / 1_000);
    this.buckets.set(bucket, (this.buckets.get(bucket) ?? 0) + cost);
  }
}

describe('the budget windows (budget.ts)', () => {
  it('takes the whole minute at once, and each place again 60 s after it was taken', () => {
    const window = new SlidingWindow(6_000);
    const t0 = 1_700_000_000_000;
    let taken = 0;
    while (window.take(t0)) taken++;
    expect(taken).toBe(6_000);
    expect(window.take(t0 + WINDOW_MS - 1)).toBe(false);
    for (let i = 0; i < 6_000; i++) expect(window.take(t0 + WINDOW_MS)).toBe(true);
    expect(window.take(t0 + WINDOW_MS)).toBe(false);
  });

  it('admits exactly what fits the last 60 seconds, whatever the arrivals', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 1_000 }),
        // Arrivals: a gap in ms, then a burst of calls at one instant.
        fc.array(fc.tuple(fc.integer({ min: 0, max: 3_000 }), fc.integer({ min: 1, max: 60 })), {
          minLength: 1,
          maxLength: 1_500,
          size: 'max',
        }),
        (perMinute, arrivals) => {
          const window = new SlidingWindow(perMinute);
          const admitted: number[] = [];
          let oldest = 0;
          let now = 0;
          for (const [gap, burst] of arrivals) {
            now += gap;
            for (let i = 0; i < burst; i++) {
              while (oldest < admitted.length && admitted[oldest] <= now - WINDOW_MS) oldest++;
              const inWindow = admitted.length - oldest;
              // Never more than the budget, and never a refusal while there is room.
              if (window.take(now) !== inWindow < perMinute) return false;
              if (inWindow < perMinute) admitted.push(now);
            }
          }
          return true;
        },
      ),
      { numRuns: 100 },
    );
  });

  it('never sends what the edge refuses: batches counted from their answers, whatever the latency and clock offset', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 2_000 }),
        fc.integer({ min: 1, max: 100 }),
        // The edge's clock minus the collector's.
        fc.integer({ min: -5_000, max: 5_000 }),
        // Attempts: a gap in ms, a batch size, the latency to the edge and back.
        fc.array(
          fc.tuple(
            fc.integer({ min: 0, max: 2_000 }),
            fc.integer({ min: 1, max: 50 }),
            fc.integer({ min: 0, max: 800 }),
            fc.integer({ min: 0, max: 800 }),
          ),
          { minLength: 1, maxLength: 600, size: 'max' },
        ),
        (observationsPerMinute, requestsPerMinute, offsetMs, attempts) => {
          const budget = new SendBudget(requestsPerMinute, observationsPerMinute);
          const edgeRequests = new EdgeWindowModel(requestsPerMinute);
          const edgeObservations = new EdgeWindowModel(observationsPerMinute);
          // Events in the collector's time: a batch reaching the edge, its answer reaching the collector.
          const events: { at: number; kind: 'arrive' | 'answer'; size: number; up?: { admitted: boolean } }[] = [];
          let refused = 0;
          let sent = 0;
          let now = 0;
          const runUntil = (until: number) => {
            events.sort((a, b) => a.at - b.at || (a.kind === 'arrive' ? -1 : 1));
            while (events.length > 0 && events[0].at <= until) {
              const event = events.shift() as (typeof events)[number];
              if (event.kind === 'arrive') {
                // The edge checks both windows before counting in either (one atomic script).
                const edgeNow = event.at + offsetMs;
                const admitted = edgeRequests.fits(edgeNow, 1) && edgeObservations.fits(edgeNow, event.size);
                if (admitted) {
                  edgeRequests.add(edgeNow, 1);
                  edgeObservations.add(edgeNow, event.size);
                } else {
                  refused++;
                }
                (event.up as { admitted: boolean }).admitted = admitted;
              } else {
                budget.answered(event.at, event.size, (event.up as { admitted: boolean }).admitted);
              }
            }
          };
          for (const [gap, wanted, up, down] of attempts) {
            now += gap;
            runUntil(now);
            const size = budget.maxBatch(wanted);
            if (budget.waitMs(now, size) > 0) continue;
            budget.sent(size);
            sent++;
            const outcome = { admitted: false };
            events.push({ at: now + up, kind: 'arrive', size, up: outcome }, { at: now + up + down, kind: 'answer', size, up: outcome });
          }
          runUntil(Infinity);
          return refused === 0 && sent > 0;
        },
      ),
      { numRuns: 200 },
    );
  });

  it('waits for the window to free room, and only as long as needed', () => {
    const budget = new SendBudget(600, 6_000);
    for (let i = 0; i < 120; i++) budget.sent(50);
    // 6,000 in flight: nothing more until an answer comes.
    expect(budget.waitMs(0, 50)).toBe(Infinity);
    for (let i = 0; i < 60; i++) budget.answered(100, 50, true);
    for (let i = 0; i < 60; i++) budget.answered(200, 50, true);
    expect(budget.waitMs(300, 50)).toBe(100 + WINDOW_MS - 300);
    expect(budget.waitMs(100 + WINDOW_MS, 50)).toBe(0);
    // A 429 is in no window (the edge counted nothing).
    const refused = new SendBudget(1, 6_000);
    refused.sent(50);
    refused.answered(0, 50, false);
    expect(refused.waitMs(0, 50)).toBe(0);
  });

  it('holds at most min(limit, 60,000) entries, whatever the traffic', () => {
    const small = new SlidingWindow(6_000);
    const huge = new SlidingWindow(1_000_000_000);
    for (let t = 0; t < 200_000; t++) {
      small.take(t);
      huge.take(t);
    }
    expect(small.slots).toBeLessThanOrEqual(6_000);
    expect(huge.slots).toBeLessThanOrEqual(WINDOW_MS);
    expect(huge.used(200_000)).toBe(WINDOW_MS - 1);
  });

  it('0 lifts it; a clock stepped back frees nothing, and holds places no longer than its own 60 seconds', () => {
    const lifted = new SlidingWindow(0);
    for (let i = 0; i < 100_000; i++) expect(lifted.take(0)).toBe(true);
    expect(lifted.slots).toBe(0);
    const window = new SlidingWindow(60);
    const t0 = 10_000_000;
    for (let i = 0; i < 60; i++) expect(window.take(t0)).toBe(true);
    expect(window.take(t0)).toBe(false);
    const back = t0 - 3_600_000;
    expect(window.take(back)).toBe(false);
    expect(window.take(back + WINDOW_MS - 1)).toBe(false);
    expect(window.take(back + WINDOW_MS)).toBe(true);
    window.setLimit(0);
    expect(window.take(t0)).toBe(true);
  });
});

describe('Retry-After', () => {
  const now = Date.UTC(2026, 0, 15, 12, 0, 0);
  const MAX = 300_000;
  it.each([
    ['0', 0],
    ['1', 1_000],
    ['  7  ', 7_000],
    ['120', 120_000],
    ['007', 7_000],
    ['1000000', MAX],
    ['Thu, 15 Jan 2026 12:00:30 GMT', 30_000],
    ['Thursday, 15-Jan-26 12:00:05 GMT', 5_000],
    ['Thu Jan 15 12:01:00 2026', 60_000],
    ['Thu, 15 Jan 2026 11:00:00 GMT', 0],
    ['Thu, 15 Jan 2027 12:00:00 GMT', MAX],
  ])('reads %j as %i ms', (header, expected) => {
    expect(parseRetryAfterMs(header, MAX, now)).toBe(expected);
  });

  it.each([
    [undefined],
    [null],
    [''],
    ['   '],
    ['-1'],
    ['-0'],
    ['+5'],
    ['1.5'],
    ['1e3'],
    ['0x10'],
    ['NaN'],
    ['Infinity'],
    ['abc'],
    ['5 seconds'],
    ['5s'],
    ['1,2'],
    ['9999999999999'],
    ['Thu, 32 Jan 2026 12:00:00 GMT'],
    ['Thu, 30 Feb 2026 12:00:00 GMT'],
    ['Thu, 15 Jan 2026 25:00:00 GMT'],
    ['Thu, 15 Foo 2026 12:00:00 GMT'],
    ['2026-01-15T12:00:30Z'],
    ['Thu, 15 Jan 2026 12:00:30 UTC'],
    ['15 Jan 2026'],
    ['null'],
    ['undefined'],
    ['[object Object]'],
  ])('ignores %j', (header) => {
    expect(parseRetryAfterMs(header as string | undefined, MAX, now)).toBeUndefined();
  });

  it('ignores a repeated header and reads two-digit years of RFC 850 dates by the 50-year rule', () => {
    expect(parseRetryAfterMs(['1', '2'], MAX, now)).toBeUndefined();
    expect(httpDateMs('Sunday, 06-Nov-94 08:49:37 GMT', now)).toBe(Date.UTC(1994, 10, 6, 8, 49, 37));
    expect(httpDateMs('Sunday, 06-Nov-50 08:49:37 GMT', now)).toBe(Date.UTC(2050, 10, 6, 8, 49, 37));
  });
});

describe('backoff', () => {
  it('is full jitter under a capped exponential ceiling', () => {
    expect(backoffDelayMs(1, 500, 30_000, () => 0)).toBe(0);
    expect(backoffDelayMs(1, 500, 30_000, () => 0.9999999)).toBe(500);
    expect(backoffDelayMs(2, 500, 30_000, () => 0.9999999)).toBe(1000);
    expect(backoffDelayMs(7, 500, 30_000, () => 0.9999999)).toBe(30_000);
    expect(backoffDelayMs(10_000, 500, 30_000, () => 0.9999999)).toBe(30_000);
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 100 }),
        fc.integer({ min: 1, max: 5_000 }),
        fc.integer({ min: 0, max: 60_000 }),
        (failures, initial, extra) => {
          const max = initial + extra;
          const delay = backoffDelayMs(failures, initial, max);
          expect(Number.isInteger(delay)).toBe(true);
          expect(delay).toBeGreaterThanOrEqual(0);
          expect(delay).toBeLessThanOrEqual(Math.min(max, initial * 2 ** (failures - 1)));
        },
      ),
    );
  });
});

describe('a 207 answer', () => {
  it('counts its accepted items by results, else by accepted, else none', () => {
    const results = [
      { index: 0, accepted: true, eventId: 'evt_a' },
      { index: 1, accepted: false, issues: ['x'] },
      { index: 2, accepted: true, eventId: 'evt_c' },
    ];
    expect(acceptedOf(JSON.stringify({ accepted: 2, persisted: 1, results }), 3)).toBe(2);
    expect(acceptedOf(JSON.stringify({ accepted: 1 }), 3)).toBe(1);
    expect(acceptedOf(JSON.stringify({ accepted: 7 }), 3)).toBe(0);
    expect(acceptedOf('not json', 3)).toBe(0);
    expect(acceptedOf(JSON.stringify({ results: [...results, ...results] }), 3)).toBe(3);
  });
});

describe('the bounded queue', () => {
  it('drops its oldest item when full and stays in order across compactions', () => {
    const queue = new BoundedQueue(3);
    const item = (seq: number) => ({ seq, eventId: `evt_${seq}`, text: '{}', bytes: 2 });
    expect(queue.push(item(1))).toBe(0);
    queue.push(item(2));
    queue.push(item(3));
    expect(queue.push(item(4))).toBe(1);
    expect(queue.shift()?.seq).toBe(2);
    const big = new BoundedQueue(5000);
    for (let i = 0; i < 10_000; i++) big.push(item(i));
    for (let i = 5000; i < 8000; i++) expect(big.shift()?.seq).toBe(i);
    expect(big.length).toBe(2000);
    expect(big.clear().map((q) => q.seq)).toStrictEqual(Array.from({ length: 2000 }, (_, i) => 8000 + i));
  });

  it('drops its oldest items to stay within its bytes, and counts bytes through shift and clear', () => {
    const queue = new BoundedQueue(100, 10);
    const item = (seq: number, bytes: number) => ({ seq, eventId: `evt_${seq}`, text: 'x'.repeat(bytes), bytes });
    expect(queue.push(item(1, 4))).toBe(0);
    expect(queue.push(item(2, 4))).toBe(0);
    expect(queue.push(item(3, 6))).toBe(1);
    expect([queue.length, queue.bytes, queue.peek()?.seq]).toStrictEqual([2, 10, 2]);
    // An item over the bound on its own is still kept (alone): envelopes are under 1 MiB, the bound is 1 MiB or more.
    expect(queue.push(item(4, 20))).toBe(2);
    expect([queue.length, queue.bytes, queue.peek()?.seq]).toStrictEqual([1, 20, 4]);
    queue.shift();
    expect(queue.bytes).toBe(0);
    queue.push(item(5, 3));
    queue.clear();
    expect(queue.bytes).toBe(0);
  });
});

const PROTOCOL_CASES = [
  {
    direction: 'outbound',
    protocol: 'http-api',
    routeTemplate: '/v1/orders/{orderId}',
    methods: ['GET', 'POST', 'put', 'patch', 'DELETE', 'HEAD', 'OPTIONS'],
    locations: ['response', 'request', undefined],
  },
  {
    direction: 'inbound',
    protocol: 'http-webhook',
    routeTemplate: '/webhooks/orders',
    methods: ['POST', 'PUT', undefined],
    locations: ['message', undefined],
  },
  {
    direction: 'inbound',
    protocol: 'queue',
    routeTemplate: 'orders.created',
    methods: ['POST', undefined],
    locations: ['message', undefined],
  },
  {
    direction: 'outbound',
    protocol: 'queue',
    routeTemplate: 'orders.created',
    methods: ['POST', undefined],
    locations: ['message', undefined],
  },
  {
    direction: 'outbound',
    protocol: 'scheduled-feed',
    routeTemplate: 'nightly-orders-export',
    methods: ['POST', undefined],
    locations: ['message', undefined],
  },
] as const;

describe('envelopes', () => {
  it("pass the edge's own validator and carry no value of the body (property)", () => {
    const observation = fc.record({
      kind: fc.integer({ min: 0, max: PROTOCOL_CASES.length - 1 }),
      pick: fc.nat(),
      statusCode: fc.oneof(fc.constant(0), fc.integer({ min: 100, max: 599 })),
      durationMs: fc.double({ min: 0, max: 86_400_000, noNaN: true }),
      attempt: fc.integer({ min: 1, max: 1000 }),
      body: markedValues,
      raw: fc.boolean(),
      sourceEventId: fc.option(
        fc.string().map((s) => MARK + s),
        { nil: undefined },
      ),
      idempotencyKey: fc.option(
        fc.string().map((s) => MARK + s),
        { nil: undefined },
      ),
      businessObjectId: fc.option(
        fc.string().map((s) => MARK + s),
        { nil: undefined },
      ),
      accepted: fc.option(fc.boolean(), { nil: undefined }),
    });
    const settingsByCase = PROTOCOL_CASES.map((c) => settings({ direction: c.direction, protocol: c.protocol }));
    fc.assert(
      fc.property(observation, (o) => {
        const c = PROTOCOL_CASES[o.kind];
        const input: Observation = {
          method: c.methods[o.pick % c.methods.length],
          routeTemplate: c.routeTemplate,
          payloadLocation: c.locations[o.pick % c.locations.length],
          statusCode: o.statusCode,
          durationMs: o.durationMs,
          attempt: o.attempt,
          body: o.raw ? { raw: JSON.stringify(o.body), contentType: 'application/json; charset=utf-8' } : { json: o.body },
          correlation: { sourceEventId: o.sourceEventId, idempotencyKey: o.idempotencyKey },
          outcome: { accepted: o.accepted, businessObjectType: 'order', businessObjectId: o.businessObjectId },
        };
        const built = buildEnvelope(input, settingsByCase[o.kind]);
        if (!built.ok) throw new Error(built.error);
        const envelope = JSON.parse(built.text);
        const check = validateEnvelope(envelope);
        if (!check.valid) throw new Error(check.issues.join('; '));
        expect(built.bytes).toBe(Buffer.byteLength(built.text));
        expect(envelope.payload.schemaInspected).toBe(true);
        expect(envelope.payload.schemaFingerprint).toBe(referenceFingerprint(envelope.payload.schemaShape));
        assertOnlyStructure(envelope.payload.schemaShape);
        assertNoValues(built.text, o.body);
        for (const id of [o.sourceEventId, o.idempotencyKey, o.businessObjectId])
          if (id !== undefined) expect(built.text).not.toContain(id);
      }),
      { numRuns: 400 },
    );
  });

  it('hold what document 03 asks for, with the defaults of the options', () => {
    const envelope = envelopeOf({
      method: 'get',
      routeTemplate: '/v1/orders/{orderId}',
      statusCode: 201,
      durationMs: 12.5,
      occurredAt: Date.UTC(2026, 1, 3, 4, 5, 6, 7),
      body: { json: { id: 'x' } },
      correlation: { sourceEventId: 'evt-1' },
      outcome: { businessObjectType: 'order', businessObjectId: 'ord_1' },
      contractFingerprint: `sha256:${'ab'.repeat(32)}`,
    });
    const hash = createKeyedHasher('core-test-key');
    expect(envelope).toStrictEqual({
      envelopeVersion: '0.3',
      eventId: expect.stringMatching(/^evt_[0-9a-f]{32}$/),
      tenantId: 'ten_authenticated',
      environmentId: 'env_authenticated',
      integrationId: 'svc_int_core_test',
      direction: 'outbound',
      protocol: 'http-api',
      occurredAt: '2026-02-03T04:05:06.007Z',
      operationIdentityVersion: '1',
      eventType: 'get.response',
      correlation: { sourceEventIdHash: hash('evt-1'), hashNamespace: 'default/v1' },
      contract: { observedFingerprint: `sha256:${'ab'.repeat(32)}` },
      transport: {
        method: 'GET',
        routeTemplate: '/v1/orders/{orderId}',
        payloadLocation: 'response',
        statusCode: 201,
        durationMs: 12.5,
        attempt: 1,
      },
      payload: {
        storage: 'none',
        schemaFingerprint: referenceFingerprint(obj({ id: S })),
        schemaShape: obj({ id: S }),
        redactionPolicyVersion: 'collector-1',
        schemaInspected: true,
      },
      outcome: { accepted: true, businessObjectType: 'order', businessObjectIdHash: hash('ord_1') },
    });
    const queue = envelopeOf(
      { routeTemplate: 'orders.created', statusCode: 500, durationMs: 0 },
      settings({ direction: 'inbound', protocol: 'queue', hashNamespace: 'shop' }),
    );
    expect(queue).toMatchObject({
      eventType: 'orders.created',
      transport: { method: 'POST', payloadLocation: 'message' },
      outcome: { accepted: false },
      contract: { observedFingerprint: null },
    });
    expect(queue.correlation).toBeUndefined();
    const ids = envelopeOf(
      { routeTemplate: '/v1/x', statusCode: 200, durationMs: 0, correlation: { idempotencyKey: 'k' } },
      settings({ hashNamespace: 'shop' }),
    );
    expect(ids.correlation).toStrictEqual({ idempotencyKeyHash: expect.stringMatching(/^hmac-sha256:/), hashNamespace: 'shop/v1' });
  });

  it('say schemaInspected: false with the placeholder shape for bodies that were not inspected', () => {
    const s = settings({ maxInspectedBodyBytes: 16 });
    const placeholder = {
      schemaFingerprint: referenceFingerprint(PLACEHOLDER_SHAPE),
      schemaShape: PLACEHOLDER_SHAPE,
      schemaInspected: false,
    };
    const cases: Observation['body'][] = [
      undefined,
      { notInspected: 'stream' },
      { notInspected: 'too-large' },
      { raw: 'plain words', contentType: 'text/plain' },
      { raw: '{"a":1}', contentType: 'application/xml' },
      { raw: '{"a": "0123456789abcdef"}', contentType: 'application/json' },
      { raw: new Uint8Array(17).fill(32) },
      { raw: '{"a":' },
      { raw: new Uint8Array([0x7b, 0xff, 0x7d]) },
      { json: undefined },
    ];
    for (const body of cases) {
      const envelope = envelopeOf({ routeTemplate: '/v1/x', statusCode: 200, durationMs: 1, body }, s);
      expect(envelope.payload).toMatchObject(placeholder);
      expect(validateEnvelope(envelope).valid).toBe(true);
    }
    for (const body of [
      { raw: '{"a":1}' },
      { raw: '{"a":1}', contentType: 'application/problem+json' },
      { raw: new TextEncoder().encode('[1.5]') },
    ] as Observation['body'][]) {
      expect(envelopeOf({ routeTemplate: '/v1/x', statusCode: 200, durationMs: 1, body }, s).payload.schemaInspected).toBe(true);
    }
  });

  it('are not built from observations the edge would refuse', () => {
    const base: Observation = { routeTemplate: '/v1/orders', statusCode: 200, durationMs: 1 };
    const bad: Partial<Observation>[] = [
      { statusCode: 99 },
      { statusCode: 600 },
      { statusCode: 200.5 },
      { statusCode: -1 },
      { durationMs: -1 },
      { durationMs: 86_400_001 },
      { durationMs: Number.NaN },
      { attempt: 0 },
      { attempt: 1001 },
      { attempt: 1.5 },
      { method: 'TRACE' },
      { method: 'CONNECT' },
      { eventType: 'order created' },
      { eventType: 'order.créé' },
      { eventType: '' },
      { eventType: 'x'.repeat(129) },
      { eventType: 'a\tb' },
      { routeTemplate: '/v1/orders?id=1' },
      { routeTemplate: 'v1/orders' },
      { routeTemplate: '/v1/orders/123456' },
      { routeTemplate: '/v1/orders/0b5f6a5e-43e5-4b1c-9f53-3c7a2e1b8d11' },
      { routeTemplate: '/v1/reports/2026-01-02' },
      { routeTemplate: '/v1/with space' },
      { routeTemplate: '' },
      { routeTemplate: `/${'x'.repeat(256)}` },
      { payloadLocation: 'message' },
      { contractFingerprint: 'sha256:abc' },
      { occurredAt: new Date(Number.NaN) },
      { occurredAt: -1 },
      { outcome: { businessObjectType: 'with space' } },
      { correlation: { sourceEventId: 42 as unknown as string } },
    ];
    const s = settings();
    for (const override of bad) {
      const built = buildEnvelope({ ...base, ...override } as Observation, s);
      expect(built.ok, JSON.stringify(override)).toBe(false);
    }
    expect(buildEnvelope(null as unknown as Observation, s).ok).toBe(false);
    const queue = settings({ direction: 'outbound', protocol: 'queue' });
    expect(buildEnvelope({ routeTemplate: 'orders', method: 'GET', statusCode: 202, durationMs: 1 }, queue).ok).toBe(false);
    expect(buildEnvelope({ routeTemplate: 'orders?x', statusCode: 202, durationMs: 1 }, queue).ok).toBe(false);
    // The same route is a valid label for a queue and an invalid path for HTTP, in either order.
    expect(buildEnvelope({ routeTemplate: 'orders', statusCode: 202, durationMs: 1 }, queue).ok).toBe(true);
    expect(buildEnvelope({ routeTemplate: 'orders', statusCode: 200, durationMs: 1 }, s).ok).toBe(false);
    // A default eventType made from a long label would be too long: refused, not truncated.
    expect(buildEnvelope({ routeTemplate: 'q'.repeat(129), statusCode: 202, durationMs: 1 }, queue).ok).toBe(false);
    expect(buildEnvelope({ routeTemplate: 'q'.repeat(129), eventType: 'order.created', statusCode: 202, durationMs: 1 }, queue).ok).toBe(
      true,
    );
  });
});

describe('the collector without an edge', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('counts build errors, skipped inspections and oversized envelopes, and never throws', async () => {
    const collector = createCollector({
      ...BASE_OPTIONS,
      endpoint: `http://127.0.0.1:${await freePort()}`,
      maxQueueSize: 3,
      flushIntervalMs: 60_000,
    });
    collector.observe({ routeTemplate: '/v1/a', statusCode: 200, durationMs: 1, body: { json: { a: 1 } } });
    collector.observe({ routeTemplate: '/v1/a', statusCode: 200, durationMs: 1, body: { notInspected: 'stream' } });
    collector.observe({ routeTemplate: '/v1/a', statusCode: 200, durationMs: 1 });
    collector.observe({ routeTemplate: '/v1/a?x=1', statusCode: 200, durationMs: 1 });
    collector.observe(null as unknown as Observation);
    collector.observe({
      get routeTemplate(): string {
        throw new Error('host bug');
      },
    } as unknown as Observation);
    // Over 1 MiB of field names: an envelope that no batch could carry.
    const wide = Object.fromEntries(Array.from({ length: 500 }, (_, i) => [`${'w'.repeat(250)}${String(i).padStart(3, '0')}`, 1]));
    const huge = Object.fromEntries(Array.from({ length: 9 }, (_, i) => [`k${i}`, wide]));
    collector.observe({ routeTemplate: '/v1/a', statusCode: 200, durationMs: 1, body: { json: huge } });
    collector.observe({ routeTemplate: '/v1/a', statusCode: 200, durationMs: 1, body: { json: 1 } });
    const done = collector.beginInspection();
    expect(collector.counters().pendingInspections).toBe(1);
    done();
    done();
    expect(collector.counters()).toMatchObject({
      observed: 4,
      buildErrors: 4,
      skippedInspections: 2,
      pendingInspections: 0,
      dropped: 1,
      delivered: 0,
      connectionStatus: -1,
      deliveryState: 'running',
    });
    expect(MAX_ENVELOPE_BYTES).toBe(1024 * 1024 - 17);
    const started = Date.now();
    await collector.close(50);
    expect(Date.now() - started).toBeLessThan(500);
    expect(collector.counters()).toMatchObject({ dropped: 4, deliveryState: 'closed' });
    collector.observe({ routeTemplate: '/v1/a', statusCode: 200, durationMs: 1 });
    expect(collector.counters().dropped).toBe(5);
    await collector.flush();
    await collector.close();
  });

  it('answers whether a URL is its own endpoint', () => {
    const collector = createCollector({ ...BASE_OPTIONS, endpoint: 'https://edge.example.test/api/' });
    expect(collector.isOwnRequest('https://edge.example.test/api/ingest')).toBe(true);
    expect(collector.isOwnRequest(new URL('https://edge.example.test/api/v1/collector/connection'))).toBe(true);
    expect(collector.isOwnRequest('https://edge.example.test/apiary')).toBe(false);
    expect(collector.isOwnRequest('https://edge.example.test:8443/api/ingest')).toBe(false);
    expect(collector.isOwnRequest('http://edge.example.test/api/ingest')).toBe(false);
    expect(collector.isOwnRequest('not a url')).toBe(false);
    expect(collector.isOwnRequest(undefined as unknown as string)).toBe(false);
    expect(collector.direction).toBe('outbound');
    expect(collector.protocol).toBe('http-api');
    void collector.close(0);
  });

  it('does not throw on invalid options: it sends nothing and says why', async () => {
    const results: unknown[] = [];
    const collector = createCollector({
      ...BASE_OPTIONS,
      endpoint: 'ftp://x',
      direction: 'inbound',
      onConnectionCheck: (result) => results.push(result),
    });
    collector.observe({ routeTemplate: '/v1/a', statusCode: 200, durationMs: 1 });
    expect(collector.counters()).toMatchObject({ buildErrors: 1, observed: 0, deliveryState: 'misconfigured' });
    await collector.flush();
    await collector.close();
    await new Promise((done) => setImmediate(done));
    expect(results).toStrictEqual([{ ok: false, status: 0, error: expect.stringMatching(/endpoint.*http-api is outbound/) }]);
    expect(() => createCollector(undefined as unknown as CollectorOptions)).not.toThrow();
    const throwing = createCollector({
      ...BASE_OPTIONS,
      endpoint: '',
      onConnectionCheck: () => {
        throw new Error('host');
      },
    });
    await new Promise((done) => setImmediate(done));
    expect(throwing.counters().deliveryState).toBe('misconfigured');
  });

  it('keeps the default shape limits the edge accepts', () => {
    expect(DEFAULT_SHAPE_LIMITS).toStrictEqual({ maxDepth: 32, maxFields: 500, maxArrayItems: 64 });
  });
});
