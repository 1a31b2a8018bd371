import { existsSync } from 'node:fs';
import fc from 'fast-check';
import jsonPatch from 'fast-json-patch';
import { afterAll, describe, expect, it } from 'vitest';
import { RepairPool } from '../analyzer/repairPool.js';
import { kindsOf } from '../shared/analysis/compile.js';
import type { SchemaShape } from '../shared/analysis/types.js';
import { isPlainObject, resolveTokens, unescapeToken } from '../shared/contracts/jsonPointer.js';
import { FINGERPRINT_PATTERN, fingerprint } from '../shared/fingerprint.js';
import { generateRepair } from '../shared/repairs/generate.js';
import { MAX_REPLAY_FAILURES, replayAdapterFingerprint, replayFixtures } from '../shared/repairs/replay.js';
import type { RepairCandidate, RepairChange, ReplayFixture } from '../shared/repairs/types.js';
import { seededRandom } from './helpers/seededRandom.js';

// Repair generation and replay (00-decisions §6) are pure: no store, no service. The pool test
// runs the compiled worker (`npm run build` first).

type Schema = Record<string, unknown>;

const str: SchemaShape = { kind: 'string' };
const int: SchemaShape = { kind: 'integer' };
const num: SchemaShape = { kind: 'number' };
const bool: SchemaShape = { kind: 'boolean' };
const nul: SchemaShape = { kind: 'null' };
const obj = (fields: Record<string, SchemaShape>): SchemaShape => ({ kind: 'object', fields });
const arr = (items?: SchemaShape): SchemaShape => (items === undefined ? { kind: 'array' } : { kind: 'array', items });
const fixtures = (...shapes: SchemaShape[]): ReplayFixture[] => shapes.map((shape, i) => ({ observationId: `obs_${i + 1}`, shape }));

/** The candidate, checked for what every candidate must satisfy. */
function repair(schema: Schema, dataset: ReplayFixture[], unchecked: string[] = []): RepairCandidate {
  const before = JSON.stringify(schema);
  const candidate = generateRepair(schema, unchecked, dataset);
  expect(JSON.stringify(schema)).toBe(before);
  expect(candidate.baseSchemaFingerprint).toBe(fingerprint(schema));
  expect(candidate.schemaFingerprint).toBe(fingerprint(candidate.schema));
  expect(candidate.schemaFingerprint).toMatch(FINGERPRINT_PATTERN);
  expect(jsonPatch.applyPatch(jsonPatch.deepClone(schema), jsonPatch.deepClone(candidate.patch), true, true).newDocument).toEqual(
    candidate.schema,
  );
  expect(replayFixtures(candidate.schema, unchecked, dataset)).toMatchObject({ status: 'passed', conformingCount: dataset.length });
  // The original fails exactly when there is something to repair.
  expect(replayFixtures(schema, unchecked, dataset).status).toBe(candidate.patch.length === 0 ? 'passed' : 'failed');
  return candidate;
}

const order: Schema = {
  type: 'object',
  required: ['id', 'total'],
  properties: { id: { type: 'string' }, total: { type: 'integer' }, note: { type: ['string', 'null'] } },
};

