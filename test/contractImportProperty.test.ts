import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { AppError } from '../shared/errors/index.js';
import { fingerprint } from '../shared/fingerprint.js';
import { importJsonSchema } from '../shared/contracts/importJsonSchema.js';
import { importOpenApi, type OpenApiProtocol } from '../shared/contracts/importOpenApi.js';
import type { ImportedOperation, ImportResult } from '../shared/contracts/types.js';
import { seededRandom } from './helpers/seededRandom.js';

// Issue 3, Done means: import(document) is deterministic, also after re-serialising the
// document with its keys in another order; junk never fails with anything but invalid_contract.
// 00-decisions §7: whatever a published document holds, every stored schema stays inside the
// subset, and every unchecked entry names a sub-schema of the stored schema.

const CORPUS = process.env.CORPUS_DIR ?? fileURLToPath(new URL('../../shared/corpus/openapi/', import.meta.url));
const manifest: { file: string; traits: string[]; paths: number; webhooks: number }[] = JSON.parse(
  readFileSync(`${CORPUS}manifest.json`, 'utf8'),
);
const texts = new Map(manifest.map((item) => [item.file, readFileSync(CORPUS + item.file, 'utf8')]));
const importable = manifest.flatMap((item) => [
  ...(item.paths > 0 ? [{ file: item.file, protocol: 'http-api' as OpenApiProtocol }] : []),
  ...(item.webhooks > 0 ? [{ file: item.file, protocol: 'http-webhook' as OpenApiProtocol }] : []),
]);

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);
const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * Re-serialises a JSON value with the members of every object in a random order (arrays keep
 * their order). Parsing the text back keeps a member named `__proto__` an own member; integer-like
 * keys come back in ascending order whatever the text says, as with any JSON.parse.
 */
function shuffledText(value: unknown, next: () => number): string {
  if (Array.isArray(value)) return `[${value.map((item) => shuffledText(item, next)).join(',')}]`;
  if (typeof value !== 'object' || value === null) return JSON.stringify(value);
  const entries = Object.entries(value);
  for (let i = entries.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [entries[i], entries[j]] = [entries[j], entries[i]];
  }
  return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${shuffledText(item, next)}`).join(',')}}`;
}

const shuffleKeys = (value: unknown, next: () => number): unknown => JSON.parse(shuffledText(value, next));

/** The outcome of an import as comparable data: the result, or the invalid_contract body. */
function outcome(run: () => ImportResult | unknown): unknown {
  try {
    return { ok: run() };
  } catch (error) {
    if (!(error instanceof AppError) || error.code !== 'invalid_contract') throw error;
    return { error: error.body() };
  }
}

const summary = (result: ImportResult) =>
  result.operations.map((operation) => [operation.operationKey, operation.fingerprint, operation.unchecked]);

/** The node an RFC 6901 pointer names inside `root` (own members only), or undefined. */
function resolvePointer(root: unknown, pointer: string): unknown {
  if (pointer === '') return root;
  let node = root;
  for (const token of pointer
    .slice(1)
    .split('/')
    .map((item) => item.replace(/~1/g, '/').replace(/~0/g, '~'))) {
    if (!isObject(node) || !Object.hasOwn(node, token)) return undefined;
    node = node[token];
  }
  return node;
}

const SUBSET = new Set(['type', 'properties', 'required', 'items', 'enum', 'additionalProperties', '$ref', '$defs']);

/**
 * Every keyword of a stored schema, recursively, is in the subset; `$defs` only at the root; every
 * `$ref` names the root or one of its definitions. (Walked by structure: enum values are data.)
 */
