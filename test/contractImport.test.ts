import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { AppError } from '../shared/errors/index.js';
import { fingerprint, FINGERPRINT_PATTERN } from '../shared/fingerprint.js';
import { importJsonSchema } from '../shared/contracts/importJsonSchema.js';
import { importOpenApi, isJsonMediaType } from '../shared/contracts/importOpenApi.js';
import type { ImportedOperation, ImportResult, UncheckedSubschema } from '../shared/contracts/types.js';
import {
  asImported,
  declaredPayloads,
  isObject,
  resolvePointer,
  unescapeToken,
  type DeclaredPayload,
  type Json,
} from './helpers/corpusPayloads.js';

// Issue 3 (contract importer), Done means: every corpus document is imported here.
// 00-decisions §7: every declared payload of a published document is an operation; what lies
// outside the schema subset is left unchecked in it (and listed in `skipped`), not left out.

const CORPUS = process.env.CORPUS_DIR ?? fileURLToPath(new URL('../../shared/corpus/openapi/', import.meta.url));

interface ManifestEntry {
  file: string;
  openapi: string;
  traits: string[];
  paths: number;
  webhooks: number;
  cycles: string[][];
}

const manifest: ManifestEntry[] = JSON.parse(readFileSync(`${CORPUS}manifest.json`, 'utf8'));
const load = (file: string): Json => JSON.parse(readFileSync(CORPUS + file, 'utf8'));
const entry = (file: string): ManifestEntry => manifest.find((item) => item.file === file) as ManifestEntry;
const isSwagger2 = (item: ManifestEntry) => item.traits.includes('swagger-2.0');

function rejection(run: () => unknown): { reason: string; pointers: string[] } {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(AppError);
    const appError = error as AppError;
    expect(appError.code).toBe('invalid_contract');
    expect(appError.status).toBe(400);
    expect(appError.body()).toEqual({ error: 'invalid_contract', reason: appError.extra.reason, pointers: appError.extra.pointers });
    return appError.extra as { reason: string; pointers: string[] };
  }
  throw new Error('expected invalid_contract');
}

const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const keys = (result: ImportResult) => result.operations.map((operation) => operation.operationKey);
const byKey = (result: ImportResult, key: string) => {
  const operation = result.operations.find((item) => item.operationKey === key);
  expect(operation, `operation ${key}`).toBeDefined();
  return operation as ImportedOperation;
};
/** `pointer` is `ancestor` or lies inside it. */
const within = (pointer: string, ancestor: string) => pointer === ancestor || pointer.startsWith(`${ancestor}/`);
/** The (pointer, reason) pairs of unchecked entries, as `skipped` lists them: deduplicated and sorted. */
const asSkipped = (unchecked: readonly UncheckedSubschema[]) =>
  [...new Map(unchecked.map(({ pointer, reason }) => [`${pointer}\u0000${reason}`, { pointer, reason }])).values()].sort(
    (a, b) => compare(a.pointer, b.pointer) || compare(a.reason, b.reason),
  );

const SUBSET = new Set(['type', 'properties', 'required', 'items', 'enum', 'additionalProperties', '$ref', '$defs']);
const TYPES = new Set(['object', 'array', 'string', 'number', 'integer', 'boolean', 'null']);

/** The stored schema uses only the subset and every `$ref` names a definition it carries. */
function expectStoredSchema(schema: Json): void {
  const defs = (schema.$defs ?? {}) as Json;
  const visit = (node: unknown, isRoot: boolean): void => {
    if (typeof node === 'boolean') return;
    expect(isObject(node)).toBe(true);
    const object = node as Json;
    for (const key of Object.keys(object)) expect(SUBSET.has(key), `keyword ${key}`).toBe(true);
    if (!isRoot) expect(object.$defs).toBeUndefined();
    if (object.$ref !== undefined) {
      const ref = object.$ref as string;
      if (ref !== '#') {
        expect(ref.startsWith('#/$defs/')).toBe(true);
        const name = unescapeToken(decodeURIComponent(ref.slice('#/$defs/'.length)));
        expect(Object.hasOwn(defs, name), `dangling ${ref}`).toBe(true);
      }
    }
    if (object.type !== undefined) {
      const types = [object.type].flat() as string[];
      for (const type of types) expect(TYPES.has(type)).toBe(true);
      if (Array.isArray(object.type)) expect([...object.type].sort()).toEqual(object.type);
    }
    if (object.required !== undefined) expect([...new Set(object.required as string[])].sort()).toEqual(object.required);
    if (object.enum !== undefined) expect(Array.isArray(object.enum)).toBe(true);
    for (const child of Object.values((object.properties ?? {}) as Json)) visit(child, false);
    if (object.items !== undefined) visit(object.items, false);
    if (object.additionalProperties !== undefined) visit(object.additionalProperties, false);
  };
  visit(schema, true);
  for (const def of Object.values(defs)) visit(def, false);
}