describe('generateRepair: one change kind at a time', () => {
  it('adds an undeclared field as an optional property described from every fixture, nested objects and arrays included', () => {
    const dataset = fixtures(
      obj({ id: str, total: int, customer: obj({ name: str, tags: arr(str) }) }),
      obj({ id: str, total: int, customer: obj({ name: nul, phone: str, tags: arr() }) }),
      obj({ id: str, total: int }),
    );
    expect(replayFixtures(order, [], dataset).status).toBe('failed');
    const candidate = repair(order, dataset);
    expect(candidate.patch).toEqual([
      {
        op: 'add',
        path: '/properties/customer',
        value: {
          type: 'object',
          properties: { name: { type: ['string', 'null'] }, phone: { type: 'string' }, tags: { type: 'array', items: { type: 'string' } } },
        },
      },
    ]);
    expect(candidate.schema.required).toEqual(['id', 'total']);
    expect(candidate.changes).toEqual([
      {
        kind: 'property_added',
        payloadPath: '/customer',
        schemaPath: '/properties/customer',
        before: 'undeclared',
        after: 'object',
        fixtureCount: 2,
      },
    ]);
  });

  it('keeps additionalProperties: false and declares the forbidden field', () => {
    const closed = { ...order, additionalProperties: false };
    const candidate = repair(closed, fixtures(obj({ id: str, total: int, 'a/b~c': bool })));
    expect(candidate.patch).toEqual([{ op: 'add', path: '/properties/a~1b~0c', value: { type: 'boolean' } }]);
    expect(candidate.schema.additionalProperties).toBe(false);
    expect(candidate.changes[0]).toMatchObject({ kind: 'property_added', payloadPath: '/a~1b~0c', before: 'forbidden', after: 'boolean' });
  });

  it('declares `properties` on a schema that only closed its members', () => {
    const candidate = repair({ type: 'object', additionalProperties: false }, fixtures(obj({ a: str })));
    expect(candidate.patch).toEqual([
      { op: 'add', path: '/properties', value: {} },
      { op: 'add', path: '/properties/a', value: { type: 'string' } },
    ]);
  });

  it('widens a type into an array of types in describeKinds order; integer already conforms to number', () => {
    const schema = { type: 'object', properties: { a: { type: 'string' }, n: { type: 'number' }, i: { type: 'integer' } } };
    const candidate = repair(schema, fixtures(obj({ a: nul, n: int, i: num }), obj({ a: obj({}), n: num, i: int }), obj({ a: int })));
    expect(candidate.patch).toEqual([
      { op: 'replace', path: '/properties/a/type', value: ['object', 'string', 'integer', 'null'] },
      { op: 'replace', path: '/properties/i/type', value: 'number' },
    ]);
    expect(candidate.changes).toEqual([
      {
        kind: 'type_widened',
        payloadPath: '/a',
        schemaPath: '/properties/a',
        before: 'string',
        after: 'object|string|integer|null',
        fixtureCount: 3,
      },
      { kind: 'type_widened', payloadPath: '/i', schemaPath: '/properties/i', before: 'integer', after: 'number', fixtureCount: 1 },
    ]);
  });

  it('widens an enum: null and booleans join it, any other kind replaces it with the types it allowed (enum_widened)', () => {
    const schema = {
      type: 'object',
      properties: {
        status: { enum: ['open', 'closed'] },
        flag: { type: 'string', enum: ['y', 'n'] },
        level: { enum: [1, 2] },
      },
    };
    const candidate = repair(schema, fixtures(obj({ status: nul, flag: bool, level: str }), obj({ status: nul })));
    expect(candidate.patch).toEqual([
      { op: 'add', path: '/properties/flag/enum/-', value: false },
      { op: 'add', path: '/properties/flag/enum/-', value: true },
      { op: 'replace', path: '/properties/flag/type', value: ['string', 'boolean'] },
      { op: 'remove', path: '/properties/level/enum' },
      { op: 'add', path: '/properties/level/type', value: ['string', 'number'] },
      { op: 'add', path: '/properties/status/enum/-', value: null },
    ]);
    expect(candidate.changes.map((c) => [c.kind, c.schemaPath, c.before, c.after, c.fixtureCount])).toEqual([
      ['enum_widened', '/properties/flag', 'string (enum of 2 values)', 'string|boolean (enum of 4 values)', 1],
      ['enum_widened', '/properties/level', 'number (enum of 2 values)', 'string|number (enum removed)', 1],
      ['enum_widened', '/properties/status', 'string (enum of 2 values)', 'string|null (enum of 3 values)', 2],
    ]);
  });

  it('relaxes required: one name out, and the member gone when it empties', () => {
    const schema = {
      type: 'object',
      required: ['a', 'b', 'c'],
      properties: { a: { type: 'string' }, b: { type: 'string' }, c: { type: 'string' }, inner: { type: 'object', required: ['x'] } },
    };
    const candidate = repair(schema, fixtures(obj({ a: str, c: str, inner: obj({}) }), obj({ b: str, c: str })));
    expect(candidate.patch).toEqual([
      { op: 'remove', path: '/required/1' },
      { op: 'remove', path: '/required/0' },
      { op: 'remove', path: '/properties/inner/required' },
    ]);
    expect(candidate.schema.required).toEqual(['c']);
    expect(candidate.changes.map((c) => [c.kind, c.payloadPath, c.schemaPath, c.fixtureCount])).toEqual([
      ['required_relaxed', '/a', '', 1],
      ['required_relaxed', '/b', '', 1],
      ['required_relaxed', '/inner/x', '/properties/inner', 1],
    ]);
  });

  it('replaces a property declared `false` with what was seen', () => {
    const candidate = repair({ type: 'object', properties: { gone: false } }, fixtures(obj({ gone: obj({ a: int }) })));
    expect(candidate.patch).toEqual([
      { op: 'replace', path: '/properties/gone', value: { type: 'object', properties: { a: { type: 'integer' } } } },
    ]);
    expect(candidate.changes[0]).toMatchObject({ kind: 'type_widened', before: 'nothing', after: 'object' });
  });

  it('returns an empty patch when every fixture conforms', () => {
    const candidate = repair(order, fixtures(obj({ id: str, total: int }), obj({ id: str, total: int, note: nul })));
    expect(candidate.patch).toEqual([]);
    expect(candidate.changes).toEqual([]);
    expect(candidate.schemaFingerprint).toBe(candidate.baseSchemaFingerprint);
    expect(candidate.schema).toEqual(order);
  });
});