function expectSubsetOnly(schema: Json): void {
  const defs = isObject(schema.$defs) ? schema.$defs : {};
  const visit = (node: unknown, isRoot: boolean, at: string): void => {
    if (typeof node === 'boolean') return;
    expect(isObject(node), `schema at ${at}`).toBe(true);
    const object = node as Json;
    for (const key of Object.keys(object)) expect(SUBSET.has(key), `keyword ${key} at ${at}`).toBe(true);
    if (!isRoot) expect(Object.hasOwn(object, '$defs'), `$defs at ${at}`).toBe(false);
    if (Object.hasOwn(object, '$ref')) {
      const ref = object.$ref;
      expect(typeof ref).toBe('string');
      if (ref !== '#') {
        expect((ref as string).startsWith('#/$defs/'), `$ref ${String(ref)} at ${at}`).toBe(true);
        const name = decodeURIComponent((ref as string).slice('#/$defs/'.length))
          .replace(/~1/g, '/')
          .replace(/~0/g, '~');
        expect(Object.hasOwn(defs, name), `dangling $ref ${String(ref)} at ${at}`).toBe(true);
      }
    }
    if (Object.hasOwn(object, 'required'))
      expect(Array.isArray(object.required) && (object.required as unknown[]).every((name) => typeof name === 'string')).toBe(true);
    if (Object.hasOwn(object, 'enum')) expect(Array.isArray(object.enum)).toBe(true);
    if (Object.hasOwn(object, 'type')) expect(typeof object.type === 'string' || Array.isArray(object.type)).toBe(true);
    for (const key of ['properties', '$defs'] as const) {
      if (!Object.hasOwn(object, key)) continue;
      expect(isObject(object[key])).toBe(true);
      for (const [name, child] of Object.entries(object[key] as Json)) visit(child, false, `${at}/${key}/${name}`);
    }
    if (Object.hasOwn(object, 'items')) visit(object.items, false, `${at}/items`);
    if (Object.hasOwn(object, 'additionalProperties')) visit(object.additionalProperties, false, `${at}/additionalProperties`);
  };
  visit(schema, true, '');
}

/** One operation is well formed: fingerprinted, self-contained, in the subset, its unchecked entries inside it. */
function expectOperationWellFormed(operation: ImportedOperation): void {
  expect(operation.fingerprint).toBe(fingerprint(operation.schema));
  expect(isObject(operation.schema)).toBe(true);
  expectSubsetOnly(operation.schema);
  expect(Array.isArray(operation.unchecked)).toBe(true);
  for (const item of operation.unchecked) {
    expect(typeof item.pointer === 'string' && typeof item.reason === 'string' && typeof item.schemaPointer === 'string').toBe(true);
    expect(
      isObject(resolvePointer(operation.schema, item.schemaPointer)),
      `${operation.operationKey}: schemaPointer ${item.schemaPointer}`,
    ).toBe(true);
  }
  // Distinct, in schemaPointer, then pointer, then reason order (the non-JSON media types of one
  // payload too: by their escaped pointers, so `…/content/0` comes before `…/content/~1`).
  expect(new Set(operation.unchecked.map((item) => JSON.stringify(item))).size).toBe(operation.unchecked.length);
  const sorted = [...operation.unchecked].sort(
    (a, b) => compare(a.schemaPointer, b.schemaPointer) || compare(a.pointer, b.pointer) || compare(a.reason, b.reason),
  );
  expect(operation.unchecked).toEqual(sorted);
}

/** Every result is well formed: sorted, fingerprinted, self-contained, every unchecked entry listed in skipped. */
function expectWellFormed(result: ImportResult): void {
  expect(result.operations.length).toBeGreaterThan(0);
  const operationKeys = result.operations.map((operation) => operation.operationKey);
  expect(new Set(operationKeys).size).toBe(operationKeys.length);
  expect([...operationKeys].sort(compare)).toEqual(operationKeys);
  const skipped = new Set(result.skipped.map((item) => `${item.pointer}\u0000${item.reason}`));
  expect(skipped.size).toBe(result.skipped.length);
  expect(result.skipped).toEqual([...result.skipped].sort((a, b) => compare(a.pointer, b.pointer) || compare(a.reason, b.reason)));
  for (const operation of result.operations) {
    expectOperationWellFormed(operation);
    for (const item of operation.unchecked)
      expect(skipped.has(`${item.pointer}\u0000${item.reason}`), `${item.pointer} ${item.reason} not in skipped`).toBe(true);
  }
}