function expectOperationInvariants(operation: ImportedOperation): void {
  expect(operation.operationKey).toBe(
    `${operation.method} ${operation.routeTemplate}:${operation.payloadLocation}:${operation.statusSelector}`,
  );
  expect(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']).toContain(operation.method);
  expect(operation.statusSelector).toMatch(/^([1-5][0-9][0-9]|[1-5]XX|default)$/);
  expect(operation.fingerprint).toMatch(FINGERPRINT_PATTERN);
  expect(operation.fingerprint).toBe(fingerprint(operation.schema));
  expectStoredSchema(operation.schema);
  // Unchecked entries: sorted, distinct, each naming a stored sub-schema of this operation.
  expect(Array.isArray(operation.unchecked)).toBe(true);
  const sorted = [...operation.unchecked].sort(
    (a, b) => compare(a.schemaPointer, b.schemaPointer) || compare(a.pointer, b.pointer) || compare(a.reason, b.reason),
  );
  expect(operation.unchecked).toEqual(sorted);
  expect(new Set(operation.unchecked.map((item) => JSON.stringify(item))).size).toBe(operation.unchecked.length);
  for (const item of operation.unchecked) {
    expect(Object.keys(item).sort()).toEqual(['pointer', 'reason', 'schemaPointer']);
    expect(item.pointer === '' || item.pointer.startsWith('/')).toBe(true);
    expect(item.reason.length).toBeGreaterThan(0);
    expect(isObject(resolvePointer(operation.schema, item.schemaPointer)), `${operation.operationKey}: ${item.schemaPointer}`).toBe(true);
  }
}

/** Every unchecked entry of every operation is in `skipped`, which is sorted and distinct. */
function expectSkippedListsUnchecked(result: ImportResult): void {
  const skipped = new Set(result.skipped.map((item) => `${item.pointer}\u0000${item.reason}`));
  expect(skipped.size).toBe(result.skipped.length);
  for (const operation of result.operations) {
    for (const item of operation.unchecked)
      expect(skipped.has(`${item.pointer}\u0000${item.reason}`), `${item.pointer}: ${item.reason} not in skipped`).toBe(true);
  }
  expect(result.skipped).toEqual([...result.skipped].sort((a, b) => compare(a.pointer, b.pointer) || compare(a.reason, b.reason)));
  expect(keys(result)).toEqual([...keys(result)].sort(compare));
}

/**
 * Exact accounting: every declared payload is an operation or is left out with a reason, and
 * `skipped` holds nothing else: each entry is an unchecked entry of an operation or the reason a
 * declared payload is left out.
 */
function expectExactAccounting(
  document: Json,
  source: 'paths' | 'webhooks',
  result: ImportResult,
): { payloads: DeclaredPayload[]; imported: DeclaredPayload[] } {
  expectSkippedListsUnchecked(result);
  const payloads = declaredPayloads(document, source);
  const unchecked = new Set(
    result.operations.flatMap((operation) => operation.unchecked.map((item) => `${item.pointer}\u0000${item.reason}`)),
  );
  const leftOutReasons = result.skipped.filter((item) => !unchecked.has(`${item.pointer}\u0000${item.reason}`));
  const isLeftOut = (payload: DeclaredPayload) =>
    leftOutReasons.some((item) => payload.pointers.some((pointer) => within(pointer, item.pointer)));
  const imported = payloads.filter((payload) => !isLeftOut(payload));
  expect(imported.map((payload) => payload.key).sort(compare)).toEqual(keys(result));
  for (const item of leftOutReasons) {
    expect(
      payloads.some((payload) => payload.pointers.some((pointer) => within(pointer, item.pointer))),
      `skipped ${item.pointer} (${item.reason}) names no declared payload`,
    ).toBe(true);
  }
  return { payloads, imported };
}

const uncheckedCount = (result: ImportResult) => result.operations.reduce((sum, operation) => sum + operation.unchecked.length, 0);

// Per corpus document and protocol (http-api from paths, http-webhook from webhooks):
// [operations, skipped entries, unchecked entries over all operations]. Nothing in the corpus is
// left out: every skipped entry is a keyword or payload left unchecked.
const EXPECTED: Record<string, { api?: [number, number, number]; webhook?: [number, number, number] }> = {
  'oai-petstore-v3.0.json': { api: [7, 0, 0] },
  'oai-petstore-expanded-v3.0.json': { api: [9, 0, 0] },
  'oai-uspto-v3.0.json': { api: [6, 1, 1] },
  'oai-callback-example-v3.0.json': { api: [1, 0, 0] },
  'oai-link-example-v3.0.json': { api: [6, 0, 0] },
  'oai-api-with-examples-v3.0.json': { api: [4, 4, 4] },
  'oai-webhook-example-v3.1.json': { webhook: [1, 0, 0] },
  'oai-non-oauth-scopes-v3.1.json': { api: [1, 1, 1] },
  'oai-petstore-swagger-v2.0.json': { api: [6, 0, 0] },
  'oai-uber-swagger-v2.0.json': { api: [10, 0, 0] },
  'redocly-museum-v3.1.json': { api: [28, 1, 1], webhook: [1, 0, 0] },
  'swagger-petstore-v3.0.json': { api: [71, 1, 1] },
  'swagger-petstore-v3.1.json': { api: [23, 2, 14], webhook: [1, 2, 2] },
  'adyen-dispute-webhooks-v3.1.json': { webhook: [2, 0, 0] },
  'adyen-management-webhooks-v3.1.json': { webhook: [8, 0, 0] },
  'adyen-transfer-webhooks-v3.1.json': { webhook: [2, 5, 10] },
  'adyen-checkout-v71-v3.1.json': { api: [152, 3, 4] },
  // Its 403 declares `schema: {type: object}` under the operation's produces [json, xml]: a JSON
  // payload (swaggerConversion.ts; the 0.4 converter dropped the JSON entry beside an XML example).
  'nyt-most-popular-swagger-v2.0.json': { api: [6, 0, 0] },
  'nyt-books-swagger-v2.0.json': { api: [6, 0, 0] },
  'slack-web-swagger-v2.0.json': { api: [439, 110, 133] },
  'pokeapi-v3.1.json': { api: [100, 0, 0] },
  'keycloak-admin-21.1.2-v3.0.json': { api: [373, 6, 6] },
  'openai-2024-04-v3.0.json': { api: [75, 38, 54] },
  'qdrant-v3.0.json': { api: [243, 51, 175] },
  'spree-storefront-v3.0.json': { api: [180, 19, 43] },
  'discord-v3.1.json': { api: [826, 77, 547] },
};

describe('importOpenApi: the corpus', () => {
  it('lists every corpus document in the manifest and the expectations', () => {
    expect(Object.keys(EXPECTED).sort()).toEqual(manifest.map((item) => item.file).sort());
    // The corpus folder is read at test time: a document added without a manifest row fails here.
    const files = readdirSync(CORPUS)
      .filter((file) => file.endsWith('.json') && file !== 'manifest.json')
      .sort();
    expect(manifest.map((item) => item.file).sort()).toEqual(files);
  });

  for (const item of manifest) {
    const expected = EXPECTED[item.file];
    for (const [protocol, source, counts, declared] of [
      ['http-api', 'paths', expected?.api, item.paths],
      ['http-webhook', 'webhooks', expected?.webhook, item.webhooks],
    ] as const) {
      const title =
        isSwagger2(item) && protocol === 'http-api'
          ? `${item.file}: http-api (Swagger 2.0 converted to OpenAPI 3.0, the document sent unchanged)`
          : `${item.file}: ${protocol}`;
      it(title, () => {
        const document = load(item.file);
        if (declared === 0) {
          expect(counts).toBeUndefined();
          const error = rejection(() => importOpenApi(document, protocol));
          expect(error).toEqual({
            reason: `the document has no ${source}; ${protocol} operations are read from ${source}`,
            pointers: [''],
          });
          return;
        }
        expect(counts).toBeDefined();
        const [operationCount, skippedCount, uncheckedTotal] = counts as [number, number, number];
        const result = importOpenApi(document, protocol);
        // The document sent is the stored evidence: importing does not change it.
        expect(document).toEqual(load(item.file));
        expect(result.openapiVersion).toBe(item.openapi);
        expect([result.operations.length, result.skipped.length, uncheckedCount(result)]).toEqual([
          operationCount,
          skippedCount,
          uncheckedTotal,
        ]);
        for (const operation of result.operations) expectOperationInvariants(operation);
        const { payloads, imported } = expectExactAccounting(asImported(document), source, result);
        // Nothing in the corpus is left out: every declared payload is an operation.
        expect(imported).toEqual(payloads);
        // Every route of the document with an operation of a supported method has an operation.
        const routes = new Set(result.operations.map((operation) => operation.routeTemplate));
        expect(routes).toEqual(new Set(payloads.map((payload) => payload.route)));
        expect(routes.size).toBeLessThanOrEqual(declared);
        // Deterministic: the identical-retry rule compares operation keys and schema fingerprints.
        expect(importOpenApi(load(item.file), protocol)).toEqual(result);
        if (protocol === 'http-webhook') {
          for (const operation of result.operations) {
            expect(operation.payloadLocation).toBe('message');
            expect(operation.statusSelector).toBe('default');
            expect(operation.eventType).toBe(operation.routeTemplate);
            expect(Object.keys(document.webhooks as object)).toContain(operation.routeTemplate);
          }
        } else {
          for (const operation of result.operations) {
            expect(operation.eventType).toBeNull();
            expect(['request', 'response']).toContain(operation.payloadLocation);
            if (operation.payloadLocation === 'request') expect(operation.statusSelector).toBe('default');
          }
        }
      });
    }
  }

  it('imports at least 95 % of the JSON payloads of the whole corpus as operations', () => {
    // Issue 14's measure: each response status and request body with JSON content (webhooks: the
    // request bodies, the messages; what a webhook receiver answers is not a contract payload).
    const rows: { file: string; json: number; imported: number; leftOut: number; unchecked: number }[] = [];
    for (const item of manifest) {
      const document = load(item.file);
      const row = { file: item.file, json: 0, imported: 0, leftOut: 0, unchecked: 0 };
      for (const [protocol, source] of [
        ['http-api', 'paths'],
        ['http-webhook', 'webhooks'],
      ] as const) {
        if (!Object.hasOwn(asImported(document), source)) continue;
        const result = importOpenApi(document, protocol);
        const { payloads, imported } = expectExactAccounting(asImported(document), source, result);
        const json = payloads.filter((payload) => payload.json);
        row.json += json.length;
        row.imported += imported.filter((payload) => payload.json).length;
        row.leftOut += json.length - imported.filter((payload) => payload.json).length;
        row.unchecked += uncheckedCount(result);
      }
      rows.push(row);
    }
    expect(rows.length).toBe(26);
    const total = rows.reduce(
      (sum, row) => ({
        json: sum.json + row.json,
        imported: sum.imported + row.imported,
        leftOut: sum.leftOut + row.leftOut,
        unchecked: sum.unchecked + row.unchecked,
      }),
      { json: 0, imported: 0, leftOut: 0, unchecked: 0 },
    );
    const share = total.imported / total.json;
    const width = Math.max(...rows.map((row) => row.file.length), 'document'.length);
    const line = (cells: (string | number)[]) =>
      cells.map((cell, index) => (index === 0 ? String(cell).padEnd(width) : String(cell).padStart(index === 4 ? 9 : 8))).join('  ');
    console.log(
      [
        line(['document', 'JSON', 'imported', 'left out', 'unchecked']),
        ...rows.map((row) => line([row.file, row.json, row.imported, row.leftOut, row.unchecked])),
        line(['total', total.json, total.imported, total.leftOut, total.unchecked]),
        `imported: ${(share * 100).toFixed(2)} % of ${total.json} JSON payloads`,
      ].join('\n'),
    );
    expect(total.json).toBeGreaterThan(1000);
    expect(share).toBeGreaterThanOrEqual(0.95);
    expect(total.imported + total.leftOut).toBe(total.json);
  });
});

describe('importOpenApi: exact results for small documents', () => {
  it('oai-petstore: seven operations, Pets references Pet inside $defs, the 201 without content is unchecked', () => {
    const result = importOpenApi(load('oai-petstore-v3.0.json'), 'http-api');
    expect(keys(result)).toEqual([
      'GET /pets/{petId}:response:200',
      'GET /pets/{petId}:response:default',
      'GET /pets:response:200',
      'GET /pets:response:default',
      'POST /pets:request:default',
      'POST /pets:response:201',
      'POST /pets:response:default',
    ]);
    expect(result.skipped).toEqual([]);
    const pet = {
      type: 'object',
      required: ['id', 'name'],
      properties: { id: { type: 'integer' }, name: { type: 'string' }, tag: { type: 'string' } },
    };
    expect(byKey(result, 'GET /pets:response:200').schema).toEqual({
      $ref: '#/$defs/Pets',
      $defs: { Pet: pet, Pets: { type: 'array', items: { $ref: '#/$defs/Pet' } } },
    });
    expect(byKey(result, 'POST /pets:request:default')).toEqual({
      operationKey: 'POST /pets:request:default',
      method: 'POST',
      routeTemplate: '/pets',
      basePaths: ['/v1'],
      eventType: null,
      payloadLocation: 'request',
      statusSelector: 'default',
      fingerprint: fingerprint({ $ref: '#/$defs/Pet', $defs: { Pet: pet } }),
      schema: { $ref: '#/$defs/Pet', $defs: { Pet: pet } },
      unchecked: [],
    });
    // "201: Null response" declares no content: any body is accepted, nothing is left unchecked.
    expect(byKey(result, 'POST /pets:response:201')).toMatchObject({ schema: {}, fingerprint: fingerprint({}), unchecked: [] });
    // The same schema has the same fingerprint wherever it is used.
    expect(byKey(result, 'GET /pets/{petId}:response:200').fingerprint).toBe(byKey(result, 'POST /pets:request:default').fingerprint);
  });

  it('oai-uspto: the form-encoded request body is an operation left unchecked as non-JSON media', () => {
    const result = importOpenApi(load('oai-uspto-v3.0.json'), 'http-api');
    expect(keys(result)).toEqual([
      'GET /:response:200',
      'GET /{dataset}/{version}/fields:response:200',
      'GET /{dataset}/{version}/fields:response:404',
      'POST /{dataset}/{version}/records:request:default',
      'POST /{dataset}/{version}/records:response:200',
      'POST /{dataset}/{version}/records:response:404',
    ]);
    const form = {
      pointer: '/paths/~1{dataset}~1{version}~1records/post/requestBody/content/application~1x-www-form-urlencoded',
      reason: 'non-JSON media type application/x-www-form-urlencoded',
    };
    expect(result.skipped).toEqual([form]);
    expect(byKey(result, 'POST /{dataset}/{version}/records:request:default')).toMatchObject({
      schema: {},
      unchecked: [{ ...form, schemaPointer: '' }],
    });
    expect(byKey(result, 'POST /{dataset}/{version}/records:response:404')).toMatchObject({ schema: {}, unchecked: [] });
    expect(byKey(result, 'POST /{dataset}/{version}/records:response:200').schema).toEqual({
      type: 'array',
      items: { type: 'object', additionalProperties: { type: 'object' } },
    });
  });

  it('oai-webhook-example: one message operation per webhook, eventType the webhook name', () => {
    const result = importOpenApi(load('oai-webhook-example-v3.1.json'), 'http-webhook');
    expect(result.skipped).toEqual([]);
    expect(result.operations).toEqual([
      {
        operationKey: 'POST newPet:message:default',
        method: 'POST',
        routeTemplate: 'newPet',
        basePaths: [],
        eventType: 'newPet',
        payloadLocation: 'message',
        statusSelector: 'default',
        fingerprint: expect.stringMatching(FINGERPRINT_PATTERN),
        schema: {
          $ref: '#/$defs/Pet',
          $defs: {
            Pet: { required: ['id', 'name'], properties: { id: { type: 'integer' }, name: { type: 'string' }, tag: { type: 'string' } } },
          },
        },
        unchecked: [],
      },
    ]);
  });

  it('redocly-museum: the allOf of tickets is flattened, image/png is unchecked, problem+json responses are imported', () => {
    const document = load('redocly-museum-v3.1.json');
    const result = importOpenApi(document, 'http-api');
    const png = {
      pointer: '/paths/~1tickets~1{ticketId}~1qr/get/responses/200/content/image~1png',
      reason: 'non-JSON media type image/png',
    };
    expect(result.skipped).toEqual([png]);
    expect(byKey(result, 'GET /tickets/{ticketId}/qr:response:200')).toMatchObject({
      schema: {},
      unchecked: [{ ...png, schemaPointer: '' }],
    });
    expect(byKey(result, 'GET /museum-hours:response:400').schema.$ref).toBe('#/$defs/Error');
    expect(keys(result)).toContain('POST /special-events:response:201');
    // BuyMuseumTickets = allOf [{email}, Ticket] and MuseumTicketsConfirmation = allOf [Ticket, {message, confirmationCode}].
    const ref = (name: string) => ({ $ref: `#/$defs/${name}` });
    const ticketProperties = { eventId: ref('EventId'), ticketDate: ref('Date'), ticketId: ref('TicketId'), ticketType: ref('TicketType') };
    const request = byKey(result, 'POST /tickets:request:default');
    expect(request.unchecked).toEqual([]);
    expect(request.schema.$ref).toBe('#/$defs/BuyMuseumTickets');
    expect((request.schema.$defs as Json).BuyMuseumTickets).toEqual({
      type: 'object',
      required: ['ticketDate', 'ticketType'],
      properties: { email: ref('Email'), ...ticketProperties },
    });
    const confirmation = byKey(result, 'POST /tickets:response:201');
    expect(confirmation.unchecked).toEqual([]);
    expect((confirmation.schema.$defs as Json).MuseumTicketsConfirmation).toEqual({
      type: 'object',
      required: ['confirmationCode', 'message', 'ticketDate', 'ticketType'],
      properties: { confirmationCode: ref('TicketConfirmation'), message: ref('TicketMessage'), ...ticketProperties },
    });
    expect((confirmation.schema.$defs as Json).TicketType).toEqual({ type: 'string', enum: ['event', 'general'] });
    // The webhook of the same document belongs to http-webhook only.
    expect(keys(result).some((key) => key.includes('publishNewEvent'))).toBe(false);
    const webhooks = importOpenApi(document, 'http-webhook');
    expect(keys(webhooks)).toEqual(['POST publishNewEvent:message:default']);
    expect(webhooks.operations[0].fingerprint).toBe(byKey(result, 'POST /special-events:request:default').fingerprint);
  });

  it('oai-petstore-expanded: the allOf in Pet is flattened, so every payload is checked', () => {
    const result = importOpenApi(load('oai-petstore-expanded-v3.0.json'), 'http-api');
    expect(result.skipped).toEqual([]);
    expect(keys(result)).toEqual([
      'DELETE /pets/{id}:response:204',
      'DELETE /pets/{id}:response:default',
      'GET /pets/{id}:response:200',
      'GET /pets/{id}:response:default',
      'GET /pets:response:200',
      'GET /pets:response:default',
      'POST /pets:request:default',
      'POST /pets:response:200',
      'POST /pets:response:default',
    ]);
    const newPet = { type: 'object', required: ['name'], properties: { name: { type: 'string' }, tag: { type: 'string' } } };
    const pet = {
      type: 'object',
      required: ['id', 'name'],
      properties: { id: { type: 'integer' }, name: { type: 'string' }, tag: { type: 'string' } },
    };
    // NewPet is only inlined into Pet: no `$ref` of these schemas reaches it, so it is not in their $defs.
    expect(byKey(result, 'GET /pets/{id}:response:200').schema).toEqual({ $ref: '#/$defs/Pet', $defs: { Pet: pet } });
    expect(byKey(result, 'GET /pets:response:200').schema).toEqual({ type: 'array', items: { $ref: '#/$defs/Pet' }, $defs: { Pet: pet } });
    expect(byKey(result, 'POST /pets:request:default').schema).toEqual({ $ref: '#/$defs/NewPet', $defs: { NewPet: newPet } });
    for (const operation of result.operations) expect(operation.unchecked).toEqual([]);
  });

  it('documents without schemas import operations whose payloads are unchecked', () => {
    const examples = importOpenApi(load('oai-api-with-examples-v3.0.json'), 'http-api');
    const pointers = [
      '/paths/~1/get/responses/200/content/application~1json',
      '/paths/~1/get/responses/300/content/application~1json',
      '/paths/~1v2/get/responses/200/content/application~1json',
      '/paths/~1v2/get/responses/203/content/application~1json',
    ];
    expect(keys(examples)).toEqual(['GET /:response:200', 'GET /:response:300', 'GET /v2:response:200', 'GET /v2:response:203']);
    expect(examples.operations.map((operation) => [operation.schema, operation.unchecked])).toEqual(
      pointers.map((pointer) => [{}, [{ pointer, schemaPointer: '', reason: 'no schema' }]]),
    );
    expect(examples.skipped).toEqual(pointers.map((pointer) => ({ pointer, reason: 'no schema' })));
    // An operation that declares no responses at all is still an operation.
    const scopes = importOpenApi(load('oai-non-oauth-scopes-v3.1.json'), 'http-api');
    expect(scopes.operations).toEqual([
      {
        operationKey: 'GET /users:response:default',
        method: 'GET',
        routeTemplate: '/users',
        basePaths: [],
        eventType: null,
        payloadLocation: 'response',
        statusSelector: 'default',
        fingerprint: fingerprint({}),
        schema: {},
        unchecked: [{ pointer: '/paths/~1users/get', schemaPointer: '', reason: 'no responses declared' }],
      },
    ]);
    expect(scopes.skipped).toEqual([{ pointer: '/paths/~1users/get', reason: 'no responses declared' }]);
  });

  it('swagger-petstore 3.1: the null $ref and the $id/$anchor reference are left unchecked in Pet, the rest is imported', () => {
    const result = importOpenApi(load('swagger-petstore-v3.1.json'), 'http-api');
    const petDetails = { pointer: '/components/schemas/Pet/properties/petDetails/$ref', reason: 'invalid reference (not a string)' };
    const petDetailsId = {
      pointer: '/components/schemas/Pet/properties/petDetailsId/$ref',
      reason: 'remote reference /components/schemas/petdetails#pet_details_id',
    };
    expect(result.skipped).toEqual([petDetails, petDetailsId]);
    const withPet = result.operations.filter((operation) => operation.unchecked.length > 0).map((operation) => operation.operationKey);
    expect(withPet).toEqual([
      'GET /pet/findByStatus:response:200',
      'GET /pet/findByTags:response:200',
      'GET /pet/{petId}:response:200',
      'POST /pet:request:default',
      'POST /pet:response:200',
      'PUT /pet:request:default',
      'PUT /pet:response:200',
    ]);
    const request = byKey(result, 'POST /pet:request:default');
    expect(request.unchecked).toEqual([
      { ...petDetails, schemaPointer: '/$defs/Pet/properties/petDetails' },
      { ...petDetailsId, schemaPointer: '/$defs/Pet/properties/petDetailsId' },
    ]);
    const pet = (request.schema.$defs as Record<string, Json>).Pet;
    expect((pet.properties as Json).petDetails).toEqual({});
    expect((pet.properties as Json).petDetailsId).toEqual({});
    expect(pet.required).toEqual(['name', 'photoUrls']);
    // With the null $ref repaired, the $id-based reference is what remains left unchecked.
    const document = load('swagger-petstore-v3.1.json');
    delete (resolvePointer(document, '/components/schemas/Pet/properties') as Json).petDetails;
    const again = importOpenApi(document, 'http-webhook');
    expect(keys(again)).toEqual(['POST newPet:message:default']);
    expect(again.operations[0].unchecked).toEqual([{ ...petDetailsId, schemaPointer: '/$defs/Pet/properties/petDetailsId' }]);
    expect(again.skipped).toEqual([petDetailsId]);
  });
});

describe('importOpenApi: recursive schemas', () => {
  const cycleMembers = (file: string) =>
    new Set(
      entry(file)
        .cycles.flat()
        .map((ref) => ref.replace('#/components/schemas/', '')),
    );

  it('keycloak: recursive groups and policies are stored once in $defs and reference themselves', () => {
    const result = importOpenApi(load('keycloak-admin-21.1.2-v3.0.json'), 'http-api');
    const group = result.operations.find((operation) => Object.hasOwn((operation.schema.$defs ?? {}) as object, 'GroupRepresentation'));
    expect(group).toBeDefined();
    const defs = (group as ImportedOperation).schema.$defs as Record<string, { properties: Json }>;
    expect(defs.GroupRepresentation.properties.subGroups).toEqual({ type: 'array', items: { $ref: '#/$defs/GroupRepresentation' } });
    const policy = result.operations.find((operation) => Object.hasOwn((operation.schema.$defs ?? {}) as object, 'PolicyRepresentation'));
    const policyDefs = (policy as ImportedOperation).schema.$defs as Record<string, unknown>;
    for (const member of cycleMembers('keycloak-admin-21.1.2-v3.0.json')) {
      if (member !== 'GroupRepresentation') expect(Object.keys(policyDefs)).toContain(member);
    }
    expect(JSON.stringify(policyDefs.ResourceRepresentation)).toContain('"#/$defs/ScopeRepresentation"');
    expect(JSON.stringify(policyDefs.ScopeRepresentation)).toContain('"#/$defs/PolicyRepresentation"');
  });

  it('qdrant: import terminates; "Filter or null" is inlined where used, and the recursion is cut at Condition, whose anyOf is left unchecked', () => {
    const result = importOpenApi(load('qdrant-v3.0.json'), 'http-api');
    const members = cycleMembers('qdrant-v3.0.json');
    const condition = unchecked('/components/schemas/Condition/anyOf', '/$defs/Condition', 'composition keyword anyOf');
    // Of the recursive groups only Condition is stored in $defs (reached by a `$ref` of an inlined
    // MinShould), stored open and noted; Filter and MinShould are inlined, the others are in no $defs.
    const withCondition: string[] = [];
    for (const operation of result.operations) {
      const defs = (operation.schema.$defs ?? {}) as Json;
      expect(
        Object.keys(defs)
          .filter((name) => members.has(name))
          .filter((name) => name !== 'Condition'),
      ).toEqual([]);
      if (!Object.hasOwn(defs, 'Condition')) continue;
      withCondition.push(operation.operationKey);
      expect(defs.Condition).toEqual({});
      expect(operation.unchecked).toContainEqual(condition);
    }
    expect(withCondition).toEqual([
      'POST /collections/{collection_name}/facet:request:default',
      'POST /collections/{collection_name}/points/count:request:default',
      'POST /collections/{collection_name}/points/payload/delete:request:default',
      'POST /collections/{collection_name}/points/payload:request:default',
      'POST /collections/{collection_name}/points/query/batch:request:default',
      'POST /collections/{collection_name}/points/query/groups:request:default',
      'POST /collections/{collection_name}/points/query:request:default',
      'POST /collections/{collection_name}/points/scroll:request:default',
      'POST /collections/{collection_name}/points/search/matrix/offsets:request:default',
      'POST /collections/{collection_name}/points/search/matrix/pairs:request:default',
      'POST /collections/{collection_name}/points/vectors/delete:request:default',
      'PUT /collections/{collection_name}/points/payload:request:default',
      'PUT /collections/{collection_name}/points/vectors:request:default',
    ]);
    // Filter is used as `anyOf: [{$ref: Filter}, {nullable: true}]`, the OpenAPI 3.0 "Filter or
    // null": read as Filter with null added, so none of these lists is left unchecked any more.
    const document = load('qdrant-v3.0.json');
    const filterOrNull = [
      'CountRequest/properties/filter',
      'DeletePayload/properties/filter',
      'DeleteVectors/properties/filter',
      'FacetRequest/properties/filter',
      'QueryGroupsRequest/properties/filter',
      'QueryRequest/properties/filter',
      'ScrollRequest/properties/filter',
      'SearchMatrixRequest/properties/filter',
      'SetPayload/properties/filter',
      'UpdateVectors/properties/update_filter',
    ].map((at) => `/components/schemas/${at}/anyOf`);
    for (const pointer of filterOrNull)
      expect(resolvePointer(document, pointer)).toEqual([{ $ref: '#/components/schemas/Filter' }, { nullable: true }]);
    const skippedPointers = new Set(result.skipped.map((item) => item.pointer));
    for (const pointer of filterOrNull) expect(skippedPointers.has(pointer), pointer).toBe(false);
    // What is left unchecked and mentions Filter is Condition's own anyOf of several alternatives.
    const usesFilter = result.skipped.filter((item) =>
      JSON.stringify(resolvePointer(document, item.pointer) ?? null).includes('"#/components/schemas/Filter"'),
    );
    expect(usesFilter).toEqual([{ pointer: '/components/schemas/Condition/anyOf', reason: 'composition keyword anyOf' }]);
    // One use in full: Filter's must/must_not/should (Condition, an array of them, or null) stay
    // unchecked in each inlined copy; its "MinShould or null" is inlined too.
    const count = byKey(result, 'POST /collections/{collection_name}/points/count:request:default');
    const open = (name: string) =>
      unchecked(
        `/components/schemas/Filter/properties/${name}/anyOf`,
        `/$defs/CountRequest/properties/filter/properties/${name}`,
        'composition keyword anyOf',
      );
    expect(count.schema).toEqual({
      $ref: '#/$defs/CountRequest',
      $defs: {
        Condition: {},
        CountRequest: {
          type: 'object',
          properties: {
            exact: { type: 'boolean' },
            filter: {
              type: ['null', 'object'],
              properties: {
                min_should: {
                  type: ['null', 'object'],
                  required: ['conditions', 'min_count'],
                  properties: { conditions: { type: 'array', items: { $ref: '#/$defs/Condition' } }, min_count: { type: 'integer' } },
                },
                must: {},
                must_not: {},
                should: {},
              },
              additionalProperties: false,
            },
            shard_key: {},
          },
        },
      },
    });
    expect(count.unchecked).toEqual([
      condition,
      open('must'),
      open('must_not'),
      open('should'),
      unchecked('/components/schemas/ShardKeySelector/anyOf', '/$defs/CountRequest/properties/shard_key', 'composition keyword anyOf'),
    ]);
  });

  it('discord: import terminates; the recursive ErrorDetails needs oneOf, so it is stored open and noted in each operation', () => {
    const result = importOpenApi(load('discord-v3.1.json'), 'http-api');
    const users = result.operations.filter((operation) => Object.hasOwn((operation.schema.$defs ?? {}) as object, 'ErrorDetails'));
    expect(users.length).toBe(242);
    for (const operation of users) {
      expect((operation.schema.$defs as Json).ErrorDetails).toEqual({});
      expect(operation.unchecked).toContainEqual({
        pointer: '/components/schemas/ErrorDetails/oneOf',
        schemaPointer: '/$defs/ErrorDetails',
        reason: 'composition keyword oneOf',
      });
    }
  });

  it('self, mutual and additionalProperties recursion terminate with one definition each', () => {
    const document = openapi(
      '3.0.3',
      {
        '/trees': { get: { responses: { 200: json({ $ref: '#/components/schemas/Tree' }) } } },
        '/a': { post: { requestBody: json({ $ref: '#/components/schemas/A' }), responses: { 204: { description: 'none' } } } },
        '/maps': { get: { responses: { 200: json({ type: 'object', additionalProperties: { $ref: '#/components/schemas/Map' } }) } } },
      },
      {
        Tree: { type: 'object', properties: { children: { type: 'array', items: { $ref: '#/components/schemas/Tree' } } } },
        A: { type: 'object', properties: { b: { $ref: '#/components/schemas/B' } } },
        B: { type: 'object', properties: { a: { $ref: '#/components/schemas/A' } } },
        Map: { type: 'object', additionalProperties: { $ref: '#/components/schemas/Map' } },
      },
    );
    const result = importOpenApi(document, 'http-api');
    expect(result.skipped).toEqual([]);
    expect(keys(result)).toEqual(['GET /maps:response:200', 'GET /trees:response:200', 'POST /a:request:default', 'POST /a:response:204']);
    expect(byKey(result, 'GET /trees:response:200').schema).toEqual({
      $ref: '#/$defs/Tree',
      $defs: { Tree: { type: 'object', properties: { children: { type: 'array', items: { $ref: '#/$defs/Tree' } } } } },
    });
    expect(byKey(result, 'POST /a:request:default').schema).toEqual({
      $ref: '#/$defs/A',
      $defs: {
        A: { type: 'object', properties: { b: { $ref: '#/$defs/B' } } },
        B: { type: 'object', properties: { a: { $ref: '#/$defs/A' } } },
      },
    });
    expect(byKey(result, 'GET /maps:response:200').schema).toEqual({
      type: 'object',
      additionalProperties: { $ref: '#/$defs/Map' },
      $defs: { Map: { type: 'object', additionalProperties: { $ref: '#/$defs/Map' } } },
    });
    expect(byKey(result, 'POST /a:response:204')).toMatchObject({ schema: {}, unchecked: [] });
    expectExactAccounting(document, 'paths', result);
  });

  it('a reference cycle without any schema is stored as it is and left unchecked at every reference of the loop', () => {
    const document = openapi(
      '3.1.0',
      {
        '/loop': { get: { responses: { 200: json({ $ref: '#/components/schemas/P' }), 201: json({ type: 'string' }) } } },
      },
      { P: { $ref: '#/components/schemas/Q' }, Q: { $ref: '#/components/schemas/P' } },
    );
    const result = importOpenApi(document, 'http-api');
    expect(keys(result)).toEqual(['GET /loop:response:200', 'GET /loop:response:201']);
    const loop = byKey(result, 'GET /loop:response:200');
    expect(loop.schema).toEqual({ $ref: '#/$defs/P', $defs: { P: { $ref: '#/$defs/Q' }, Q: { $ref: '#/$defs/P' } } });
    const reason = 'reference cycle without a schema';
    expect(loop.unchecked).toEqual([
      { pointer: '/paths/~1loop/get/responses/200/content/application~1json/schema/$ref', schemaPointer: '', reason },
      { pointer: '/components/schemas/P/$ref', schemaPointer: '/$defs/P', reason },
      { pointer: '/components/schemas/Q/$ref', schemaPointer: '/$defs/Q', reason },
    ]);
    expect(result.skipped).toEqual(asSkipped(loop.unchecked));
    expectExactAccounting(document, 'paths', result);
  });
});

function openapi(version: string, paths: Json, schemas: Json = {}, extra: Json = {}): Json {
  return { openapi: version, info: { title: 't', version: '1' }, paths, components: { schemas }, ...extra };
}

function json(schema: unknown, mediaType = 'application/json') {
  return { description: 'payload', content: { [mediaType]: { schema } } };
}

/** The source pointer of the probed schema. */
const AT = '/paths/~1probe/get/responses/200/content/application~1json/schema';
const unchecked = (pointer: string, schemaPointer: string, reason: string): UncheckedSubschema => ({ pointer, schemaPointer, reason });
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/** Imports one inline response schema; returns its stored schema and unchecked entries. */
function imported(schema: unknown, version = '3.0.3', schemas: Json = {}): { schema: Json; unchecked: UncheckedSubschema[] } {
  const document = openapi(version, { '/probe': { get: { responses: { 200: json(schema), 299: json({ type: 'string' }) } } } }, schemas);
  const result = importOpenApi(document, 'http-api');
  expect(keys(result)).toEqual(['GET /probe:response:200', 'GET /probe:response:299']);
  const operation = byKey(result, 'GET /probe:response:200');
  for (const item of result.operations) expectOperationInvariants(item);
  expectExactAccounting(document, 'paths', result);
  expect(byKey(result, 'GET /probe:response:299').unchecked).toEqual([]);
  expect(result.skipped).toEqual(asSkipped(operation.unchecked));
  return { schema: operation.schema, unchecked: operation.unchecked };
}

/** The stored schema of a schema the subset fully expresses (nothing left unchecked). */
function storedFor(schema: unknown, version = '3.0.3', schemas: Json = {}): Json {
  const result = imported(schema, version, schemas);
  expect(result.unchecked).toEqual([]);
  return result.schema;
}

describe('importOpenApi: the schema subset', () => {
  it('drops annotations and value constraints, keeps the subset', () => {
    expect(
      storedFor({
        type: 'object',
        title: 'Order',
        description: 'd',
        example: { id: 1 },
        examples: [1],
        default: {},
        deprecated: true,
        readOnly: true,
        writeOnly: false,
        xml: { name: 'o' },
        externalDocs: { url: 'x' },
        'x-internal': true,
        discriminator: { propertyName: 'kind' },
        minProperties: 1,
        maxProperties: 9,
        $comment: 'c',
        required: ['id', 'amount', 'id'],
        additionalProperties: false,
        properties: {
          id: { type: 'string', format: 'uuid', pattern: '^[a-f0-9-]+$', minLength: 36, maxLength: 36 },
          amount: { type: 'number', minimum: 0, maximum: 10, exclusiveMinimum: true, multipleOf: 0.01 },
          tags: {
            type: 'array',
            items: { type: 'string', enum: ['a', 'b'] },
            minItems: 1,
            maxItems: 3,
            uniqueItems: true,
            contains: { type: 'string' },
          },
          meta: {
            type: 'object',
            additionalProperties: { type: 'integer' },
            propertyNames: { pattern: '^x' },
            dependentRequired: { a: ['b'] },
          },
          $ref: { type: 'string' },
          allOf: { type: 'boolean' },
        },
      }),
    ).toEqual({
      type: 'object',
      required: ['amount', 'id'],
      additionalProperties: false,
      properties: {
        id: { type: 'string' },
        amount: { type: 'number' },
        tags: { type: 'array', items: { type: 'string', enum: ['a', 'b'] } },
        meta: { type: 'object', additionalProperties: { type: 'integer' } },
        $ref: { type: 'string' },
        allOf: { type: 'boolean' },
      },
    });
  });

  it('translates nullable, const and type arrays', () => {
    expect(storedFor({ type: 'string', nullable: true })).toEqual({ type: ['null', 'string'] });
    expect(storedFor({ type: 'string', enum: ['a'], nullable: true })).toEqual({ type: ['null', 'string'], enum: ['a', null] });
    expect(storedFor({ nullable: false, type: 'integer' })).toEqual({ type: 'integer' });
    expect(storedFor({ type: ['string', 'null', 'string'] }, '3.1.0')).toEqual({ type: ['null', 'string'] });
    expect(storedFor({ type: ['integer'] }, '3.1.0')).toEqual({ type: 'integer' });
    expect(storedFor({ const: 'card' }, '3.1.0')).toEqual({ enum: ['card'] });
    expect(storedFor({ const: 'card', enum: ['card', 'cash'] }, '3.1.0')).toEqual({ enum: ['card', 'cash'] });
    expect(storedFor({ type: 'object', properties: { a: true, b: false } }, '3.1.0')).toEqual({
      type: 'object',
      properties: { a: {}, b: false },
    });
    expect(storedFor(true, '3.1.0')).toEqual({});
    expect(storedFor(false, '3.1.0')).toEqual({ enum: [] });
    expect(storedFor({ required: [] })).toEqual({});
  });

  it('leaves unchecked what lies outside the subset: the keyword is dropped, the sub-schema that held it is noted', () => {
    for (const keyword of ['oneOf', 'anyOf']) {
      expect(imported({ type: 'object', properties: { a: { [keyword]: [{ type: 'string' }, { type: 'integer' }] } } })).toEqual({
        schema: { type: 'object', properties: { a: {} } },
        unchecked: [unchecked(`${AT}/properties/a/${keyword}`, '/properties/a', `composition keyword ${keyword}`)],
      });
    }
    expect(imported({ type: 'string', not: { enum: ['x'] } })).toEqual({
      schema: { type: 'string' },
      unchecked: [unchecked(`${AT}/not`, '', 'composition keyword not')],
    });
    const whole = (schema: unknown, at: string, reason: string, version = '3.0.3') =>
      expect(imported(schema, version)).toEqual({ schema: {}, unchecked: [unchecked(at, '', reason)] });
    whole({ $ref: 'https://example.com/pet.json' }, `${AT}/$ref`, 'remote reference https://example.com/pet.json');
    whole({ $ref: 'pet.yaml#/Pet' }, `${AT}/$ref`, 'remote reference pet.yaml#/Pet');
    whole({ $ref: '#pet' }, `${AT}/$ref`, 'unsupported reference #pet (only JSON-pointer fragments)', '3.1.0');
    whole({ $ref: '#/components/schemas/Missing' }, `${AT}/$ref`, 'unresolved reference #/components/schemas/Missing');
    whole({ $ref: '#' }, `${AT}/$ref`, 'invalid reference # (the document root is not a schema)');
    whole({ $ref: '#/components/schemas/%' }, `${AT}/$ref`, 'invalid reference #/components/schemas/%');
    for (const keyword of [
      'patternProperties',
      'prefixItems',
      'unevaluatedProperties',
      'unevaluatedItems',
      'if',
      'dependentSchemas',
      'dependencies',
      '$dynamicRef',
      '$recursiveRef',
    ]) {
      expect(imported({ type: 'object', [keyword]: {} }, '3.1.0')).toEqual({
        schema: { type: 'object' },
        unchecked: [unchecked(`${AT}/${keyword}`, '', `unsupported keyword ${keyword}`)],
      });
    }
    expect(imported({ type: 'array', items: [{ type: 'string' }] })).toEqual({
      schema: { type: 'array' },
      unchecked: [unchecked(`${AT}/items`, '', 'unsupported keyword items (array form)')],
    });
    whole({ type: 'file' }, `${AT}/type`, 'unsupported type file');
    whole({ type: [] }, `${AT}/type`, 'invalid type', '3.1.0');
    whole({ type: ['string', 7] }, `${AT}/type`, 'invalid type', '3.1.0');
    whole({ required: true }, `${AT}/required`, 'invalid required (not an array of strings)');
    whole({ properties: [] }, `${AT}/properties`, 'invalid properties (not an object)');
    whole({ enum: 'a' }, `${AT}/enum`, 'invalid enum (not an array)');
    expect(imported({ properties: { a: 'string' } })).toEqual({
      schema: { properties: { a: {} } },
      unchecked: [unchecked(`${AT}/properties/a`, '/properties/a', 'invalid schema (not an object or boolean)')],
    });
    // A keyword deep inside a referenced component is named at its own location, and noted
    // where the component is stored.
    expect(
      imported({ $ref: '#/components/schemas/Outer' }, '3.0.3', {
        Outer: { type: 'object', properties: { inner: { $ref: '#/components/schemas/Inner' } } },
        Inner: { type: 'object', properties: { v: { oneOf: [{ type: 'string' }, { type: 'integer' }] } } },
      }),
    ).toEqual({
      schema: {
        $ref: '#/$defs/Outer',
        $defs: {
          Inner: { type: 'object', properties: { v: {} } },
          Outer: { type: 'object', properties: { inner: { $ref: '#/$defs/Inner' } } },
        },
      },
      unchecked: [unchecked('/components/schemas/Inner/properties/v/oneOf', '/$defs/Inner/properties/v', 'composition keyword oneOf')],
    });
  });

  it('gives the same unchecked list whatever the key order of the document', () => {
    const a = imported({ type: 'object', properties: { b: { anyOf: [] }, a: { allOf: [] } } });
    const b = imported({ properties: { a: { allOf: [] }, b: { anyOf: [] } }, type: 'object' });
    expect(a).toEqual(b);
    expect(a).toEqual({
      schema: { type: 'object', properties: { a: {}, b: {} } },
      unchecked: [
        unchecked(`${AT}/properties/a/allOf`, '/properties/a', 'invalid allOf (not a non-empty array)'),
        unchecked(`${AT}/properties/b/anyOf`, '/properties/b', 'composition keyword anyOf'),
      ],
    });
  });

  it('ignores $ref siblings in 3.0 and applies them in 3.1', () => {
    const schemas = { Pet: { type: 'object', properties: { id: { type: 'integer' } } } };
    const sibling = { $ref: '#/components/schemas/Pet', required: ['id'], description: 'annotation', nullable: true };
    expect(storedFor(sibling, '3.0.3', schemas)).toEqual({ $ref: '#/$defs/Pet', $defs: { Pet: schemas.Pet } });
    expect(storedFor(sibling, '3.1.0', schemas)).toEqual({ $ref: '#/$defs/Pet', required: ['id'], $defs: { Pet: schemas.Pet } });
    expect(storedFor({ $ref: '#/components/schemas/Pet', allOf: [] }, '3.0.3', schemas)).toEqual({
      $ref: '#/$defs/Pet',
      $defs: { Pet: schemas.Pet },
    });
    expect(imported({ $ref: '#/components/schemas/Pet', allOf: [] }, '3.1.0', schemas)).toEqual({
      schema: { $ref: '#/$defs/Pet', $defs: { Pet: schemas.Pet } },
      unchecked: [unchecked(`${AT}/allOf`, '', 'invalid allOf (not a non-empty array)')],
    });
    // 3.1: a reference beside allOf is one more member of the conjunction, and is inlined (so Pet
    // is not carried in $defs: no `$ref` of the stored schema names it).
    expect(storedFor({ $ref: '#/components/schemas/Pet', allOf: [{ required: ['id'] }] }, '3.1.0', schemas)).toEqual({
      type: 'object',
      required: ['id'],
      properties: { id: { type: 'integer' } },
    });
  });

  it('names definitions after their pointer: escaped, percent-decoded, collision-free', () => {
    // Parsed from text, as a request body is, so `__proto__` is an own member.
    const document = JSON.parse(
      JSON.stringify(
        openapi(
          '3.0.3',
          {
            '/n': {
              get: {
                responses: {
                  200: json({
                    type: 'object',
                    properties: {
                      a: { $ref: '#/components/schemas/a~1b~0c' },
                      p: { $ref: '#/components/schemas/Plain' },
                      p2: { $ref: '#/components/schemas/%50lain' },
                      s: { $ref: '#/components/schemas/with%20space' },
                      proto: { $ref: '#/components/schemas/__proto__' },
                      inline: { $ref: '#/paths/~1n/get/responses/201/content/application~1json/schema' },
                    },
                  }),
                  201: json({ type: 'number' }),
                },
              },
            },
          },
          { 'a/b~c': { type: 'string' }, Plain: { type: 'integer' }, 'with space': { type: 'boolean' }, PROTO: { type: 'null' } },
        ),
      ).replace('"PROTO"', '"__proto__"'),
    );
    const result = importOpenApi(document, 'http-api');
    const schema = byKey(result, 'GET /n:response:200').schema as { properties: Json; $defs: Json };
    expectOperationInvariants(byKey(result, 'GET /n:response:200'));
    expect(schema.properties).toEqual({
      a: { $ref: '#/$defs/~1components~1schemas~1a~01b~00c' },
      p: { $ref: '#/$defs/Plain' },
      p2: { $ref: '#/$defs/Plain' },
      s: { $ref: '#/$defs/~1components~1schemas~1with%20space' },
      proto: { $ref: '#/$defs/__proto__' },
      inline: { $ref: '#/$defs/~1paths~1~01n~1get~1responses~1201~1content~1application~01json~1schema' },
    });
    expect(Object.keys(schema.$defs).sort()).toEqual([
      '/components/schemas/a~1b~0c',
      '/components/schemas/with space',
      '/paths/~1n/get/responses/201/content/application~1json/schema',
      'Plain',
      '__proto__',
    ]);
    expect(Object.getPrototypeOf(schema.$defs)).toBe(Object.prototype);
    // biome-ignore lint/suspicious/noProto: reads the own member named `__proto__` the importer stored, not the accessor.
    expect(schema.$defs.__proto__).toEqual({ type: 'null' });
  });
});

describe('importOpenApi: allOf is flattened (00-decisions §7)', () => {
  it('merges properties, unites required and intersects types (number ∧ integer is integer)', () => {
    expect(
      storedFor({
        allOf: [
          { type: 'object', required: ['a'], properties: { a: { type: 'string' }, n: { type: 'number' } } },
          { type: 'object', required: ['b', 'a'], properties: { b: { type: 'boolean' }, n: { type: 'integer' } } },
        ],
      }),
    ).toEqual({
      type: 'object',
      required: ['a', 'b'],
      properties: { a: { type: 'string' }, b: { type: 'boolean' }, n: { type: 'integer' } },
    });
    expect(storedFor({ allOf: [{ type: 'number' }, { type: ['integer', 'string'] }] }, '3.1.0')).toEqual({ type: 'integer' });
    // (integer or number) ∧ number: both stay, which is number.
    expect(storedFor({ allOf: [{ type: ['integer', 'number'] }, { type: 'number' }] }, '3.1.0')).toEqual({ type: ['integer', 'number'] });
    expect(storedFor({ allOf: [{ type: 'integer' }, { type: ['number', 'string'] }] }, '3.1.0')).toEqual({ type: 'integer' });
    expect(storedFor({ allOf: [{ type: ['string', 'null'] }, { type: ['null', 'integer', 'string'] }] }, '3.1.0')).toEqual({
      type: ['null', 'string'],
    });
    // The keywords beside allOf are one more member.
    expect(storedFor({ type: 'object', required: ['x'], allOf: [{ properties: { x: { type: 'string' } } }, { required: ['y'] }] })).toEqual(
      {
        type: 'object',
        required: ['x', 'y'],
        properties: { x: { type: 'string' } },
      },
    );
    // Nested objects and items are merged too.
    expect(
      storedFor({
        allOf: [
          { type: 'object', properties: { o: { type: 'object', properties: { p: { type: 'number' } } } } },
          { properties: { o: { required: ['p'], properties: { p: { type: 'integer' }, q: { type: 'string' } } } } },
        ],
      }),
    ).toEqual({
      type: 'object',
      properties: { o: { type: 'object', required: ['p'], properties: { p: { type: 'integer' }, q: { type: 'string' } } } },
    });
    expect(storedFor({ allOf: [{ type: 'array', items: { type: 'number' } }, { items: { type: 'integer', enum: [1, 2] } }] })).toEqual({
      type: 'array',
      items: { type: 'integer', enum: [1, 2] },
    });
  });

  it('intersects enums, keeping the order of the first', () => {
    expect(storedFor({ allOf: [{ enum: ['a', 'b', 'c'] }, { enum: ['c', 'b', 'z'] }] })).toEqual({ enum: ['b', 'c'] });
    expect(storedFor({ allOf: [{ enum: [{ k: 1, j: 2 }, 1] }, { enum: [{ j: 2, k: 1 }] }] })).toEqual({ enum: [{ k: 1, j: 2 }] });
    expect(storedFor({ allOf: [{ type: 'string', nullable: true }, { enum: ['a', null] }] })).toEqual({
      type: ['null', 'string'],
      enum: ['a', null],
    });
  });

  it('drops the names a member with additionalProperties: false does not declare, and merges additionalProperties schemas into names', () => {
    expect(
      storedFor({
        allOf: [
          { type: 'object', additionalProperties: false, properties: { a: { type: 'string' } } },
          { properties: { b: { type: 'string' }, a: { enum: ['x'] } } },
        ],
      }),
    ).toEqual({ type: 'object', properties: { a: { type: 'string', enum: ['x'] } }, additionalProperties: false });
    expect(
      storedFor({
        allOf: [
          { type: 'object', additionalProperties: { type: 'string' }, properties: { a: {} } },
          { properties: { b: { enum: ['x', 'y'] } } },
        ],
      }),
    ).toEqual({ type: 'object', properties: { a: {}, b: { type: 'string', enum: ['x', 'y'] } }, additionalProperties: { type: 'string' } });
    expect(
      storedFor({
        allOf: [
          { type: 'object', additionalProperties: false, properties: { a: {} } },
          { additionalProperties: { type: 'string' }, properties: { b: {} } },
        ],
      }),
    ).toEqual({ type: 'object', properties: { a: { type: 'string' } }, additionalProperties: false });
  });

  it('inlines $ref members from their definitions; a lone reference stays a reference', () => {
    const schemas = {
      Base: { type: 'object', required: ['id'], properties: { id: { type: 'string' }, child: ref('Child') } },
      Child: { type: 'string' },
    };
    // Base is inlined (and, referenced by no `$ref` of the stored schema, not carried in $defs);
    // what Base references stays a reference, so Child is.
    expect(
      storedFor({ allOf: [ref('Base'), { properties: { extra: { type: 'integer' } }, required: ['extra'] }] }, '3.0.3', schemas),
    ).toEqual({
      type: 'object',
      required: ['extra', 'id'],
      properties: { child: { $ref: '#/$defs/Child' }, extra: { type: 'integer' }, id: { type: 'string' } },
      $defs: { Child: { type: 'string' } },
    });
    expect(storedFor({ allOf: [ref('Child')], description: 'd' }, '3.0.3', schemas)).toEqual({
      $ref: '#/$defs/Child',
      $defs: { Child: { type: 'string' } },
    });
    expect(storedFor({ allOf: [{}, ref('Child'), { description: 'only an annotation' }] }, '3.1.0', schemas)).toEqual({
      $ref: '#/$defs/Child',
      $defs: { Child: { type: 'string' } },
    });
    expect(storedFor({ allOf: [{ type: 'string' }] })).toEqual({ type: 'string' });
    // A false member makes the conjunction false.
    expect(storedFor({ allOf: [{ type: 'object' }, false] }, '3.1.0')).toEqual({ enum: [] });
  });

  it('adds null to the flattened result of an OpenAPI 3.0 allOf beside nullable: true', () => {
    const schemas = { Base: { type: 'object', properties: { a: { type: 'string' } } } };
    // Base is inlined, not referenced: it is not carried in $defs.
    expect(storedFor({ allOf: [ref('Base')], nullable: true }, '3.0.3', schemas)).toEqual({
      type: ['null', 'object'],
      properties: { a: { type: 'string' } },
    });
    expect(storedFor({ allOf: [{ enum: ['a', 'b'] }], nullable: true })).toEqual({ enum: ['a', 'b', null] });
    expect(
      storedFor({ type: 'object', properties: { p: { allOf: [ref('Base')], nullable: true, description: 'd' } } }, '3.0.3', schemas),
    ).toEqual({
      type: 'object',
      properties: { p: { type: ['null', 'object'], properties: { a: { type: 'string' } } } },
    });
  });

  it('keeps a recursive allOf member a reference, or leaves the recursion unchecked', () => {
    // A self-reference through allOf cannot be inlined: it stays a reference (with the other members beside it).
    expect(storedFor(ref('Node'), '3.0.3', { Node: { type: 'object', properties: { next: { allOf: [ref('Node')] } } } })).toEqual({
      $ref: '#/$defs/Node',
      $defs: { Node: { type: 'object', properties: { next: { $ref: '#/$defs/Node' } } } },
    });
    expect(
      storedFor(ref('Node'), '3.0.3', {
        Node: { type: 'object', properties: { next: { allOf: [ref('Node'), { description: 'x', required: ['v'] }] } } },
      }),
    ).toEqual({
      $ref: '#/$defs/Node',
      $defs: { Node: { type: 'object', properties: { next: { $ref: '#/$defs/Node', required: ['v'] } } } },
    });
    expect(storedFor(ref('Node'), '3.0.3', { Node: { allOf: [{ type: 'object' }, { properties: { next: ref('Node') } }] } })).toEqual({
      $ref: '#/$defs/Node',
      $defs: { Node: { type: 'object', properties: { next: { $ref: '#/$defs/Node' } } } },
    });
    // Two references that are both being built: no subset schema expresses their conjunction.
    // B, only inlined into A, is not carried in $defs (nor is its unchecked entry).
    expect(
      imported(ref('A'), '3.0.3', {
        A: { allOf: [ref('B'), { type: 'object' }] },
        B: { type: 'object', properties: { both: { allOf: [ref('A'), ref('B')] } } },
      }),
    ).toEqual({
      schema: { $ref: '#/$defs/A', $defs: { A: { type: 'object', properties: { both: {} } } } },
      unchecked: [unchecked('/components/schemas/B/properties/both/allOf', '/$defs/A/properties/both', 'allOf of recursive references')],
    });
    // Merging X = P ∧ Q reaches P ∧ Q again at /properties/n: left unchecked there. P and Q are
    // only inlined, so $defs holds X alone.
    expect(
      imported(ref('X'), '3.0.3', {
        X: { allOf: [ref('P'), ref('Q')] },
        P: { type: 'object', properties: { n: ref('P') } },
        Q: { type: 'object', properties: { n: ref('Q') } },
      }),
    ).toEqual({
      schema: { $ref: '#/$defs/X', $defs: { X: { type: 'object', properties: { n: {} } } } },
      unchecked: [unchecked('/components/schemas/X/allOf', '/$defs/X/properties/n', 'recursive allOf at /properties/n')],
    });
  });

  it('leaves a conflict unchecked: the merged sub-schema is stored open, noted at the allOf', () => {
    expect(imported({ type: 'object', properties: { a: { allOf: [{ type: 'string' }, { type: 'integer' }] } } })).toEqual({
      schema: { type: 'object', properties: { a: {} } },
      unchecked: [unchecked(`${AT}/properties/a/allOf`, '/properties/a', 'allOf members allow no common type (string, integer)')],
    });
    expect(imported({ allOf: [{ type: ['string', 'null'] }, { type: 'boolean' }] }, '3.1.0')).toEqual({
      schema: {},
      unchecked: [unchecked(`${AT}/allOf`, '', 'allOf members allow no common type (null|string, boolean)')],
    });
    expect(imported({ allOf: [{ enum: ['a'] }, { enum: ['b'] }] })).toEqual({
      schema: {},
      unchecked: [unchecked(`${AT}/allOf`, '', 'allOf members allow no common enum value')],
    });
    // A conflict below the top of the merge is named by its path from the allOf.
    expect(
      imported({ allOf: [{ type: 'object', properties: { a: { type: 'string' } } }, { properties: { a: { type: 'integer' } } }] }),
    ).toEqual({
      schema: { type: 'object', properties: { a: {} } },
      unchecked: [unchecked(`${AT}/allOf`, '/properties/a', 'allOf members allow no common type (string, integer) at /properties/a')],
    });
    // What a member leaves unchecked stays noted on the merged schema.
    expect(
      imported({
        allOf: [{ type: 'object', properties: { a: { type: 'string' } } }, { oneOf: [{ required: ['a'] }, { required: ['b'] }] }],
      }),
    ).toEqual({
      schema: { type: 'object', properties: { a: { type: 'string' } } },
      unchecked: [unchecked(`${AT}/allOf/1/oneOf`, '', 'composition keyword oneOf')],
    });
  });
});

describe('importOpenApi: oneOf/anyOf idioms (lenient mode)', () => {
  const pet = { type: 'object', properties: { id: { type: 'integer' } } };

  it('reads "S or null" (3.1 type null, enum [null]) as S with null added', () => {
    expect(storedFor({ oneOf: [{ type: 'string' }, { type: 'null' }] }, '3.1.0')).toEqual({ type: ['null', 'string'] });
    expect(
      storedFor({ anyOf: [{ type: 'null', description: 'none' }, { type: 'integer', minimum: 1 }, { enum: [null] }] }, '3.1.0'),
    ).toEqual({ type: ['integer', 'null'] });
    // Pet is inlined (to add null to it), not referenced: it is not carried in $defs.
    expect(storedFor({ anyOf: [ref('Pet'), { type: 'null' }] }, '3.1.0', { Pet: pet })).toEqual({
      type: ['null', 'object'],
      properties: { id: { type: 'integer' } },
    });
    expect(
      storedFor(
        {
          anyOf: [
            { type: 'string', enum: ['a'] },
            { enum: [null], description: 'none' },
          ],
        },
        '3.1.0',
      ),
    ).toEqual({ type: ['null', 'string'], enum: ['a', null] });
    expect(storedFor({ oneOf: [{ enum: ['a', 'b'] }, { type: 'null' }] }, '3.1.0')).toEqual({ enum: ['a', 'b', null] });
    expect(storedFor({ type: 'array', items: { anyOf: [{ type: 'integer' }, { type: 'null' }] } }, '3.1.0')).toEqual({
      type: 'array',
      items: { type: ['integer', 'null'] },
    });
    // The keywords beside it still apply: an object is never null.
    expect(
      storedFor({ type: 'object', properties: { a: { type: 'integer' } }, oneOf: [ref('P'), { type: 'null' }] }, '3.1.0', {
        P: { type: 'object', properties: { b: { type: 'string' } } },
      }),
    ).toEqual({
      type: 'object',
      properties: { a: { type: 'integer' }, b: { type: 'string' } },
    });
  });

  it('reads the OpenAPI 3.0 style (one alternative and nullable: true) the same way', () => {
    expect(storedFor({ oneOf: [ref('Pet')], nullable: true }, '3.0.3', { Pet: pet })).toEqual({
      type: ['null', 'object'],
      properties: { id: { type: 'integer' } },
    });
    expect(storedFor({ anyOf: [{ type: 'string' }], nullable: true })).toEqual({ type: ['null', 'string'] });
    // A single alternative without null is just that schema.
    expect(storedFor({ oneOf: [{ type: 'string' }] })).toEqual({ type: 'string' });
    expect(storedFor({ anyOf: [ref('Pet')] }, '3.0.3', { Pet: pet })).toEqual({ $ref: '#/$defs/Pet', $defs: { Pet: pet } });
  });

  it('reads an alternative that is only nullable: true as the null alternative (OpenAPI 3.0 "X or null", as Qdrant writes it)', () => {
    // Pet is inlined to add null to it, and not carried in $defs.
    expect(storedFor({ anyOf: [ref('Pet'), { nullable: true }] }, '3.0.3', { Pet: pet })).toEqual({
      type: ['null', 'object'],
      properties: { id: { type: 'integer' } },
    });
    // In any order, with annotations, beside other null alternatives, and below the top.
    expect(storedFor({ oneOf: [{ nullable: true, description: 'none', title: 'n' }, { type: 'string' }] })).toEqual({
      type: ['null', 'string'],
    });
    expect(storedFor({ anyOf: [{ nullable: true }, { type: 'integer', enum: [1, 2] }, { type: 'null' }] }, '3.1.0')).toEqual({
      type: ['integer', 'null'],
      enum: [1, 2, null],
    });
    expect(
      storedFor({ type: 'object', properties: { p: { anyOf: [ref('Pet'), { nullable: true }], description: 'd' } } }, '3.0.3', {
        Pet: pet,
      }),
    ).toEqual({
      type: 'object',
      properties: { p: { type: ['null', 'object'], properties: { id: { type: 'integer' } } } },
    });
    // `nullable: true` beside a type is that type or null, not null alone: the list stays unchecked.
    expect(imported({ anyOf: [ref('Pet'), { nullable: true, type: 'string' }] }, '3.0.3', { Pet: pet })).toEqual({
      schema: {},
      unchecked: [unchecked(`${AT}/anyOf`, '', 'composition keyword anyOf')],
    });
    // `nullable: false` alone allows anything: not a null alternative either.
    expect(imported({ anyOf: [ref('Pet'), { nullable: false }] }, '3.0.3', { Pet: pet })).toEqual({
      schema: {},
      unchecked: [unchecked(`${AT}/anyOf`, '', 'composition keyword anyOf')],
    });
    expect(imported({ oneOf: [{ type: 'string' }, { nullable: false, description: 'none' }] })).toEqual({
      schema: {},
      unchecked: [unchecked(`${AT}/oneOf`, '', 'composition keyword oneOf')],
    });
    // Two alternatives besides the null one are still outside the idiom (Qdrant's Condition, or an array of them, or null).
    expect(imported({ anyOf: [ref('Pet'), { type: 'array', items: ref('Pet') }, { nullable: true }] }, '3.0.3', { Pet: pet })).toEqual({
      schema: {},
      unchecked: [unchecked(`${AT}/anyOf`, '', 'composition keyword anyOf')],
    });
    // A recursive reference cannot have null added to it.
    expect(imported(ref('N'), '3.0.3', { N: { type: 'object', properties: { next: { anyOf: [ref('N'), { nullable: true }] } } } })).toEqual(
      {
        schema: { $ref: '#/$defs/N', $defs: { N: { type: 'object', properties: { next: {} } } } },
        unchecked: [unchecked('/components/schemas/N/properties/next/anyOf/0', '/$defs/N/properties/next', 'nullable recursive reference')],
      },
    );
  });

  it('cannot add null to a recursive reference: left unchecked', () => {
    expect(imported(ref('N'), '3.1.0', { N: { type: 'object', properties: { next: { oneOf: [ref('N'), { type: 'null' }] } } } })).toEqual({
      schema: { $ref: '#/$defs/N', $defs: { N: { type: 'object', properties: { next: {} } } } },
      unchecked: [unchecked('/components/schemas/N/properties/next/oneOf/0', '/$defs/N/properties/next', 'nullable recursive reference')],
    });
  });

  it('reads alternatives that are only const or enum values as an enum', () => {
    expect(storedFor({ oneOf: [{ const: 'a', title: 'A' }, { const: 'b', description: 'B' }, { enum: ['c', 'd'] }] }, '3.1.0')).toEqual({
      enum: ['a', 'b', 'c', 'd'],
    });
    expect(storedFor({ type: 'integer', anyOf: [{ const: 1 }, { const: 2 }] }, '3.1.0')).toEqual({ type: 'integer', enum: [1, 2] });
    expect(storedFor({ oneOf: [{ const: 1 }, { const: null }] }, '3.1.0')).toEqual({ enum: [1, null] });
    // An alternative that constrains more than its value is not such a list.
    expect(imported({ oneOf: [{ const: 'a' }, { const: 'b', type: 'string' }] }, '3.1.0')).toEqual({
      schema: {},
      unchecked: [unchecked(`${AT}/oneOf`, '', 'composition keyword oneOf')],
    });
  });

  it('leaves any other oneOf/anyOf unchecked, noted on the node that held it', () => {
    expect(imported({ oneOf: [{ type: 'string' }, { type: 'integer' }], description: 'x' })).toEqual({
      schema: {},
      unchecked: [unchecked(`${AT}/oneOf`, '', 'composition keyword oneOf')],
    });
    expect(
      imported({
        type: 'object',
        properties: {
          a: { type: 'string' },
          b: { type: 'object', properties: { c: { type: 'integer' } }, oneOf: [{ required: ['c'] }, { required: ['d'] }] },
        },
      }),
    ).toEqual({
      schema: { type: 'object', properties: { a: { type: 'string' }, b: { type: 'object', properties: { c: { type: 'integer' } } } } },
      unchecked: [unchecked(`${AT}/properties/b/oneOf`, '/properties/b', 'composition keyword oneOf')],
    });
    expect(
      imported(ref('Pet'), '3.0.3', {
        Pet: { type: 'object', properties: { a: { type: 'string' } }, oneOf: [{ type: 'object' }, { type: 'string' }] },
      }),
    ).toEqual({
      schema: { $ref: '#/$defs/Pet', $defs: { Pet: { type: 'object', properties: { a: { type: 'string' } } } } },
      unchecked: [unchecked('/components/schemas/Pet/oneOf', '/$defs/Pet', 'composition keyword oneOf')],
    });
  });
});

describe('importOpenApi: where unchecked entries are noted', () => {
  it('notes a shared definition once where it is stored, an inlined copy at each place it is copied to', () => {
    const U = { oneOf: [{ type: 'string' }, { type: 'integer' }] };
    expect(
      imported({ type: 'object', properties: { a: ref('U'), b: ref('U'), c: { type: 'array', items: ref('W') } } }, '3.0.3', {
        U,
        W: { type: 'object', properties: { u: ref('U') } },
      }),
    ).toEqual({
      schema: {
        type: 'object',
        properties: { a: { $ref: '#/$defs/U' }, b: { $ref: '#/$defs/U' }, c: { type: 'array', items: { $ref: '#/$defs/W' } } },
        $defs: { U: {}, W: { type: 'object', properties: { u: { $ref: '#/$defs/U' } } } },
      },
      unchecked: [unchecked('/components/schemas/U/oneOf', '/$defs/U', 'composition keyword oneOf')],
    });
    // W is only inlined (as "W or null"): not carried in $defs, so noted at its copies alone.
    const W = { type: 'object', properties: { k: { oneOf: [{ type: 'string' }, { type: 'integer' }] } } };
    const k = '/components/schemas/W/properties/k/oneOf';
    expect(
      imported(
        { type: 'object', properties: { a: { oneOf: [ref('W'), { type: 'null' }] }, b: { anyOf: [{ type: 'null' }, ref('W')] } } },
        '3.1.0',
        { W },
      ),
    ).toEqual({
      schema: {
        type: 'object',
        properties: { a: { type: ['null', 'object'], properties: { k: {} } }, b: { type: ['null', 'object'], properties: { k: {} } } },
      },
      unchecked: [
        unchecked(k, '/properties/a/properties/k', 'composition keyword oneOf'),
        unchecked(k, '/properties/b/properties/k', 'composition keyword oneOf'),
      ],
    });
  });

  it('leaves remote and anchored references unchecked where they are used', () => {
    expect(
      imported(
        {
          type: 'object',
          required: ['r'],
          properties: { r: { $ref: 'https://example.com/x.json' }, an: { $ref: '#anchor' }, ok: { type: 'string' } },
        },
        '3.1.0',
      ),
    ).toEqual({
      schema: { type: 'object', required: ['r'], properties: { r: {}, an: {}, ok: { type: 'string' } } },
      unchecked: [
        unchecked(`${AT}/properties/an/$ref`, '/properties/an', 'unsupported reference #anchor (only JSON-pointer fragments)'),
        unchecked(`${AT}/properties/r/$ref`, '/properties/r', 'remote reference https://example.com/x.json'),
      ],
    });
    // 3.1: the members beside a remote reference are still compared.
    expect(imported({ $ref: 'common.json#/Pet', type: 'object', required: ['id'] }, '3.1.0')).toEqual({
      schema: { type: 'object', required: ['id'] },
      unchecked: [unchecked(`${AT}/$ref`, '', 'remote reference common.json#/Pet')],
    });
  });

  it('drops items beside prefixItems (they apply only after the prefix) and if/then/else', () => {
    expect(imported({ type: 'array', prefixItems: [{ type: 'string' }], items: { type: 'integer' } }, '3.1.0')).toEqual({
      schema: { type: 'array' },
      unchecked: [unchecked(`${AT}/prefixItems`, '', 'unsupported keyword prefixItems')],
    });
    expect(imported({ type: 'object', if: {}, then: {}, else: {} }, '3.1.0')).toEqual({
      schema: { type: 'object' },
      unchecked: [
        unchecked(`${AT}/else`, '', 'unsupported keyword else'),
        unchecked(`${AT}/if`, '', 'unsupported keyword if'),
        unchecked(`${AT}/then`, '', 'unsupported keyword then'),
      ],
    });
    expect(imported({ type: 'object', patternProperties: { '^x': {} }, properties: { a: { type: 'string' } } }, '3.1.0')).toEqual({
      schema: { type: 'object', properties: { a: { type: 'string' } } },
      unchecked: [unchecked(`${AT}/patternProperties`, '', 'unsupported keyword patternProperties')],
    });
  });
});

describe('importOpenApi: payloads without a schema are unchecked operations', () => {
  it('no content, empty content, non-JSON content, JSON without a schema, malformed content', () => {
    const document = openapi('3.0.3', {
      '/p': {
        get: {
          responses: {
            200: { description: 'no content' },
            201: { description: 'empty', content: {} },
            202: { description: 'x', content: { 'text/csv': { schema: { type: 'string' } }, 'image/png': {} } },
            203: { description: 'x', content: { 'application/json': { example: { a: 1 } }, 'text/plain': {} } },
            204: { description: 'x', content: 'application/json' },
            205: { description: 'x', content: { 'application/json': [] } },
          },
        },
      },
    });
    const result = importOpenApi(document, 'http-api');
    const p = '/paths/~1p/get/responses';
    expect(result.operations.map(({ statusSelector, schema, unchecked: entries }) => [statusSelector, schema, entries])).toEqual([
      ['200', {}, []],
      ['201', {}, []],
      [
        '202',
        {},
        [
          unchecked(`${p}/202/content/image~1png`, '', 'non-JSON media type image/png'),
          unchecked(`${p}/202/content/text~1csv`, '', 'non-JSON media type text/csv'),
        ],
      ],
      ['203', {}, [unchecked(`${p}/203/content/application~1json`, '', 'no schema')]],
      ['204', {}, [unchecked(`${p}/204/content`, '', 'invalid content (not an object)')]],
      ['205', {}, [unchecked(`${p}/205/content/application~1json`, '', 'invalid media type object (not an object)')]],
    ]);
    for (const operation of result.operations) {
      expectOperationInvariants(operation);
      expect(operation.fingerprint).toBe(fingerprint({}));
    }
    expect(result.skipped).toEqual(asSkipped(result.operations.flatMap((operation) => operation.unchecked)));
    expectExactAccounting(document, 'paths', result);
  });

  it('an operation that declares no payload at all imports one unchecked payload', () => {
    const document = openapi(
      '3.1.0',
      {
        '/none': { get: { summary: 'no responses' }, delete: { responses: {} }, put: { responses: { 'x-note': {} } } },
      },
      {},
      { webhooks: { ping: { post: { summary: 'no body' } }, pong: { post: { responses: { 200: json({ type: 'object' }) } } } } },
    );
    const api = importOpenApi(document, 'http-api');
    expect(api.operations.map(({ operationKey, schema, unchecked: entries }) => [operationKey, schema, entries])).toEqual([
      ['DELETE /none:response:default', {}, [unchecked('/paths/~1none/delete', '', 'no responses declared')]],
      ['GET /none:response:default', {}, [unchecked('/paths/~1none/get', '', 'no responses declared')]],
      ['PUT /none:response:default', {}, [unchecked('/paths/~1none/put', '', 'no responses declared')]],
    ]);
    expectExactAccounting(document, 'paths', api);
    const webhooks = importOpenApi(document, 'http-webhook');
    // A webhook's responses are what the receiver answers: only the request body is the message.
    expect(webhooks.operations.map(({ operationKey, schema, unchecked: entries }) => [operationKey, schema, entries])).toEqual([
      ['POST ping:message:default', {}, [unchecked('/webhooks/ping/post', '', 'no request body declared')]],
      ['POST pong:message:default', {}, [unchecked('/webhooks/pong/post', '', 'no request body declared')]],
    ]);
    expectExactAccounting(document, 'webhooks', webhooks);
  });
});

describe('importOpenApi: determinism', () => {
  /** The same JSON value with the members of every object in reverse order. */
  const reversed = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(reversed);
    if (!isObject(value)) return value;
    return Object.fromEntries(
      Object.entries(value)
        .reverse()
        .map(([key, item]) => [key, reversed(item)]),
    );
  };
  const document = openapi(
    '3.0.3',
    {
      '/orders': {
        post: {
          requestBody: json({
            allOf: [ref('Base'), { type: 'object', required: ['lines'], properties: { lines: { type: 'array', items: ref('Line') } } }],
          }),
          responses: {
            201: json({ $ref: '#/components/schemas/Order' }),
            400: json({ oneOf: [ref('Problem'), ref('Error')] }),
            204: { description: 'none' },
            default: { description: 'x', content: { 'text/plain': {}, 'application/xml': {} } },
          },
        },
        get: { responses: { 200: json({ type: 'array', items: { anyOf: [ref('Order'), { enum: [null] }] } }) } },
      },
      '/orders/{id}': {
        delete: {},
        patch: { requestBody: json({ $ref: 'remote.json#/Patch' }), responses: { 200: json({ oneOf: [ref('Order')], nullable: true }) } },
      },
    },
    {
      Base: {
        type: 'object',
        required: ['id'],
        properties: { id: { type: 'string' }, status: ref('Status'), meta: { not: {}, type: 'object' } },
      },
      Status: { oneOf: [{ enum: ['open'] }, { enum: ['closed'], description: 'done' }] },
      Line: {
        type: 'object',
        properties: { sku: { type: 'string' }, qty: { allOf: [{ type: 'number' }, { type: 'integer' }] }, parent: ref('Line') },
        patternProperties: { '^x-': {} },
      },
      Order: {
        allOf: [ref('Base'), { properties: { total: { type: 'number' }, note: { type: 'string', nullable: true } } }],
        description: 'order',
      },
      Problem: { type: 'object', properties: { title: { type: 'string' } } },
      Error: { type: 'object', properties: { code: { allOf: [{ type: 'string' }, { type: 'integer' }] } } },
    },
  );

  it('gives equal operations, fingerprints and unchecked lists when importing twice and with members in another order', () => {
    const first = importOpenApi(structuredClone(document), 'http-api');
    expect(first.operations.length).toBe(9);
    expect(first.operations.some((operation) => operation.unchecked.length > 0)).toBe(true);
    expect(importOpenApi(structuredClone(document), 'http-api')).toEqual(first);
    const again = importOpenApi(reversed(document), 'http-api');
    expect(again).toEqual(first);
    expect(again.operations.map((operation) => [operation.operationKey, operation.fingerprint, operation.unchecked])).toEqual(
      first.operations.map((operation) => [operation.operationKey, operation.fingerprint, operation.unchecked]),
    );
    for (const operation of first.operations) expectOperationInvariants(operation);
    expectExactAccounting(document, 'paths', first);
  });

  // Which of two mutually recursive definitions is inlined into the other depends on which one
  // the import reaches first: members are read in sorted order, not in the document's order.
  it('gives the same schema for mutually recursive "S or null" references whatever the key order', () => {
    const schemas = {
      A: { type: 'object', properties: { b: { oneOf: [ref('B'), { type: 'null' }] } } },
      B: { type: 'object', properties: { a: { oneOf: [ref('A'), { type: 'null' }] } } },
    };
    const x = { oneOf: [ref('A'), { type: 'null' }] };
    const y = { oneOf: [ref('B'), { type: 'null' }] };
    const one = imported({ type: 'object', properties: { x, y } }, '3.1.0', schemas);
    const two = imported({ type: 'object', properties: { y, x } }, '3.1.0', schemas);
    expect(two).toEqual(one);
  });

  // Where two mutually recursive definitions are cut depends on the path they are reduced on; a
  // unit reduced with such a refusal is memoised only when the path did not matter, so adding an
  // operation for A does not change the stored schema (and fingerprint) of the operation that uses only B.
  it('stores the schema of an operation independently of the other operations of the document', () => {
    const schemas = {
      A: { type: 'object', properties: { b: { oneOf: [ref('B'), { type: 'null' }] } } },
      B: { type: 'object', properties: { a: { oneOf: [ref('A'), { type: 'null' }] } } },
    };
    const alone = importOpenApi(openapi('3.1.0', { '/y': { get: { responses: { 200: json(ref('B')) } } } }, schemas), 'http-api');
    const withA = importOpenApi(
      openapi(
        '3.1.0',
        { '/x': { get: { responses: { 200: json(ref('A')) } } }, '/y': { get: { responses: { 200: json(ref('B')) } } } },
        schemas,
      ),
      'http-api',
    );
    expect(byKey(withA, 'GET /y:response:200')).toEqual(byKey(alone, 'GET /y:response:200'));
    const onlyA = importOpenApi(openapi('3.1.0', { '/x': { get: { responses: { 200: json(ref('A')) } } } }, schemas), 'http-api');
    expect(byKey(withA, 'GET /x:response:200')).toEqual(byKey(onlyA, 'GET /x:response:200'));
  });
});