describe('generateRepair: definitions, nesting, unchecked pointers', () => {
  const withDefs: Schema = {
    type: 'object',
    properties: {
      billing: { $ref: '#/$defs/Address' },
      shipping: { $ref: '#/$defs/Address', required: ['zip'] },
      lines: { type: 'array', items: { $ref: '#/$defs/Line' } },
    },
    $defs: {
      Address: { type: 'object', required: ['city'], properties: { city: { type: 'string' }, zip: { type: 'string' } } },
      Line: {
        type: 'object',
        required: ['sku'],
        properties: { sku: { type: 'string' }, parts: { type: 'array', items: { $ref: '#/$defs/Line' } } },
      },
    },
  };

  it('patches the definition a $ref names, once for every place that reaches it', () => {
    const dataset = fixtures(
      obj({ billing: obj({ city: str, county: str }), shipping: obj({ city: str, zip: str }) }),
      obj({ shipping: obj({ city: nul, zip: str, county: nul }) }),
    );
    const candidate = repair(withDefs, dataset);
    expect(candidate.patch).toEqual([
      { op: 'add', path: '/$defs/Address/properties/county', value: { type: ['string', 'null'] } },
      { op: 'replace', path: '/$defs/Address/properties/city/type', value: ['string', 'null'] },
    ]);
    expect(candidate.changes).toEqual([
      {
        kind: 'type_widened',
        payloadPath: '/shipping/city',
        schemaPath: '/$defs/Address/properties/city',
        before: 'string',
        after: 'string|null',
        fixtureCount: 1,
      },
      {
        kind: 'property_added',
        payloadPath: '/billing/county',
        schemaPath: '/$defs/Address/properties/county',
        before: 'undeclared',
        after: 'string|null',
        fixtureCount: 2,
      },
    ]);
  });

  it('relaxes `required` beside a $ref (the sibling) and in the definition when both require the name', () => {
    const candidate = repair(withDefs, fixtures(obj({ shipping: obj({}) })));
    expect(candidate.patch).toEqual([
      { op: 'remove', path: '/$defs/Address/required' },
      { op: 'remove', path: '/properties/shipping/required' },
    ]);
  });

  it('repairs arrays of objects nested in arrays of objects (a recursive definition)', () => {
    const part = obj({ sku: str, qty: int });
    const dataset = fixtures(
      obj({ lines: arr(obj({ sku: str, parts: arr(obj({ parts: arr(part) })) })) }),
      obj({ lines: arr(obj({ sku: int, parts: arr() })) }),
    );
    const candidate = repair(withDefs, dataset);
    expect(candidate.patch).toEqual([
      { op: 'add', path: '/$defs/Line/properties/qty', value: { type: 'integer' } },
      { op: 'remove', path: '/$defs/Line/required' },
      { op: 'replace', path: '/$defs/Line/properties/sku/type', value: ['string', 'integer'] },
    ]);
    expect(candidate.changes.map((c) => [c.kind, c.payloadPath, c.schemaPath])).toEqual([
      ['required_relaxed', '/lines/-/parts/-/sku', '/$defs/Line'],
      ['property_added', '/lines/-/parts/-/parts/-/qty', '/$defs/Line/properties/qty'],
      ['type_widened', '/lines/-/sku', '/$defs/Line/properties/sku'],
    ]);
  });

  it('honours unchecked pointers as the analyzer does: no field is undeclared there, kinds still are compared', () => {
    const schema = { type: 'object', properties: { meta: { type: 'object', properties: { v: { type: 'integer' } } } } };
    const dataset = fixtures(obj({ meta: obj({ v: str, free: obj({ deep: str }) }) }));
    const candidate = repair(schema, dataset, ['/properties/meta']);
    expect(candidate.patch).toEqual([{ op: 'replace', path: '/properties/meta/properties/v/type', value: ['string', 'integer'] }]);
    // Without the pointer the same evidence also needs the field.
    expect(repair(schema, dataset).patch).toHaveLength(2);
  });

  it('widens a node first and then what the widening let the comparison see below it', () => {
    const schema = { type: 'object', properties: { a: { type: 'string', properties: { b: { type: 'integer' } } } } };
    const candidate = repair(schema, fixtures(obj({ a: obj({ b: str }) })));
    expect(candidate.patch).toEqual([
      { op: 'replace', path: '/properties/a/type', value: ['object', 'string'] },
      { op: 'replace', path: '/properties/a/properties/b/type', value: ['string', 'integer'] },
    ]);
  });
});

