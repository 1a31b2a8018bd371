import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { AppError } from '../shared/errors/index.js';
import { fingerprint } from '../shared/fingerprint.js';
import { importJsonSchema } from '../shared/contracts/importJsonSchema.js';
import { importOpenApi, type OpenApiProtocol } from '../shared/contracts/importOpenApi.js';
import type { ImportResult } from '../shared/contracts/types.js';
import { seededRandom } from './helpers/seededRandom.js';

// Issue 3, Done means: import(document) is deterministic, also after re-serialising the
// document with its keys in another order; junk never fails with anything but invalid_contract.

const CORPUS = process.env.CORPUS_DIR ?? fileURLToPath(new URL('../../shared/corpus/openapi/', import.meta.url));
const manifest: { file: string; traits: string[]; paths: number; webhooks: number }[] = JSON.parse(readFileSync(CORPUS + 'manifest.json', 'utf8'));
const texts = new Map(manifest.map((item) => [item.file, readFileSync(CORPUS + item.file, 'utf8')]));
const importable = manifest
  .filter((item) => !item.traits.includes('swagger-2.0'))
  .flatMap((item) => [
    ...(item.paths > 0 ? [{ file: item.file, protocol: 'http-api' as OpenApiProtocol }] : []),
    ...(item.webhooks > 0 ? [{ file: item.file, protocol: 'http-webhook' as OpenApiProtocol }] : []),
  ]);

/**
 * Re-serialises a JSON value with the members of every object in a random order (arrays keep
 * their order). Parsing the text back keeps a member named `__proto__` an own member; integer-like
 * keys come back in ascending order whatever the text says, as with any JSON.parse.
 */