describe('importOpenApi: operations, media types and status selectors', () => {
  it('prefers application/json, then the first +json type, and reads charset parameters', () => {
    const document = openapi('3.0.3', {
      '/m': {
        get: {
          responses: {
            200: {
              description: 'x',
              content: {
                'application/vnd.api+json': { schema: { type: 'integer' } },
                'application/json': { schema: { type: 'string' } },
                'application/xml': { schema: { type: 'boolean' } },
              },
            },
            201: {
              description: 'x',
              content: {
                'application/vnd.b+json': { schema: { type: 'boolean' } },
                'application/problem+json': { schema: { type: 'integer' } },
              },
            },
            202: { description: 'x', content: { 'application/json; charset=utf-8': { schema: { type: 'number' } }, 'text/plain': {} } },
            203: { description: 'x', content: { 'APPLICATION/JSON': { schema: { type: 'null' } } } },
          },
        },
      },
    });
    const result = importOpenApi(document, 'http-api');
    expect(result.operations.map((operation) => [operation.statusSelector, operation.schema, operation.unchecked])).toEqual([
      ['200', { type: 'string' }, []],
      ['201', { type: 'integer' }, []],
      ['202', { type: 'number' }, []],
      ['203', { type: 'null' }, []],
    ]);
    expect(result.skipped).toEqual([]);
    expect(isJsonMediaType('application/merge-patch+json')).toBe(true);
    expect(isJsonMediaType('text/json')).toBe(false);
    expect(isJsonMediaType('image/svg+xml')).toBe(false);
    expect(isJsonMediaType('application/jsonl')).toBe(false);
    expect(isJsonMediaType('*/*')).toBe(false);
  });

  it('imports payloads without content or with only non-JSON content as operations; the non-JSON media types are listed', () => {
    const document = openapi('3.0.3', {
      '/files': {
        get: {
          responses: {
            200: { description: 'x', content: { 'text/plain': {}, 'application/octet-stream': {} } },
            204: { description: 'empty' },
            304: { description: 'x', content: {} },
          },
        },
        put: { requestBody: json({ type: 'object' }), responses: { 204: { description: 'stored' } } },
      },
    });
    const result = importOpenApi(document, 'http-api');
    const octet = {
      pointer: '/paths/~1files/get/responses/200/content/application~1octet-stream',
      reason: 'non-JSON media type application/octet-stream',
    };
    const text = { pointer: '/paths/~1files/get/responses/200/content/text~1plain', reason: 'non-JSON media type text/plain' };
    expect(result.operations.map(({ operationKey, schema, unchecked: entries }) => [operationKey, schema, entries])).toEqual([
      [
        'GET /files:response:200',
        {},
        [
          { ...octet, schemaPointer: '' },
          { ...text, schemaPointer: '' },
        ],
      ],
      ['GET /files:response:204', {}, []],
      ['GET /files:response:304', {}, []],
      ['PUT /files:request:default', { type: 'object' }, []],
      ['PUT /files:response:204', {}, []],
    ]);
    expect(result.skipped).toEqual([octet, text]);
    expectExactAccounting(document, 'paths', result);
  });

  it('lists the unchecked non-JSON media types of one payload in the order of their pointers', () => {
    // Media types in name order would be `/`, `0`, `text/plain`, `~x`; escaped, `/` is `~1` and sorts last.
    const document = openapi('3.0.3', {
      '/m': { get: { responses: { 200: { description: 'x', content: { '/': {}, '~x': {}, 'text/plain': {}, '0': {} } } } } },
    });
    const result = importOpenApi(document, 'http-api');
    const at = '/paths/~1m/get/responses/200/content';
    const expected = [
      unchecked(`${at}/0`, '', 'non-JSON media type 0'),
      unchecked(`${at}/text~1plain`, '', 'non-JSON media type text/plain'),
      unchecked(`${at}/~0x`, '', 'non-JSON media type ~x'),
      unchecked(`${at}/~1`, '', 'non-JSON media type /'),
    ];
    expect(result.operations.map(({ operationKey, schema, unchecked: entries }) => [operationKey, schema, entries])).toEqual([
      ['GET /m:response:200', {}, expected],
    ]);
    expectOperationInvariants(result.operations[0]);
    expect(result.skipped).toEqual(asSkipped(expected));
    expectExactAccounting(document, 'paths', result);
  });

  it('normalises status selectors and leaves out duplicates and invalid codes', () => {
    const document = openapi('3.0.3', {
      '/s': {
        get: {
          responses: {
            '2xx': json({ type: 'string' }),
            '2XX': json({ type: 'integer' }),
            '4xx': json({ type: 'boolean' }),
            Default: json({ type: 'null' }),
            '600': json({ type: 'string' }),
            'x-extension': { whatever: true },
            '20': json({ type: 'string' }),
          },
        },
      },
    });
    const result = importOpenApi(document, 'http-api');
    expect(result.operations.map((operation) => [operation.operationKey, operation.schema])).toEqual([
      ['GET /s:response:2XX', { type: 'integer' }],
      ['GET /s:response:4XX', { type: 'boolean' }],
      ['GET /s:response:default', { type: 'null' }],
    ]);
    expect(result.skipped).toEqual([
      { pointer: '/paths/~1s/get/responses/20', reason: 'invalid status code 20' },
      { pointer: '/paths/~1s/get/responses/2xx', reason: 'duplicate status selector 2XX' },
      { pointer: '/paths/~1s/get/responses/600', reason: 'invalid status code 600' },
    ]);
    expectExactAccounting(document, 'paths', result);
  });

  it('resolves local references to path items, request bodies and responses; leaves out a remote one', () => {
    const document = openapi(
      '3.1.0',
      {
        '/items': { $ref: '#/components/pathItems/Items' },
        '/other': {
          post: {
            requestBody: { $ref: '#/components/requestBodies/Item' },
            responses: { 404: { $ref: '#/components/responses/NotFound' }, 500: { $ref: 'common.yaml#/responses/Error' } },
          },
        },
      },
      { Item: { type: 'object', properties: { id: { type: 'string' } } } },
      {},
    );
    (document.components as Json).pathItems = { Items: { get: { responses: { 200: { $ref: '#/components/responses/Item' } } } } };
    (document.components as Json).requestBodies = { Item: json({ $ref: '#/components/schemas/Item' }) };
    (document.components as Json).responses = {
      Item: json({ $ref: '#/components/schemas/Item' }),
      NotFound: { description: 'x', content: { 'text/html': {} } },
    };
    const result = importOpenApi(document, 'http-api');
    expect(keys(result)).toEqual(['GET /items:response:200', 'POST /other:request:default', 'POST /other:response:404']);
    const html = { pointer: '/components/responses/NotFound/content/text~1html', reason: 'non-JSON media type text/html' };
    expect(byKey(result, 'POST /other:response:404')).toMatchObject({ schema: {}, unchecked: [{ ...html, schemaPointer: '' }] });
    expect(byKey(result, 'GET /items:response:200').schema).toEqual({
      $ref: '#/$defs/Item',
      $defs: { Item: { type: 'object', properties: { id: { type: 'string' } } } },
    });
    expect(result.skipped).toEqual([
      html,
      { pointer: '/paths/~1other/post/responses/500', reason: 'remote reference common.yaml#/responses/Error' },
    ]);
    expectExactAccounting(document, 'paths', result);
  });

  it('leaves out an operation whose every payload is a remote or unresolved reference, whatever the other paths did: no default operation', () => {
    const shared = { get: { responses: { 200: { $ref: '#/components/responses/R' } } } };
    const all: Json = {
      '/a': shared,
      '/b': structuredClone(shared),
      '/c': { get: { responses: { 200: { $ref: '#/components/responses/U' }, 404: { $ref: '#/components/responses/R' } } } },
      '/ok': { get: { responses: { 200: json({ type: 'string' }) } } },
    };
    const webhooks = {
      w1: { post: { requestBody: { $ref: '#/components/requestBodies/B' } } },
      w2: { post: { requestBody: { $ref: '#/components/requestBodies/B' } } },
      ok: { post: { requestBody: json({ type: 'object' }) } },
    };
    const documentWith = (names: string[]): Json => {
      const document = openapi('3.1.0', Object.fromEntries(names.map((name) => [name, all[name]])), {}, { webhooks });
      Object.assign(document.components as Json, {
        responses: { R: { $ref: 'common.yaml#/responses/R' }, U: { $ref: '#/components/responses/Missing' } },
        requestBodies: { B: { $ref: 'common.yaml#/requestBodies/B' } },
      });
      return document;
    };
    const remote = { pointer: '/components/responses/R', reason: 'remote reference common.yaml#/responses/R' };
    const unresolved = { pointer: '/components/responses/U', reason: 'unresolved reference #/components/responses/Missing' };
    // Each of /a and /b alone, both together (the second meets a left-out entry the first already
    // recorded), and beside /c: the same answer, never a `…:response:default` operation.
    for (const [names, skipped] of [
      [['/a', '/ok'], [remote]],
      [['/b', '/ok'], [remote]],
      [['/a', '/b', '/ok'], [remote]],
      [
        ['/a', '/b', '/c', '/ok'],
        [remote, unresolved],
      ],
      [
        ['/c', '/ok'],
        [remote, unresolved],
      ],
    ] as const) {
      const document = documentWith([...names]);
      const result = importOpenApi(document, 'http-api');
      expect(keys(result), names.join(' ')).toEqual(['GET /ok:response:200']);
      expect(result.skipped).toEqual(skipped);
      expectExactAccounting(document, 'paths', result);
    }
    // Without another operation, the document is refused with what was left out.
    expect(rejection(() => importOpenApi(documentWith(['/a', '/b']), 'http-api'))).toEqual({
      reason: 'no importable operations: 1 payload(s) left out, first: remote reference common.yaml#/responses/R',
      pointers: ['/components/responses/R'],
    });
    // A webhook whose request body is a remote reference is left out the same way (no `no request body declared` message).
    const document = documentWith(['/ok']);
    const result = importOpenApi(document, 'http-webhook');
    expect(keys(result)).toEqual(['POST ok:message:default']);
    expect(result.skipped).toEqual([{ pointer: '/components/requestBodies/B', reason: 'remote reference common.yaml#/requestBodies/B' }]);
    expectExactAccounting(document, 'webhooks', result);
  });

  it('leaves out unsupported methods that carry payloads; ignores callbacks, webhooks and x- paths for http-api', () => {
    const document = openapi(
      '3.1.0',
      {
        '/h': {
          head: { responses: { 200: { description: 'no body' } } },
          options: { responses: { 200: json({ type: 'object' }) } },
          trace: { requestBody: json({ type: 'string' }) },
          get: {
            responses: { 200: json({ type: 'string' }) },
            callbacks: { onEvent: { '{$request.body#/url}': { post: { requestBody: json({ type: 'integer' }) } } } },
          },
          parameters: [{ name: 'q', in: 'query' }],
          summary: 'h',
        },
        'x-internal': { get: { responses: { 200: json({ type: 'string' }) } } },
        'relative/path': { get: { responses: { 200: json({ type: 'string' }) } } },
        '/q?x=1': { get: { responses: { 200: json({ type: 'string' }) } } },
      },
      {},
      { webhooks: { ping: { post: { requestBody: json({ type: 'object' }) } } } },
    );
    const result = importOpenApi(document, 'http-api');
    expect(keys(result)).toEqual(['GET /h:response:200']);
    expect(result.skipped).toEqual([
      { pointer: '/paths/relative~1path', reason: 'invalid path relative/path (not an absolute path without query)' },
      { pointer: '/paths/~1h/options', reason: 'unsupported method OPTIONS' },
      { pointer: '/paths/~1h/trace', reason: 'unsupported method TRACE' },
      { pointer: '/paths/~1q?x=1', reason: 'invalid path /q?x=1 (not an absolute path without query)' },
    ]);
    expectExactAccounting(document, 'paths', result);
    // A document whose every payload is left out has no operation: refused, with the pointers.
    expect(
      rejection(() =>
        importOpenApi(openapi('3.1.0', { '/o': { options: { requestBody: json({ type: 'string' }) } }, rel: { get: {} } }), 'http-api'),
      ),
    ).toEqual({
      reason: 'no importable operations: 2 payload(s) left out, first: invalid path rel (not an absolute path without query)',
      pointers: ['/paths/rel', '/paths/~1o/options'],
    });
  });

  it('reads webhooks for http-webhook: request bodies are messages, responses are not imported', () => {
    const document = openapi(
      '3.1.0',
      {
        '/api': { get: { responses: { 200: json({ type: 'string' }) } } },
      },
      { Event: { type: 'object', required: ['type'], properties: { type: { type: 'string' } } } },
      {
        webhooks: {
          'order.created': {
            post: { requestBody: json({ $ref: '#/components/schemas/Event' }), responses: { 200: json({ type: 'object' }) } },
          },
          'order.deleted': { put: { requestBody: json({ type: 'object' }, 'application/cloudevents+json') } },
          'order.noop': { post: { responses: { 200: { description: 'ok' } } } },
        },
      },
    );
    const result = importOpenApi(document, 'http-webhook');
    const noop = { pointer: '/webhooks/order.noop/post', reason: 'no request body declared' };
    expect(result.skipped).toEqual([noop]);
    expect(
      result.operations.map(({ operationKey, eventType, payloadLocation, statusSelector, routeTemplate, method, unchecked: entries }) => ({
        operationKey,
        eventType,
        payloadLocation,
        statusSelector,
        routeTemplate,
        method,
        unchecked: entries,
      })),
    ).toEqual([
      {
        operationKey: 'POST order.created:message:default',
        eventType: 'order.created',
        payloadLocation: 'message',
        statusSelector: 'default',
        routeTemplate: 'order.created',
        method: 'POST',
        unchecked: [],
      },
      {
        operationKey: 'POST order.noop:message:default',
        eventType: 'order.noop',
        payloadLocation: 'message',
        statusSelector: 'default',
        routeTemplate: 'order.noop',
        method: 'POST',
        unchecked: [{ ...noop, schemaPointer: '' }],
      },
      {
        operationKey: 'PUT order.deleted:message:default',
        eventType: 'order.deleted',
        payloadLocation: 'message',
        statusSelector: 'default',
        routeTemplate: 'order.deleted',
        method: 'PUT',
        unchecked: [],
      },
    ]);
    expectExactAccounting(document, 'webhooks', result);
  });

  it('refuses documents that are not OpenAPI 3.0 or 3.1', () => {
    const paths = { '/a': { get: { responses: { 200: json({ type: 'string' }) } } } };
    for (const value of [null, [], 'openapi', 3, true]) {
      expect(rejection(() => importOpenApi(value, 'http-api'))).toEqual({ reason: 'the document is not a JSON object', pointers: [''] });
    }
    const swagger2 = {
      swagger: '2.0',
      info: { title: 'x', version: '1' },
      produces: ['application/json'],
      paths: { '/a': { get: { responses: { 200: { description: 'x', schema: { type: 'string' } } } } } },
    };
    expect(importOpenApi(swagger2, 'http-api')).toMatchObject({
      openapiVersion: '2.0',
      operations: [{ operationKey: 'GET /a:response:200', schema: { type: 'string' }, unchecked: [] }],
    });
    expect(rejection(() => importOpenApi({ swagger: '2.0', paths: { '/a': { get: { parameters: 'x' } } } }, 'http-api')).pointers).toEqual([
      '',
    ]);
    expect(rejection(() => importOpenApi({ swagger: '1.2', paths }, 'http-api')).reason).toBe(
      'Swagger 1.2 documents are not supported; supported versions are Swagger 2.0 and OpenAPI 3.0.x and 3.1.x',
    );
    expect(rejection(() => importOpenApi({ paths }, 'http-api'))).toEqual({
      reason: 'the document has no openapi version; supported versions are 3.0.x and 3.1.x',
      pointers: [''],
    });
    for (const version of ['3.2.0', '2.0', '4.0.0', '3', '3.0.x', 3.1, null, ['3.0.0']]) {
      const error = rejection(() => importOpenApi({ openapi: version, paths }, 'http-api'));
      expect(error.pointers).toEqual(['/openapi']);
      expect(error.reason).toMatch(/^unsupported OpenAPI version .*; supported versions are 3\.0\.x and 3\.1\.x$/);
    }
    for (const version of ['3.0', '3.0.0', '3.0.4', '3.1.0', '3.1.1', '3.1.0-rc1']) {
      expect(importOpenApi({ openapi: version, paths }, 'http-api').operations.length).toBe(1);
    }
    expect(rejection(() => importOpenApi({ openapi: '3.0.3', paths: [] }, 'http-api'))).toEqual({
      reason: 'paths is not an object',
      pointers: ['/paths'],
    });
    expect(rejection(() => importOpenApi({ openapi: '3.1.0', webhooks: 'x' }, 'http-webhook'))).toEqual({
      reason: 'webhooks is not an object',
      pointers: ['/webhooks'],
    });
    expect(rejection(() => importOpenApi({ openapi: '3.0.3', paths: {} }, 'http-api'))).toEqual({
      reason: 'no importable operations: no entry of paths declares an operation',
      pointers: ['/paths'],
    });
    expect(rejection(() => importOpenApi({ openapi: '3.0.3', paths }, 'queue' as never)).reason).toBe(
      'OpenAPI documents can be registered only for http-api and http-webhook Integrations',
    );
  });
});