describe('generateRepair: determinism', () => {
  it('gives the same JSON text whatever the order of fixtures and of their fields', () => {
    const schema = {
      type: 'object',
      additionalProperties: false,
      required: ['a', 'b'],
      properties: { a: { type: 'string' }, b: { $ref: '#/$defs/B' } },
      $defs: { B: { type: 'object', properties: { x: { enum: ['p', 'q'] } } } },
    };
    const shapes = [
      obj({ a: nul, b: obj({ x: nul, y: arr(obj({ m: str, n: int })) }), z: str }),
      obj({ b: obj({ x: int, y: arr(obj({ n: num, o: bool })) }), w: arr() }),
      obj({ a: int, b: obj({ y: nul }), z: obj({ k: str, j: nul }) }),
    ];
    const reference = JSON.stringify(repair(schema, fixtures(...shapes)));
    const random = seededRandom(7);
    for (let round = 0; round < 20; round++) {
      const shuffled = shuffle(
        shapes.map((shape) => reorderFields(shape, random)),
        random,
      );
      const dataset = shuffled.map((shape, i) => ({ observationId: `obs_${i + 1}`, shape }));
      expect(JSON.stringify(generateRepair(schema, [], dataset))).toBe(reference);
    }
  });
});

describe('replayFixtures', () => {
  it('passes only when every fixture conforms, and lists the first 20 failures with their findings', () => {
    const dataset = fixtures(
      ...Array.from({ length: 25 }, (_, i) => (i % 5 === 0 ? obj({ id: str, total: int }) : obj({ id: int, total: int }))),
    );
    const result = replayFixtures(order, [], dataset);
    expect(result).toMatchObject({ status: 'failed', fixtureCount: 25, conformingCount: 5 });
    expect(result.failures).toHaveLength(MAX_REPLAY_FAILURES);
    expect(result.failures[0]).toEqual({
      observationId: 'obs_2',
      findings: [{ kind: 'type_mismatch', path: '/id', expected: 'string', observed: 'integer' }],
    });
    expect(replayFixtures(order, [], dataset.slice(0, 1))).toEqual({ status: 'passed', fixtureCount: 1, conformingCount: 1, failures: [] });
  });

  it('fingerprints its comparison stably', () => {
    expect(replayAdapterFingerprint()).toMatch(FINGERPRINT_PATTERN);
    expect(replayAdapterFingerprint()).toBe(replayAdapterFingerprint());
  });
});

describe('generateRepair: property', () => {
  it('the candidate of a random schema and drifted shapes always replays, and every change is needed', () => {
    const kindsSeen = new Set<string>();
    fc.assert(
      fc.property(schemaArbitrary(), fc.integer(), (schema, seed) => {
        const random = seededRandom(seed);
        const dataset = fixtures(...Array.from({ length: 12 }, () => drifted(schema, schema, random, 0)));
        const candidate = generateRepair(schema, [], dataset);
        const original = replayFixtures(schema, [], dataset);
        expect(replayFixtures(candidate.schema, [], dataset).status).toBe('passed');
        expect(candidate.patch.length === 0).toBe(original.status === 'passed');
        expect(jsonPatch.applyPatch(jsonPatch.deepClone(schema), jsonPatch.deepClone(candidate.patch), true, true).newDocument).toEqual(
          candidate.schema,
        );
        // Every operation edits the node of a listed change, and no change can be taken back
        // without some fixture failing again.
        for (const op of candidate.patch) expect(candidate.changes.some((change) => related(op.path, change.schemaPath))).toBe(true);
        for (const change of candidate.changes) {
          kindsSeen.add(change.kind);
          expect(change.fixtureCount).toBeGreaterThan(0);
          expect(replayFixtures(revert(candidate.schema, schema, change), [], dataset).status, JSON.stringify(change)).toBe('failed');
          for (const variant of narrowed(candidate.schema, schema, change)) {
            expect(replayFixtures(variant, [], dataset).status, JSON.stringify(change)).toBe('failed');
          }
        }
      }),
      { numRuns: 300 },
    );
    // The generated drift reaches every kind of change.
    expect([...kindsSeen].sort()).toEqual(['enum_widened', 'property_added', 'required_relaxed', 'type_widened']);
  });
});