function shuffledText(value: unknown, next: () => number): string {
  if (Array.isArray(value)) return '[' + value.map((item) => shuffledText(item, next)).join(',') + ']';
  if (typeof value !== 'object' || value === null) return JSON.stringify(value);
  const entries = Object.entries(value);
  for (let i = entries.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [entries[i], entries[j]] = [entries[j], entries[i]];
  }
  return '{' + entries.map(([key, item]) => JSON.stringify(key) + ':' + shuffledText(item, next)).join(',') + '}';
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

const summary = (result: ImportResult) => result.operations.map((operation) => [operation.operationKey, operation.fingerprint]);

describe('importOpenApi is deterministic', () => {
  for (const { file, protocol } of importable) {
    it(`${file} (${protocol}): same result after re-serialising with shuffled keys`, () => {
      const text = texts.get(file) as string;
      const original = outcome(() => importOpenApi(JSON.parse(text), protocol)) as { ok?: ImportResult };
      expect(outcome(() => importOpenApi(JSON.parse(text), protocol))).toEqual(original);
      const runs = text.length > 200_000 ? 2 : 6;
      fc.assert(fc.property(fc.integer(), (seed) => {
        const shuffled = shuffledText(JSON.parse(text), seededRandom(seed));
        const again = outcome(() => importOpenApi(JSON.parse(shuffled), protocol)) as { ok?: ImportResult };
        if (original.ok) expect(summary(again.ok as ImportResult)).toEqual(summary(original.ok));
        expect(again).toEqual(original);
      }), { numRuns: runs });
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

const refTargets = fc.oneof(
  { arbitrary: fc.constantFrom('#/components/schemas/A', '#/components/schemas/B', '#/components/schemas/A/properties/x'), weight: 6 },
  { arbitrary: fc.constantFrom('#/components/schemas/Missing', '#/components/responses/R', '#', '#/', '#/paths', 'other.json#/A', '#anchor', '#/components/schemas/%ZZ', '#/components/schemas/\ud800', 'https://example.com/s.json'), weight: 1 },
);
const keyword = fc.constantFrom(
  'type', 'properties', 'required', 'items', 'enum', 'additionalProperties', '$ref', 'nullable', 'const', 'allOf', 'oneOf',
  'not', 'patternProperties', 'format', 'description', 'minimum', '__proto__', 'constructor', '$defs', 'prefixItems',
);

const schemaArb: fc.Arbitrary<unknown> = fc.letrec<{ schema: unknown }>((tie) => ({
  // Past maxDepth the first (leaf) alternative is taken, which keeps generated schemas small.
  schema: fc.oneof(
    { maxDepth: 3, depthSize: 'small', withCrossShrink: true },
    { arbitrary: fc.oneof(fc.record({ type: fc.constantFrom('string', 'integer', 'boolean') }), fc.boolean(), junk), weight: 2 },
    { arbitrary: fc.record({
      type: mostly(fc.oneof(fc.constantFrom('object', 'array', 'string', 'integer', 'null'), fc.array(fc.constantFrom('string', 'null', 'integer'), { minLength: 1 })), fc.constantFrom('file', [], 1)),
      properties: mostly(fc.dictionary(fc.oneof(fc.string({ maxLength: 4 }), fc.constantFrom('__proto__', '$ref', 'allOf')), tie('schema'), { maxKeys: 3 }), junk),
      required: mostly(fc.array(fc.string({ maxLength: 3 }), { maxLength: 3 }), junk),
      items: tie('schema'),
      additionalProperties: tie('schema'),
      enum: mostly(fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 3 }), junk),
      nullable: fc.boolean(),
      const: fc.jsonValue({ maxDepth: 2 }),
      description: fc.string(),
      minimum: fc.integer(),
      $ref: refTargets,
    }, { requiredKeys: [] }), weight: 6 },
    { arbitrary: fc.record({ $ref: refTargets }), weight: 2 },
    { arbitrary: fc.dictionary(keyword, fc.oneof(tie('schema'), fc.array(tie('schema'), { maxLength: 2 })), { maxKeys: 3 }), weight: 1 },
  ),
})).schema;

const mediaArb = mostly(fc.dictionary(
  fc.oneof({ arbitrary: fc.constant('application/json'), weight: 4 }, { arbitrary: fc.constantFrom('application/problem+json', 'application/json; charset=utf-8', 'text/plain', 'application/xml', '*/*', 'x'), weight: 2 }),
  mostly(fc.record({ schema: schemaArb, example: junk }, { requiredKeys: ['schema'] }), junk),
  { minKeys: 1, maxKeys: 2 },
), junk);
const payloadArb = fc.oneof(
  { arbitrary: fc.record({ description: fc.string(), content: mediaArb }, { requiredKeys: ['content'] }), weight: 8 },
  { arbitrary: fc.record({ description: fc.string() }), weight: 1 },
  { arbitrary: fc.record({ $ref: fc.constantFrom('#/components/responses/R', '#/components/responses/Missing', 'x.yaml#/R', '#/paths') }), weight: 1 },
  { arbitrary: junk, weight: 1 },
);
const operationArb = mostly(fc.record({
  requestBody: payloadArb,
  responses: mostly(fc.dictionary(fc.constantFrom('200', '201', '2XX', '2xx', 'default', '404', 'x-ext', '999', 'DEFAULT'), payloadArb, { maxKeys: 3 }), junk),
}, { requiredKeys: [] }), junk);
const pathItemArb = fc.oneof(
  { arbitrary: fc.dictionary(fc.constantFrom('get', 'post', 'put', 'patch', 'delete', 'head', 'options', 'parameters', 'GET'), operationArb, { minKeys: 1, maxKeys: 3 }), weight: 8 },
  { arbitrary: fc.record({ $ref: fc.constantFrom('#/paths/~1a', '#/components/pathItems/P', 'remote.yaml') }), weight: 1 },
  { arbitrary: junk, weight: 1 },
);
const documentArb = fc.record({
  openapi: mostly(fc.constantFrom('3.0.0', '3.0.3', '3.1.0', '3.1.1'), junk),
  swagger: fc.oneof({ arbitrary: fc.constant(undefined), weight: 15 }, { arbitrary: fc.constant('2.0'), weight: 1 }),
  paths: mostly(fc.dictionary(fc.oneof(fc.constantFrom('/a', '/b/{id}', '/c'), fc.constantFrom('x-ext', 'rel', '/q?x', '')), pathItemArb, { maxKeys: 3 }), junk),
  webhooks: mostly(fc.dictionary(fc.string({ maxLength: 5 }), pathItemArb, { maxKeys: 3 }), junk),
  components: fc.record({
    schemas: fc.record({ A: schemaArb, B: schemaArb }, { requiredKeys: [] }),
    responses: fc.record({ R: payloadArb }, { requiredKeys: [] }),
  }, { requiredKeys: [] }),
}, { requiredKeys: ['openapi', 'swagger', 'paths', 'webhooks'] });

/** Every result is well formed: sorted, fingerprinted, self-contained. */
function expectWellFormed(result: ImportResult): void {
  expect(result.operations.length).toBeGreaterThan(0);
  const operationKeys = result.operations.map((operation) => operation.operationKey);
  expect(new Set(operationKeys).size).toBe(operationKeys.length);
  expect([...operationKeys].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))).toEqual(operationKeys);
  for (const operation of result.operations) {
    expect(operation.fingerprint).toBe(fingerprint(operation.schema));
    expect(typeof operation.schema).toBe('object');
    const defs = (operation.schema.$defs ?? {}) as Record<string, unknown>;
    for (const match of JSON.stringify(operation.schema).matchAll(/"\$ref":"#\/\$defs\/([^"]*)"/g)) {
      const name = decodeURIComponent(match[1]).replace(/~1/g, '/').replace(/~0/g, '~');
      expect(Object.hasOwn(defs, name)).toBe(true);
    }
  }
}

describe('importOpenApi never fails with anything but invalid_contract', () => {
  it('on arbitrary JSON values', () => {
    fc.assert(fc.property(fc.jsonValue(), fc.constantFrom<OpenApiProtocol>('http-api', 'http-webhook'), (document, protocol) => {
      const result = outcome(() => importOpenApi(document, protocol)) as { ok?: ImportResult };
      if (result.ok) expectWellFormed(result.ok);
    }), { numRuns: 300 });
  });

  it('on generated OpenAPI-shaped documents, deterministically', () => {
    let imported = 0;
    fc.assert(fc.property(documentArb, fc.constantFrom<OpenApiProtocol>('http-api', 'http-webhook'), fc.integer(), (generated, protocol, seed) => {
      const document = JSON.parse(JSON.stringify(generated));
      const first = outcome(() => importOpenApi(document, protocol)) as { ok?: ImportResult };
      if (first.ok) {
        imported++;
        expectWellFormed(first.ok);
      }
      const reordered = shuffleKeys(document, seededRandom(seed));
      expect(outcome(() => importOpenApi(reordered, protocol))).toEqual(first);
    }), { numRuns: 1500 });
    // The generator must also reach the success path, or this property proves little.
    expect(imported).toBeGreaterThan(20);
  });

  it('on corpus documents with one member replaced by junk', () => {
    const sources = ['oai-petstore-v3.0.json', 'redocly-museum-v3.1.json', 'oai-webhook-example-v3.1.json', 'swagger-petstore-v3.0.json']
      .map((file) => JSON.parse(texts.get(file) as string) as Record<string, unknown>);
    fc.assert(fc.property(fc.nat(), fc.nat(), fc.oneof(fc.jsonValue({ maxDepth: 2 }), schemaArb), fc.constantFrom<OpenApiProtocol>('http-api', 'http-webhook'), (which, where, junk, protocol) => {
      const document = structuredClone(sources[which % sources.length]);
      // Walk to a random member, then replace it.
      let node: any = document;
      let steps = 1 + (where % 9);
      let seed = where;
      while (steps-- > 0) {
        const children = node !== null && typeof node === 'object' ? Object.keys(node) : [];
        const inner = children.filter((key) => node[key] !== null && typeof node[key] === 'object');
        if (steps === 0 || inner.length === 0) {
          if (children.length > 0) node[children[seed % children.length]] = junk;
          break;
        }
        node = node[inner[seed % inner.length]];
        seed = Math.floor(seed / 7) + 3;
      }
      const result = outcome(() => importOpenApi(document, protocol)) as { ok?: ImportResult };
      if (result.ok) expectWellFormed(result.ok);
    }), { numRuns: 1500 });
  });

  it('on deeply nested schemas and values', () => {
    const nest = (depth: number, make: (inner: unknown) => unknown, leaf: unknown) => {
      let value = leaf;
      for (let i = 0; i < depth; i++) value = make(value);
      return value;
    };
    const deepSchema = nest(5000, (inner) => ({ type: 'object', properties: { a: inner } }), { type: 'string' });
    const deepEnum = { enum: [nest(100_000, (inner) => [inner], 1)] };
    for (const schema of [deepSchema, deepEnum, { const: nest(100_000, (inner) => ({ a: inner }), 1) }]) {
      const document = { openapi: '3.1.0', paths: { '/d': { get: { responses: { 200: { description: 'x', content: { 'application/json': { schema } } } } } } } };
      const result = outcome(() => importOpenApi(document, 'http-api')) as { error?: { reason: string } };
      expect(result.error?.reason).toMatch(/nested too deeply/);
      expect((outcome(() => importJsonSchema(schema, { method: 'POST', routeTemplate: 'q', payloadLocation: 'message', statusSelector: 'default' }, 'queue')) as { error?: { reason: string } }).error?.reason).toMatch(/nested too deeply/);
    }
    const deepVersion = { openapi: nest(100_000, (inner) => [inner], '3.0.0'), paths: {} };
    expect((outcome(() => importOpenApi(deepVersion, 'http-api')) as { error?: { reason: string } }).error?.reason).toBe('unsupported OpenAPI version (array); supported versions are 3.0.x and 3.1.x');
  });
});

describe('importJsonSchema never fails with anything but invalid_contract', () => {
  const selectorArb = fc.oneof(
    { arbitrary: fc.record({
      method: fc.constantFrom('POST', 'GET', 'post', 'HEAD'),
      routeTemplate: fc.oneof(fc.constantFrom('orders', '/v1/orders', ''), fc.string({ maxLength: 8 })),
      payloadLocation: fc.constantFrom('message', 'request', 'response', 'body'),
      statusSelector: fc.constantFrom('200', '2XX', '2xx', 'default', '700', ''),
    }), weight: 2 },
    { arbitrary: fc.constantFrom(
      { method: 'POST', routeTemplate: 'orders', payloadLocation: 'message', statusSelector: '202' },
      { method: 'GET', routeTemplate: '/v1/orders', payloadLocation: 'response', statusSelector: '2xx' },
    ), weight: 6 },
    { arbitrary: fc.jsonValue({ maxDepth: 2 }), weight: 1 },
  );
  const protocolArb = fc.oneof({ arbitrary: fc.constantFrom('http-api', 'http-webhook', 'queue', 'scheduled-feed'), weight: 9 }, { arbitrary: fc.constant('other'), weight: 1 });

  it('on generated schemas and selectors, deterministically', () => {
    let imported = 0;
    fc.assert(fc.property(schemaArb, selectorArb, protocolArb, fc.integer(), (generated, selector, protocol, seed) => {
      const schema = JSON.parse(JSON.stringify(generated ?? null));
      const first = outcome(() => importJsonSchema(schema, selector, protocol as never)) as { ok?: ImportResult['operations'][number] };
      if (first.ok) {
        imported++;
        expectWellFormed({ operations: [first.ok], skipped: [] });
      }
      const reordered = shuffleKeys(schema, seededRandom(seed));
      expect(outcome(() => importJsonSchema(reordered, selector, protocol as never))).toEqual(first);
    }), { numRuns: 1500 });
    expect(imported).toBeGreaterThan(20);
  });
});