describe('importJsonSchema', () => {
  const orderSchema = {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    title: 'Order message',
    type: 'object',
    required: ['id', 'lines'],
    properties: {
      id: { type: 'string', format: 'uuid' },
      lines: { type: 'array', items: { $ref: '#/$defs/Line' } },
      parent: { $ref: '#' },
      customer: { $ref: '#/definitions/Customer' },
    },
    $defs: {
      Line: { type: 'object', properties: { sku: { type: 'string' }, qty: { type: 'integer', minimum: 1 } } },
      Unused: { type: 'string' },
    },
    definitions: { Customer: { type: ['object', 'null'], properties: { name: { type: 'string' } } } },
  };
  const queueSelector = { method: 'POST', routeTemplate: 'orders.created', payloadLocation: 'message', statusSelector: '202' };
  const strict = (schema: unknown) => importJsonSchema(schema, queueSelector, 'queue');

  it('imports one operation for the selector with a self-contained schema', () => {
    const operation = strict(orderSchema);
    const schema = {
      type: 'object',
      required: ['id', 'lines'],
      properties: {
        id: { type: 'string' },
        lines: { type: 'array', items: { $ref: '#/$defs/Line' } },
        parent: { $ref: '#' },
        customer: { $ref: '#/$defs/~1definitions~1Customer' },
      },
      $defs: {
        Line: { type: 'object', properties: { sku: { type: 'string' }, qty: { type: 'integer' } } },
        '/definitions/Customer': { type: ['null', 'object'], properties: { name: { type: 'string' } } },
      },
    };
    expect(operation).toEqual({
      operationKey: 'POST orders.created:message:202',
      method: 'POST',
      routeTemplate: 'orders.created',
      basePaths: [],
      eventType: null,
      payloadLocation: 'message',
      statusSelector: '202',
      fingerprint: fingerprint(schema),
      schema,
      unchecked: [],
    });
    expectOperationInvariants(operation);
    expect(importJsonSchema(orderSchema, { ...queueSelector, routeTemplate: 'nightly-export' }, 'scheduled-feed').fingerprint).toBe(
      operation.fingerprint,
    );
    expect(
      importJsonSchema(
        { type: 'object' },
        { method: 'GET', routeTemplate: '/v1/orders/{id}', payloadLocation: 'response', statusSelector: '2xx' },
        'http-api',
      ).operationKey,
    ).toBe('GET /v1/orders/{id}:response:2XX');
    expect(
      importJsonSchema(
        { type: 'object' },
        { method: 'POST', routeTemplate: '/hooks/orders', payloadLocation: 'message', statusSelector: 'default' },
        'http-webhook',
      ).operationKey,
    ).toBe('POST /hooks/orders:message:default');
  });

  it('flattens allOf in strict mode too', () => {
    const operation = strict({
      allOf: [{ type: 'object', required: ['a'], properties: { a: { type: 'string' }, n: { type: 'number' } } }, { $ref: '#/$defs/B' }],
      $defs: { B: { properties: { b: { type: 'number' }, n: { type: 'integer' } }, required: ['b'] } },
    });
    // B, only inlined, is not carried in the stored $defs (no `$ref` of the stored schema names it).
    const schema = {
      type: 'object',
      required: ['a', 'b'],
      properties: { a: { type: 'string' }, b: { type: 'number' }, n: { type: 'integer' } },
    };
    expect(operation).toMatchObject({ schema, fingerprint: fingerprint(schema), unchecked: [] });
    expectOperationInvariants(operation);
    expect(strict({ allOf: [{ enum: ['a', 'b', 'c'] }, { enum: ['c', 'a'] }] }).schema).toEqual({ enum: ['a', 'c'] });
    expect(
      strict({
        type: 'object',
        properties: { o: { allOf: [{ $ref: '#/$defs/O' }], description: 'lone reference' } },
        $defs: { O: { type: 'object' } },
      }).schema,
    ).toEqual({
      type: 'object',
      properties: { o: { $ref: '#/$defs/O' } },
      $defs: { O: { type: 'object' } },
    });
    // Where no subset schema expresses the conjunction, strict mode refuses it.
    expect(rejection(() => strict({ properties: { a: { allOf: [{ type: 'string' }, { type: 'integer' }] } } }))).toEqual({
      reason: 'allOf members allow no common type (string, integer)',
      pointers: ['/properties/a/allOf'],
    });
    expect(rejection(() => strict({ allOf: [{ enum: [1] }, { enum: [2] }] }))).toEqual({
      reason: 'allOf members allow no common enum value',
      pointers: ['/allOf'],
    });
  });

  it('refuses remote references and composition with every offending pointer', () => {
    expect(rejection(() => strict({ type: 'object', properties: { c: { $ref: 'https://example.com/customer.json' } } }))).toEqual({
      reason: 'remote reference https://example.com/customer.json',
      pointers: ['/properties/c/$ref'],
    });
    expect(
      rejection(() =>
        strict({
          allOf: [{ type: 'object' }],
          properties: { x: { oneOf: [] }, y: { $ref: '#/$defs/Y' }, r: { $ref: 'https://e.com/r.json' } },
          $defs: { Y: { anyOf: [] } },
        }),
      ),
    ).toEqual({
      reason: 'composition keyword anyOf (and 2 more)',
      pointers: ['/$defs/Y/anyOf', '/properties/r/$ref', '/properties/x/oneOf'],
    });
    // The lenient idioms of published documents are not read in a json-schema contract.
    expect(rejection(() => strict({ oneOf: [{ type: 'string' }, { type: 'null' }] }))).toEqual({
      reason: 'composition keyword oneOf',
      pointers: ['/oneOf'],
    });
    expect(rejection(() => strict({ properties: { k: { anyOf: [{ const: 'a' }, { const: 'b' }] } } }))).toEqual({
      reason: 'composition keyword anyOf',
      pointers: ['/properties/k/anyOf'],
    });
    expect(rejection(() => strict({ not: { type: 'string' }, prefixItems: [] }))).toEqual({
      reason: 'composition keyword not (and 1 more)',
      pointers: ['/not', '/prefixItems'],
    });
    expect(rejection(() => strict({ properties: { a: { $ref: '#anchor' } } }))).toEqual({
      reason: 'unsupported reference #anchor (only JSON-pointer fragments)',
      pointers: ['/properties/a/$ref'],
    });
    expect(rejection(() => strict({ properties: { a: { $ref: '#/$defs/Nope' } } }))).toEqual({
      reason: 'unresolved reference #/$defs/Nope',
      pointers: ['/properties/a/$ref'],
    });
    expect(rejection(() => strict({ $ref: '#' })).reason).toBe('reference cycle without a schema');
  });

  it('ignores $ref siblings for draft-07 schemas and applies them for 2020-12', () => {
    const base = { $defs: { A: { type: 'object' } }, properties: { a: { $ref: '#/$defs/A', required: ['x'] } } };
    const draft7 = strict({ ...base, $schema: 'http://json-schema.org/draft-07/schema#' });
    expect((draft7.schema.properties as Json).a).toEqual({ $ref: '#/$defs/A' });
    const modern = strict(base);
    expect((modern.schema.properties as Json).a).toEqual({ $ref: '#/$defs/A', required: ['x'] });
  });

  it('refuses a schema that is not an object', () => {
    for (const schema of [null, [], 'string', true, 1]) {
      expect(rejection(() => strict(schema))).toEqual({ reason: 'the document is not a JSON Schema object', pointers: [''] });
    }
  });

  it('refuses an invalid selector', () => {
    const cases: [unknown, string, RegExp][] = [
      [undefined, 'queue', /selector .* is required/],
      [{ ...queueSelector, method: 'GET' }, 'queue', /^operation\.method must be POST for queue$/],
      [{ ...queueSelector, method: 'post' }, 'queue', /^operation\.method must be POST/],
      [
        { ...queueSelector, method: 'HEAD' },
        'http-webhook',
        /^operation\.method must be GET or POST or PUT or PATCH or DELETE for http-webhook$/,
      ],
      [
        { ...queueSelector, payloadLocation: 'response' },
        'scheduled-feed',
        /^operation\.payloadLocation must be message for scheduled-feed$/,
      ],
      [
        { ...queueSelector, payloadLocation: 'message', routeTemplate: '/orders' },
        'http-api',
        /^operation\.payloadLocation must be request or response/,
      ],
      [{ ...queueSelector, statusSelector: '99' }, 'queue', /^operation\.statusSelector must be/],
      [{ ...queueSelector, statusSelector: '6XX' }, 'queue', /^operation\.statusSelector must be/],
      [{ ...queueSelector, statusSelector: 202 }, 'queue', /^operation\.statusSelector must be a string$/],
      [{ ...queueSelector, extra: 1 }, 'queue', /^operation has an unknown member extra$/],
      [{ method: 'POST', routeTemplate: 'x', payloadLocation: 'message' }, 'queue', /^operation\.statusSelector must be a string$/],
      [{ ...queueSelector, routeTemplate: '' }, 'queue', /^operation\.routeTemplate must be 1 to 512 characters$/],
      [{ ...queueSelector, routeTemplate: 'x'.repeat(513) }, 'queue', /^operation\.routeTemplate must be 1 to 512 characters$/],
      [{ ...queueSelector, routeTemplate: ' orders' }, 'queue', /control characters or surrounding spaces/],
      [{ ...queueSelector, routeTemplate: 'a\nb' }, 'queue', /control characters/],
      [{ method: 'GET', routeTemplate: 'orders', payloadLocation: 'response', statusSelector: '200' }, 'http-api', /absolute path/],
      [{ method: 'GET', routeTemplate: '/orders?x=1', payloadLocation: 'response', statusSelector: '200' }, 'http-api', /absolute path/],
      [queueSelector, 'grpc', /^unknown protocol grpc$/],
    ];
    for (const [selector, protocol, reason] of cases) {
      const error = rejection(() => importJsonSchema({ type: 'object' }, selector, protocol as never));
      expect(error.reason).toMatch(reason);
      expect(error.pointers).toEqual([]);
    }
  });
});