describe('RepairPool', () => {
  const pools: RepairPool[] = [];
  afterAll(async () => {
    await Promise.all(pools.map((pool) => pool.close()));
  });

  it('generates and validates on a compiled worker thread (npm run build first), as inline', async () => {
    expect(existsSync('dist/analyzer/repairWorker.js')).toBe(true);
    const threaded = new RepairPool(1);
    const inline = new RepairPool(0);
    pools.push(threaded, inline);
    const task = { schema: order, uncheckedPointers: [], fixtures: fixtures(obj({ id: int, extra: str }), obj({ id: str, total: nul })) };
    const result = await threaded.run(task);
    expect(result.replay).toMatchObject({ status: 'passed', fixtureCount: 2, conformingCount: 2 });
    expect(result.candidate.changes.map((change) => change.kind)).toEqual([
      'required_relaxed',
      'property_added',
      'type_widened',
      'type_widened',
    ]);
    expect(result.generatedInMs).toBeGreaterThanOrEqual(0);
    expect(result.validatedInMs).toBeGreaterThanOrEqual(0);
    expect((await inline.run(task)).candidate).toEqual(result.candidate);
  });
});

function shuffle<T>(items: T[], random: () => number): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

function reorderFields(shape: SchemaShape, random: () => number): SchemaShape {
  if (shape.kind === 'object') {
    const fields: Record<string, SchemaShape> = {};
    for (const name of shuffle(Object.keys(shape.fields), random)) fields[name] = reorderFields(shape.fields[name], random);
    return { kind: 'object', fields };
  }
  if (shape.kind === 'array' && shape.items !== undefined) return { kind: 'array', items: reorderFields(shape.items, random) };
  return shape;
}

const NAMES = ['a', 'b', 'id', 'x~y', 's/t', '-', ''];

/** Subset schemas: scalars, enums, objects (some closed, some required), arrays, references to two definitions. */
function schemaArbitrary(): fc.Arbitrary<Schema> {
  const { object } = fc.letrec<{ node: Schema; object: Schema }>((tie) => ({
    node: fc.oneof(
      { maxDepth: 3, depthIdentifier: 'schema' },
      fc.constantFrom<Schema>(
        { type: 'string' },
        { type: 'integer' },
        { type: 'number' },
        { type: 'boolean' },
        { type: ['string', 'null'] },
        { enum: ['a', 'b'] },
        { enum: [1, 2] },
        { type: 'string', enum: ['a'] },
        { $ref: '#/$defs/A' },
        { $ref: '#/$defs/B' },
      ),
      tie('object'),
      tie('node').map((items) => ({ type: 'array', items })),
    ),
    object: fc
      .tuple(fc.dictionary(fc.constantFrom(...NAMES), tie('node'), { maxKeys: 4 }), fc.boolean(), fc.boolean())
      .chain(([properties, closed, typed]) =>
        fc.subarray(Object.keys(properties)).map((required) => ({
          ...(typed ? { type: 'object' } : {}),
          properties,
          ...(required.length > 0 ? { required } : {}),
          ...(closed ? { additionalProperties: false } : {}),
        })),
      ),
  }));
  return fc.tuple(object, object, object).map(([root, a, b]) => ({ ...root, type: 'object', $defs: { A: a, B: b } }));
}

const KINDS: SchemaShape['kind'][] = ['object', 'array', 'string', 'number', 'integer', 'boolean', 'null'];