describe('importOpenApi is deterministic', () => {
  for (const { file, protocol } of importable) {
    it(`${file} (${protocol}): same result after re-serialising with shuffled keys`, () => {
      const text = texts.get(file) as string;
      const original = outcome(() => importOpenApi(JSON.parse(text), protocol)) as { ok?: ImportResult };
      expect(original.ok).toBeDefined();
      expectWellFormed(original.ok as ImportResult);
      expect(outcome(() => importOpenApi(JSON.parse(text), protocol))).toEqual(original);
      const runs = text.length > 200_000 ? 2 : 6;
      fc.assert(
        fc.property(fc.integer(), (seed) => {
          const shuffled = shuffledText(JSON.parse(text), seededRandom(seed));
          const again = outcome(() => importOpenApi(JSON.parse(shuffled), protocol)) as { ok?: ImportResult };
          expect(summary(again.ok as ImportResult)).toEqual(summary(original.ok as ImportResult));
          expect(again).toEqual(original);
        }),
        { numRuns: runs },
      );
    });
  }

  it('the key order of a document really changes between shuffles (the property can fail)', () => {
    const text = texts.get('oai-petstore-v3.0.json') as string;
    const orders = new Set(Array.from({ length: 5 }, (_, seed) => shuffledText(JSON.parse(text), seededRandom(seed))));
    expect(orders.size).toBeGreaterThan(1);
  });
});

// --- generated documents -------------------------------------------------------------------

/** Mostly the valid form, sometimes junk: the importer must meet both, and succeed often enough. */
const mostly = <T>(valid: fc.Arbitrary<T>, junk: fc.Arbitrary<unknown>): fc.Arbitrary<unknown> =>
  fc.oneof({ arbitrary: valid, weight: 8 }, { arbitrary: junk, weight: 1 });
const junk = fc.jsonValue({ maxDepth: 1 });
const smallValue = fc.jsonValue({ maxDepth: 1 });

const refTargets = fc.oneof(
  {
    arbitrary: fc.constantFrom(
      '#/components/schemas/A',
      '#/components/schemas/B',
      '#/components/schemas/C',
      '#/components/schemas/A/properties/x',
    ),
    weight: 8,
  },
  {
    arbitrary: fc.constantFrom(
      '#/components/schemas/Missing',
      '#/components/responses/R',
      '#',
      '#/',
      '#/paths',
      '#/components/schemas/%ZZ',
      '#/components/schemas/\ud800',
    ),
    weight: 1,
  },
  // Remote and anchored references: left unchecked in an OpenAPI document, refused in a json-schema contract.
  {
    arbitrary: fc.constantFrom('other.json#/A', '#anchor', 'https://example.com/s.json', './common.yaml#/components/schemas/A'),
    weight: 2,
  },
);
const keyword = fc.constantFrom(
  'type',
  'properties',
  'required',
  'items',
  'enum',
  'additionalProperties',
  '$ref',
  'nullable',
  'const',
  'allOf',
  'oneOf',
  'anyOf',
  'not',
  'patternProperties',
  'format',
  'description',
  'minimum',
  '__proto__',
  'constructor',
  '$defs',
  'prefixItems',
  'if',
  'then',
  'else',
  '$dynamicRef',
  'discriminator',
);
const nullSchema = fc.constantFrom<unknown>({ type: 'null' }, { enum: [null] }, { type: 'null', description: 'none' }, { nullable: true });
const alternativesKey = fc.constantFrom('oneOf', 'anyOf');

const schemaArb: fc.Arbitrary<unknown> = fc.letrec<{ schema: unknown; composition: unknown }>((tie) => ({
  // Past maxDepth the first (leaf) alternative is taken, which keeps generated schemas small.
  schema: fc.oneof(
    { maxDepth: 3, depthSize: 'small', withCrossShrink: true },
    {
      arbitrary: fc.oneof(
        fc.record({ type: fc.constantFrom('string', 'integer', 'number', 'boolean', 'object') }),
        fc.boolean(),
        junk,
        fc.record({ $ref: refTargets }),
      ),
      weight: 3,
    },
    {
      arbitrary: fc.record(
        {
          type: mostly(
            fc.oneof(
              fc.constantFrom('object', 'array', 'string', 'integer', 'number', 'null'),
              fc.array(fc.constantFrom('string', 'null', 'integer', 'number'), { minLength: 1 }),
            ),
            fc.constantFrom('file', [], 1),
          ),
          properties: mostly(
            fc.dictionary(
              fc.oneof(fc.constantFrom('a', 'b', 'x'), fc.string({ maxLength: 4 }), fc.constantFrom('__proto__', '$ref', 'allOf')),
              tie('schema'),
              { maxKeys: 3 },
            ),
            junk,
          ),
          required: mostly(fc.array(fc.oneof(fc.constantFrom('a', 'b', 'x'), fc.string({ maxLength: 3 })), { maxLength: 3 }), junk),
          items: tie('schema'),
          additionalProperties: tie('schema'),
          enum: mostly(fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 3 }), junk),
          nullable: fc.boolean(),
          const: fc.jsonValue({ maxDepth: 2 }),
          description: fc.string(),
          minimum: fc.integer(),
          $ref: refTargets,
        },
        { requiredKeys: [] },
      ),
      weight: 5,
    },
    { arbitrary: tie('composition'), weight: 5 },
    { arbitrary: fc.dictionary(keyword, fc.oneof(tie('schema'), fc.array(tie('schema'), { maxLength: 2 })), { maxKeys: 3 }), weight: 1 },
  ),
  composition: fc.oneof(
    // allOf, with the keywords often written beside it (3.0 `nullable: true` among them).
    fc.record(
      {
        allOf: mostly(fc.array(fc.oneof(tie('schema'), fc.record({ $ref: refTargets })), { minLength: 1, maxLength: 3 }), junk),
        nullable: fc.boolean(),
        type: fc.constantFrom('object', 'string', 'number', 'integer'),
        required: fc.array(fc.constantFrom('a', 'b', 'x'), { maxLength: 2 }),
        additionalProperties: fc.boolean(),
        description: fc.string({ maxLength: 3 }),
      },
      { requiredKeys: ['allOf'] },
    ),
    // "S or null": 3.1 `type: null` / `enum: [null]` alternatives, or the 3.0 `{nullable: true}` one, in any order.
    fc
      .tuple(alternativesKey, tie('schema'), fc.array(nullSchema, { minLength: 1, maxLength: 2 }), fc.boolean())
      .map(([key, schema, nulls, first]) => ({ [key]: first ? [...nulls, schema] : [schema, ...nulls] })),
    // The OpenAPI 3.0 form: one alternative (or allOf member) and `nullable: true`.
    fc
      .tuple(fc.constantFrom('oneOf', 'anyOf', 'allOf'), fc.oneof(tie('schema'), fc.record({ $ref: refTargets })), fc.boolean())
      .map(([key, schema, nullable]) => ({ [key]: [schema], ...(nullable ? { nullable: true } : {}) })),
    // A documented enumeration written as const/enum alternatives.
    fc
      .tuple(
        alternativesKey,
        fc.array(
          fc.oneof(
            fc.record({ const: smallValue }),
            fc.record({ enum: fc.array(smallValue, { maxLength: 3 }) }),
            fc.record({ const: fc.string({ maxLength: 3 }), title: fc.string({ maxLength: 3 }) }),
          ),
          { minLength: 1, maxLength: 3 },
        ),
      )
      .map(([key, alternatives]) => ({ [key]: alternatives })),
    // Anything else outside the subset, beside keywords of the subset.
    fc
      .tuple(
        fc.constantFrom('oneOf', 'anyOf', 'not', 'prefixItems', 'if', 'patternProperties', 'items'),
        fc.array(tie('schema'), { maxLength: 3 }),
        fc.dictionary(fc.constantFrom('a', 'b'), tie('schema'), { maxKeys: 2 }),
      )
      .map(([key, schemas, properties]) => ({
        type: key === 'prefixItems' || key === 'items' ? 'array' : 'object',
        properties,
        [key]: key === 'not' || key === 'if' ? (schemas[0] ?? {}) : key === 'patternProperties' ? { '^x': schemas[0] ?? {} } : schemas,
      })),
  ),
})).schema;