/** A shape that mostly conforms to `schema`, with drift: other kinds, extra fields, required ones left out, empty arrays. */
function drifted(schema: unknown, root: Schema, random: () => number, depth: number): SchemaShape {
  let node = schema;
  for (let hops = 0; isPlainObject(node) && typeof node.$ref === 'string' && hops < 4; hops++) {
    node = resolveTokens(root, node.$ref.slice(2).split('/').map(unescapeToken));
  }
  if (!isPlainObject(node) || depth > 5 || random() < 0.12) return randomShape(random, depth);
  const types = typeof node.type === 'string' ? [node.type] : Array.isArray(node.type) ? (node.type as string[]) : [];
  const kind =
    types.length > 0
      ? pick(types, random)
      : isPlainObject(node.properties)
        ? 'object'
        : Array.isArray(node.enum)
          ? valueKind(node.enum[0])
          : 'object';
  if (kind === 'object') {
    const fields: Record<string, SchemaShape> = {};
    const properties = isPlainObject(node.properties) ? node.properties : {};
    const required = Array.isArray(node.required) ? node.required : [];
    for (const name of Object.keys(properties)) {
      if (random() < (required.includes(name) ? 0.9 : 0.5)) fields[name] = drifted(properties[name], root, random, depth + 1);
    }
    if (random() < 0.2) fields[pick(NAMES, random)] = randomShape(random, depth + 1);
    return { kind: 'object', fields };
  }
  if (kind === 'array') return random() < 0.2 ? { kind: 'array' } : { kind: 'array', items: drifted(node.items, root, random, depth + 1) };
  return { kind: kind as SchemaShape['kind'] } as SchemaShape;
}

function randomShape(random: () => number, depth: number): SchemaShape {
  const kind = pick(depth > 4 ? KINDS.slice(2) : KINDS, random);
  if (kind === 'object') return obj(random() < 0.5 ? {} : { [pick(NAMES, random)]: randomShape(random, depth + 1) });
  if (kind === 'array') return random() < 0.3 ? arr() : arr(randomShape(random, depth + 1));
  return { kind } as SchemaShape;
}

function valueKind(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

function pick<T>(items: readonly T[], random: () => number): T {
  return items[Math.floor(random() * items.length)];
}

function related(opPath: string, schemaPath: string): boolean {
  return opPath === schemaPath || opPath.startsWith(`${schemaPath}/`) || schemaPath.startsWith(`${opPath}/`);
}

/** For a widened type: `patched` without each type name the change added (when another remains), one schema per name. */
function narrowed(patched: Schema, original: Schema, change: RepairChange): Schema[] {
  if (change.kind !== 'type_widened' && change.kind !== 'enum_widened') return [];
  const tokens = change.schemaPath === '' ? [] : change.schemaPath.slice(1).split('/').map(unescapeToken);
  const before = resolveTokens(original, tokens);
  const after = resolveTokens(patched, tokens);
  if (!isPlainObject(before) || !isPlainObject(after) || !Array.isArray(after.type)) return [];
  const names = after.type as string[];
  if (names.length < 2) return [];
  return names
    .filter((name) => (kindsOf({ type: name }) & ~kindsOf(before)) !== 0)
    .map((name) => {
      const out = jsonPatch.deepClone(patched) as Schema;
      (resolveTokens(out, tokens) as Schema).type = names.filter((other) => other !== name);
      return out;
    });
}

/** `patched` with one change taken back to what `original` had at its node. */
function revert(patched: Schema, original: Schema, change: RepairChange): Schema {
  const out = jsonPatch.deepClone(patched) as Schema;
  const tokens = change.schemaPath === '' ? [] : change.schemaPath.slice(1).split('/').map(unescapeToken);
  if (change.kind === 'property_added') {
    const properties = resolveTokens(out, tokens.slice(0, -1)) as Schema;
    delete properties[tokens[tokens.length - 1]];
    return out;
  }
  const before = resolveTokens(original, tokens);
  if (before === false) {
    const parent = resolveTokens(out, tokens.slice(0, -1)) as Schema;
    parent[tokens[tokens.length - 1]] = false;
    return out;
  }
  const node = resolveTokens(out, tokens) as Schema;
  const keywords = change.kind === 'required_relaxed' ? ['required'] : ['type', 'enum'];
  for (const keyword of keywords) {
    if (isPlainObject(before) && Object.hasOwn(before, keyword)) node[keyword] = before[keyword];
    else delete node[keyword];
  }
  return out;
}