const mediaArb = mostly(
  fc.dictionary(
    fc.oneof(
      { arbitrary: fc.constant('application/json'), weight: 4 },
      {
        arbitrary: fc.constantFrom(
          'application/problem+json',
          'application/json; charset=utf-8',
          'text/plain',
          'application/xml',
          '*/*',
          'x',
        ),
        weight: 2,
      },
    ),
    mostly(fc.record({ schema: schemaArb, example: junk }, { requiredKeys: ['schema'] }), junk),
    { minKeys: 1, maxKeys: 2 },
  ),
  junk,
);
const payloadArb = fc.oneof(
  { arbitrary: fc.record({ description: fc.string(), content: mediaArb }, { requiredKeys: ['content'] }), weight: 8 },
  { arbitrary: fc.record({ description: fc.string() }), weight: 1 },
  {
    arbitrary: fc.record({ $ref: fc.constantFrom('#/components/responses/R', '#/components/responses/Missing', 'x.yaml#/R', '#/paths') }),
    weight: 1,
  },
  { arbitrary: junk, weight: 1 },
);
const operationArb = mostly(
  fc.record(
    {
      requestBody: payloadArb,
      responses: mostly(
        fc.dictionary(fc.constantFrom('200', '201', '2XX', '2xx', 'default', '404', 'x-ext', '999', 'DEFAULT'), payloadArb, { maxKeys: 3 }),
        junk,
      ),
    },
    { requiredKeys: [] },
  ),
  junk,
);
const pathItemArb = fc.oneof(
  {
    arbitrary: fc.dictionary(
      fc.constantFrom('get', 'post', 'put', 'patch', 'delete', 'head', 'options', 'parameters', 'GET'),
      operationArb,
      { minKeys: 1, maxKeys: 3 },
    ),
    weight: 8,
  },
  { arbitrary: fc.record({ $ref: fc.constantFrom('#/paths/~1a', '#/components/pathItems/P', 'remote.yaml') }), weight: 1 },
  { arbitrary: junk, weight: 1 },
);
const documentArb = fc.record(
  {
    openapi: mostly(fc.constantFrom('3.0.0', '3.0.3', '3.1.0', '3.1.1'), junk),
    swagger: fc.oneof({ arbitrary: fc.constant(undefined), weight: 15 }, { arbitrary: fc.constant('2.0'), weight: 1 }),
    paths: mostly(
      fc.dictionary(fc.oneof(fc.constantFrom('/a', '/b/{id}', '/c'), fc.constantFrom('x-ext', 'rel', '/q?x', '')), pathItemArb, {
        maxKeys: 3,
      }),
      junk,
    ),
    webhooks: mostly(fc.dictionary(fc.string({ maxLength: 5 }), pathItemArb, { maxKeys: 3 }), junk),
    components: fc.record(
      {
        schemas: fc.record({ A: schemaArb, B: schemaArb, C: schemaArb }, { requiredKeys: [] }),
        responses: fc.record({ R: payloadArb }, { requiredKeys: [] }),
      },
      { requiredKeys: [] },
    ),
  },
  { requiredKeys: ['openapi', 'swagger', 'paths', 'webhooks'] },
);

describe('importOpenApi never fails with anything but invalid_contract', () => {
  it('on arbitrary JSON values', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.constantFrom<OpenApiProtocol>('http-api', 'http-webhook'), (document, protocol) => {
        const result = outcome(() => importOpenApi(document, protocol)) as { ok?: ImportResult };
        if (result.ok) expectWellFormed(result.ok);
      }),
      { numRuns: 300 },
    );
  });

  it('on generated OpenAPI-shaped documents with composition, nullable idioms and remote references: deterministic, in the subset', () => {
    let imported = 0;
    let withNull = 0;
    const reasons = new Set<string>();
    fc.assert(
      fc.property(documentArb, fc.constantFrom<OpenApiProtocol>('http-api', 'http-webhook'), fc.integer(), (generated, protocol, seed) => {
        const text = JSON.stringify(generated);
        const first = outcome(() => importOpenApi(JSON.parse(text), protocol)) as { ok?: ImportResult };
        if (first.ok) {
          imported++;
          expectWellFormed(first.ok);
          for (const operation of first.ok.operations) {
            if (/"null"/.test(JSON.stringify(operation.schema))) withNull++;
            for (const item of operation.unchecked)
              reasons.add(
                item.reason
                  .replace(/ [^ ]*[#./"(].*$/, '')
                  .replace(/ (oneOf|anyOf|not|prefixItems|if|then|else|patternProperties|items)$/, ''),
              );
          }
        }
        // The same input gives a deep-equal result; so does the same document with its keys in another order.
        expect(outcome(() => importOpenApi(JSON.parse(text), protocol))).toEqual(first);
        const reordered = shuffleKeys(JSON.parse(text), seededRandom(seed));
        expect(outcome(() => importOpenApi(reordered, protocol))).toEqual(first);
      }),
      { numRuns: 1500 },
    );
    // The generator must also reach the success path and the new paths, or this property proves little.
    expect(imported).toBeGreaterThan(100);
    expect(withNull).toBeGreaterThan(20);
    for (const reason of [
      'composition keyword',
      'remote reference',
      'unsupported keyword',
      'no schema',
      'allOf members allow no common type',
    ]) {
      expect([...reasons], reason).toContain(reason);
    }
  });

  it('on corpus documents with one member replaced by junk or a generated schema', () => {
    const sources = [
      'oai-petstore-v3.0.json',
      'redocly-museum-v3.1.json',
      'oai-webhook-example-v3.1.json',
      'swagger-petstore-v3.0.json',
      'oai-petstore-expanded-v3.0.json',
    ].map((file) => JSON.parse(texts.get(file) as string) as Json);
    fc.assert(
      fc.property(
        fc.nat(),
        fc.nat(),
        fc.oneof(fc.jsonValue({ maxDepth: 2 }), schemaArb),
        fc.constantFrom<OpenApiProtocol>('http-api', 'http-webhook'),
        (which, where, junk, protocol) => {
          const document = structuredClone(sources[which % sources.length]);
          // Walk to a random member, then replace it.
          let node: Json = document;
          let steps = 1 + (where % 9);
          let seed = where;
          while (steps-- > 0) {
            const children = node !== null && typeof node === 'object' ? Object.keys(node) : [];
            const inner = children.filter((key) => node[key] !== null && typeof node[key] === 'object');
            if (steps === 0 || inner.length === 0) {
              if (children.length > 0) node[children[seed % children.length]] = junk;
              break;
            }
            node = node[inner[seed % inner.length]] as Json;
            seed = Math.floor(seed / 7) + 3;
          }
          const text = JSON.stringify(document);
          const result = outcome(() => importOpenApi(JSON.parse(text), protocol)) as { ok?: ImportResult };
          if (result.ok) expectWellFormed(result.ok);
          expect(outcome(() => importOpenApi(JSON.parse(text), protocol))).toEqual(result);
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('on deeply nested schemas and values: an OpenAPI document leaves them unchecked, a json-schema contract is refused', () => {
    const nest = (depth: number, make: (inner: unknown) => unknown, leaf: unknown) => {
      let value = leaf;
      for (let i = 0; i < depth; i++) value = make(value);
      return value;
    };
    const deepSchema = nest(5000, (inner) => ({ type: 'object', properties: { a: inner } }), { type: 'string' });
    const deepAllOf = nest(5000, (inner) => ({ allOf: [inner, { type: 'object' }] }), { type: 'object' });
    const deepEnum = { enum: [nest(100_000, (inner) => [inner], 1)] };
    const deepConst = { const: nest(100_000, (inner) => ({ a: inner }), 1) };
    for (const [schema, reason] of [
      [deepSchema, 'schema nested too deeply'],
      [deepAllOf, 'schema nested too deeply'],
      [deepEnum, 'enum value nested too deeply'],
      [deepConst, 'const value nested too deeply'],
    ] as const) {
      const document = {
        openapi: '3.1.0',
        paths: { '/d': { get: { responses: { 200: { description: 'x', content: { 'application/json': { schema } } } } } } },
      };
      const result = outcome(() => importOpenApi(document, 'http-api')) as { ok?: ImportResult };
      expect(result.ok).toBeDefined();
      expectWellFormed(result.ok as ImportResult);
      const [operation] = (result.ok as ImportResult).operations;
      expect(operation.unchecked.length).toBeGreaterThan(0);
      expect(new Set(operation.unchecked.map((item) => item.reason))).toEqual(new Set([reason]));
      const refused = outcome(() =>
        importJsonSchema(schema, { method: 'POST', routeTemplate: 'q', payloadLocation: 'message', statusSelector: 'default' }, 'queue'),
      ) as { error?: { reason: string } };
      expect(refused.error?.reason).toMatch(/nested too deeply/);
    }
    const deepVersion = { openapi: nest(100_000, (inner) => [inner], '3.0.0'), paths: {} };
    expect((outcome(() => importOpenApi(deepVersion, 'http-api')) as { error?: { reason: string } }).error?.reason).toBe(
      'unsupported OpenAPI version (array); supported versions are 3.0.x and 3.1.x',
    );
  });
});

describe('importJsonSchema never fails with anything but invalid_contract', () => {
  const selectorArb = fc.oneof(
    {
      arbitrary: fc.record({
        method: fc.constantFrom('POST', 'GET', 'post', 'HEAD'),
        routeTemplate: fc.oneof(fc.constantFrom('orders', '/v1/orders', ''), fc.string({ maxLength: 8 })),
        payloadLocation: fc.constantFrom('message', 'request', 'response', 'body'),
        statusSelector: fc.constantFrom('200', '2XX', '2xx', 'default', '700', ''),
      }),
      weight: 2,
    },
    {
      arbitrary: fc.constantFrom(
        { method: 'POST', routeTemplate: 'orders', payloadLocation: 'message', statusSelector: '202' },
        { method: 'GET', routeTemplate: '/v1/orders', payloadLocation: 'response', statusSelector: '2xx' },
      ),
      weight: 6,
    },
    { arbitrary: fc.jsonValue({ maxDepth: 2 }), weight: 1 },
  );
  const protocolArb = fc.oneof(
    { arbitrary: fc.constantFrom('http-api', 'http-webhook', 'queue', 'scheduled-feed'), weight: 9 },
    { arbitrary: fc.constant('other'), weight: 1 },
  );
  // JSON Schema documents keep their definitions under $defs; the generated references name components.
  const jsonSchemaArb = fc.record({ root: schemaArb, A: schemaArb, B: schemaArb }).map(({ root, A, B }) => {
    const text = JSON.stringify({ root, A, B }).replace(/#\/components\/schemas\//g, '#/$defs/');
    const parsed = JSON.parse(text) as { root: unknown; A: unknown; B: unknown };
    return isObject(parsed.root) && !Object.hasOwn(parsed.root, '$defs')
      ? { ...parsed.root, $defs: { A: parsed.A, B: parsed.B } }
      : parsed.root;
  });

  it('on generated schemas and selectors, deterministically; an imported schema is in the subset with nothing unchecked', () => {
    let imported = 0;
    let flattened = 0;
    fc.assert(
      fc.property(jsonSchemaArb, selectorArb, protocolArb, fc.integer(), (generated, selector, protocol, seed) => {
        const text = JSON.stringify(generated ?? null);
        const first = outcome(() => importJsonSchema(JSON.parse(text), selector, protocol as never)) as {
          ok?: ImportedOperation;
          error?: { reason: string };
        };
        if (first.ok) {
          imported++;
          if (text.includes('"allOf"')) flattened++;
          expect(first.ok.unchecked).toEqual([]);
          // Strict mode: nothing outside the subset is accepted (allOf is flattened away).
          expectOperationWellFormed(first.ok);
        }
        expect(outcome(() => importJsonSchema(JSON.parse(text), selector, protocol as never))).toEqual(first);
        const reordered = shuffleKeys(JSON.parse(text), seededRandom(seed));
        expect(outcome(() => importJsonSchema(reordered, selector, protocol as never))).toEqual(first);
      }),
      { numRuns: 1500 },
    );
    expect(imported).toBeGreaterThan(20);
    expect(flattened).toBeGreaterThan(0);
  });

  it('refuses every generated schema with oneOf/anyOf outside the idioms or a remote reference, naming its pointer', () => {
    const selector = { method: 'POST', routeTemplate: 'orders', payloadLocation: 'message', statusSelector: '202' };
    fc.assert(
      fc.property(
        fc.constantFrom('oneOf', 'anyOf'),
        fc.array(fc.constantFrom<unknown>({ type: 'string' }, { type: 'null' }, { const: 1 }), { minLength: 1, maxLength: 3 }),
        fc.constantFrom('a', 'b c', 'x/y'),
        (key, alternatives, name) => {
          const schema = { type: 'object', properties: { [name]: { [key]: alternatives }, r: { $ref: 'https://example.com/r.json' } } };
          const escaped = name.replace(/~/g, '~0').replace(/\//g, '~1');
          const error = (outcome(() => importJsonSchema(schema, selector, 'queue')) as { error?: { pointers: string[] } }).error;
          expect(error?.pointers).toEqual([`/properties/${escaped}/${key}`, '/properties/r/$ref'].sort(compare));
        },
      ),
      { numRuns: 50 },
    );
  });
});
