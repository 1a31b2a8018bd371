import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { AppError } from '../shared/errors/index.js';
import { fingerprint, FINGERPRINT_PATTERN } from '../shared/fingerprint.js';
import { importJsonSchema } from '../shared/contracts/importJsonSchema.js';
import { importOpenApi, isJsonMediaType } from '../shared/contracts/importOpenApi.js';
import type { ImportedOperation, ImportResult } from '../shared/contracts/types.js';

// Issue 3 (contract importer), Done means: every corpus document is imported here.

const CORPUS = process.env.CORPUS_DIR ?? fileURLToPath(new URL('../../shared/corpus/openapi/', import.meta.url));

interface ManifestEntry {
  file: string;
  openapi: string;
  traits: string[];
  paths: number;
  webhooks: number;
  cycles: string[][];
}

const manifest: ManifestEntry[] = JSON.parse(readFileSync(CORPUS + 'manifest.json', 'utf8'));
const load = (file: string): Record<string, unknown> => JSON.parse(readFileSync(CORPUS + file, 'utf8'));
const entry = (file: string): ManifestEntry => manifest.find((item) => item.file === file) as ManifestEntry;

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

const keys = (result: ImportResult) => result.operations.map((operation) => operation.operationKey);
const byKey = (result: ImportResult, key: string) => result.operations.find((operation) => operation.operationKey === key) as ImportedOperation;

const SUBSET = new Set(['type', 'properties', 'required', 'items', 'enum', 'additionalProperties', '$ref', '$defs']);
const TYPES = new Set(['object', 'array', 'string', 'number', 'integer', 'boolean', 'null']);

/** The stored schema uses only the subset and every `$ref` names a definition it carries. */
function expectStoredSchema(schema: Record<string, unknown>): void {
  const defs = (schema.$defs ?? {}) as Record<string, unknown>;
  const visit = (node: unknown, isRoot: boolean): void => {
    if (typeof node === 'boolean') return;
    expect(typeof node === 'object' && node !== null && !Array.isArray(node)).toBe(true);
    const object = node as Record<string, unknown>;
    for (const key of Object.keys(object)) expect(SUBSET.has(key), `keyword ${key}`).toBe(true);
    if (!isRoot) expect(object.$defs).toBeUndefined();
    if (object.$ref !== undefined) {
      const ref = object.$ref as string;
      if (ref !== '#') {
        expect(ref.startsWith('#/$defs/')).toBe(true);
        const name = decodeURIComponent(ref.slice('#/$defs/'.length)).replace(/~1/g, '/').replace(/~0/g, '~');
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
    for (const child of Object.values((object.properties ?? {}) as Record<string, unknown>)) visit(child, false);
    if (object.items !== undefined) visit(object.items, false);
    if (object.additionalProperties !== undefined) visit(object.additionalProperties, false);
  };
  visit(schema, true);
  for (const def of Object.values(defs)) visit(def, false);
}

function expectOperationInvariants(operation: ImportedOperation): void {
  expect(operation.operationKey).toBe(`${operation.method} ${operation.routeTemplate}:${operation.payloadLocation}:${operation.statusSelector}`);
  expect(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']).toContain(operation.method);
  expect(operation.statusSelector).toMatch(/^([1-5][0-9][0-9]|[1-5]XX|default)$/);
  expect(operation.fingerprint).toMatch(FINGERPRINT_PATTERN);
  expect(operation.fingerprint).toBe(fingerprint(operation.schema));
  expectStoredSchema(operation.schema);
}

// An independent, deliberately simple walk of what a document declares: every payload with
// `content` under a supported method, with the pointer of the object that holds the content.
function declaredPayloads(document: Record<string, unknown>, source: 'paths' | 'webhooks'): Map<string, string> {
  const resolve = (node: unknown, pointer: string): [unknown, string] => {
    const ref = (node as { $ref?: unknown } | null)?.$ref;
    if (typeof ref !== 'string' || !ref.startsWith('#/')) return [node, pointer];
    const target = ref.slice(2).split('/').map((token) => token.replace(/~1/g, '/').replace(/~0/g, '~'))
      .reduce<unknown>((value, token) => (value as Record<string, unknown> | undefined)?.[token], document);
    return resolve(target, '/' + ref.slice(2));
  };
  const escape = (token: string) => token.replace(/~/g, '~0').replace(/\//g, '~1');
  const payloads = new Map<string, string>();
  const container = document[source] as Record<string, Record<string, Record<string, unknown>>>;
  for (const [name, rawItem] of Object.entries(container)) {
    if (name.startsWith('x-')) continue;
    const [item] = resolve(rawItem, `/${source}/${escape(name)}`) as [Record<string, Record<string, unknown>>, string];
    for (const method of ['get', 'post', 'put', 'patch', 'delete']) {
      const operation = item[method];
      if (!operation) continue;
      const upper = method.toUpperCase();
      if (operation.requestBody) {
        const [body, pointer] = resolve(operation.requestBody, '');
        if ((body as { content?: unknown }).content) {
          payloads.set(`${upper} ${name}:${source === 'paths' ? 'request' : 'message'}:default`, pointer || `/${source}/${escape(name)}/${method}/requestBody`);
        }
      }
      if (source === 'webhooks') continue;
      for (const [code, rawResponse] of Object.entries((operation.responses ?? {}) as Record<string, unknown>)) {
        const [response, pointer] = resolve(rawResponse, '');
        if (!(response as { content?: unknown }).content) continue;
        payloads.set(`${upper} ${name}:response:${code === 'default' ? code : code.toUpperCase()}`, pointer || `/${source}/${escape(name)}/${method}/responses/${escape(code)}`);
      }
    }
  }
  return payloads;
}

/** Every declared payload is imported or named in `skipped`, and `skipped` names nothing else. */
function expectExactAccounting(document: Record<string, unknown>, source: 'paths' | 'webhooks', result: ImportResult): void {
  const declared = declaredPayloads(document, source);
  for (const key of keys(result)) expect(declared.has(key), `undeclared operation ${key}`).toBe(true);
  const leftOut = [...declared].filter(([key]) => !keys(result).includes(key)).map(([, pointer]) => pointer + '/content/');
  for (const pointer of leftOut) {
    expect(result.skipped.some((skip) => skip.pointer.startsWith(pointer)), `payload at ${pointer} neither imported nor skipped`).toBe(true);
  }
  for (const skip of result.skipped) {
    expect(leftOut.some((pointer) => skip.pointer.startsWith(pointer)), `skipped ${skip.pointer} is not a left-out payload`).toBe(true);
  }
  expect(result.skipped).toEqual([...result.skipped].sort((a, b) => (a.pointer < b.pointer ? -1 : a.pointer > b.pointer ? 1 : a.reason < b.reason ? -1 : 1)));
  expect(keys(result)).toEqual([...keys(result)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
}

// Operation and skipped counts per OpenAPI 3.x corpus document (http-api from paths,
// http-webhook from webhooks). Counts of zero are documents where nothing is importable.
const EXPECTED: Record<string, { api?: [number, number]; webhook?: [number, number] }> = {
  'oai-petstore-v3.0.json': { api: [6, 0] },
  'oai-petstore-expanded-v3.0.json': { api: [5, 3] },
  'oai-uspto-v3.0.json': { api: [4, 1] },
  'oai-callback-example-v3.0.json': { api: [1, 0] },
  'oai-link-example-v3.0.json': { api: [5, 0] },
  'oai-api-with-examples-v3.0.json': { api: [0, 4] },
  'oai-webhook-example-v3.1.json': { webhook: [1, 0] },
  'oai-non-oauth-scopes-v3.1.json': { api: [0, 0] },
  'redocly-museum-v3.1.json': { api: [24, 3], webhook: [1, 0] },
  'swagger-petstore-v3.0.json': { api: [20, 1] },
  'swagger-petstore-v3.1.json': { api: [0, 7], webhook: [0, 1] },
  'adyen-dispute-webhooks-v3.1.json': { webhook: [2, 0] },
  'adyen-management-webhooks-v3.1.json': { webhook: [8, 0] },
  'adyen-transfer-webhooks-v3.1.json': { webhook: [0, 2] },
  'adyen-checkout-v71-v3.1.json': { api: [146, 5] },
  'pokeapi-v3.1.json': { api: [89, 11] },
  'keycloak-admin-21.1.2-v3.0.json': { api: [235, 6] },
  'openai-2024-04-v3.0.json': { api: [35, 40] },
  'qdrant-v3.0.json': { api: [149, 88] },
  'spree-storefront-v3.0.json': { api: [126, 33] },
  'discord-v3.1.json': { api: [57, 222] },
};

describe('importOpenApi: the corpus', () => {
  it('lists every corpus document in the manifest and the expectations', () => {
    const openapi3 = manifest.filter((item) => !item.traits.includes('swagger-2.0')).map((item) => item.file).sort();
    expect(Object.keys(EXPECTED).sort()).toEqual(openapi3);
    // The corpus folder is read at test time: a document added without a manifest row fails here.
    const files = readdirSync(CORPUS).filter((file) => file.endsWith('.json') && file !== 'manifest.json').sort();
    expect(manifest.map((item) => item.file).sort()).toEqual(files);
  });

  for (const item of manifest) {
    if (item.traits.includes('swagger-2.0')) {
      it(`${item.file}: Swagger 2.0 is converted to OpenAPI 3.0 and imported, leaving the document sent unchanged`, () => {
        const document = load(item.file);
        const result = importOpenApi(document, 'http-api');
        expect(document).toEqual(load(item.file));
        expect(result.openapiVersion).toBe('2.0');
        expect(result.operations.length).toBeGreaterThan(0);
        // Deterministic: the identical-retry rule compares operation keys and schema fingerprints.
        expect(importOpenApi(load(item.file), 'http-api')).toEqual(result);
        expect(rejection(() => importOpenApi(load(item.file), 'http-webhook')))
          .toEqual({ reason: 'the document has no webhooks; http-webhook operations are read from webhooks', pointers: [''] });
      });
      continue;
    }
    const expected = EXPECTED[item.file];
    for (const [protocol, source, counts, declared] of [
      ['http-api', 'paths', expected?.api, item.paths],
      ['http-webhook', 'webhooks', expected?.webhook, item.webhooks],
    ] as const) {
      it(`${item.file}: ${protocol}`, () => {
        const document = load(item.file);
        if (declared === 0 && counts === undefined) {
          const error = rejection(() => importOpenApi(document, protocol));
          expect(error).toEqual({ reason: `the document has no ${source}; ${protocol} operations are read from ${source}`, pointers: [''] });
          return;
        }
        expect(counts).toBeDefined();
        const [operationCount, skippedCount] = counts as [number, number];
        if (operationCount === 0) {
          const error = rejection(() => importOpenApi(document, protocol));
          expect(error.reason).toMatch(/^no importable operations/);
          expect(error.pointers.length).toBe(skippedCount === 0 ? 1 : new Set(error.pointers).size);
          if (skippedCount === 0) expect(error.pointers).toEqual([`/${source}`]);
          return;
        }
        const result = importOpenApi(document, protocol);
        expect(result.openapiVersion).toBe(item.openapi);
        expect(result.operations.length).toBe(operationCount);
        expect(result.skipped.length).toBe(skippedCount);
        // Plausibility against the manifest: every route comes from the document, and most
        // declared routes yield at least one operation.
        const routes = new Set(result.operations.map((operation) => operation.routeTemplate));
        expect(routes.size).toBeLessThanOrEqual(declared);
        expect(routes.size).toBeGreaterThanOrEqual(Math.ceil(declared * (item.traits.includes('composition-heavy') ? 0.25 : 0.7)));
        for (const operation of result.operations) expectOperationInvariants(operation);
        expectExactAccounting(document, source, result);
        if (protocol === 'http-webhook') {
          for (const operation of result.operations) {
            expect(operation.payloadLocation).toBe('message');
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
});

describe('importOpenApi: exact results for small documents', () => {
  it('oai-petstore: six operations, Pets references Pet inside $defs', () => {
    const result = importOpenApi(load('oai-petstore-v3.0.json'), 'http-api');
    expect(keys(result)).toEqual([
      'GET /pets/{petId}:response:200',
      'GET /pets/{petId}:response:default',
      'GET /pets:response:200',
      'GET /pets:response:default',
      'POST /pets:request:default',
      'POST /pets:response:default',
    ]);
    expect(result.skipped).toEqual([]);
    const pet = { type: 'object', required: ['id', 'name'], properties: { id: { type: 'integer' }, name: { type: 'string' }, tag: { type: 'string' } } };
    expect(byKey(result, 'GET /pets:response:200').schema).toEqual({ $ref: '#/$defs/Pets', $defs: { Pet: pet, Pets: { type: 'array', items: { $ref: '#/$defs/Pet' } } } });
    expect(byKey(result, 'POST /pets:request:default')).toEqual({
      operationKey: 'POST /pets:request:default',
      method: 'POST',
      routeTemplate: '/pets',
      eventType: null,
      payloadLocation: 'request',
      statusSelector: 'default',
      fingerprint: fingerprint({ $ref: '#/$defs/Pet', $defs: { Pet: pet } }),
      schema: { $ref: '#/$defs/Pet', $defs: { Pet: pet } },
    });
    // The same schema has the same fingerprint wherever it is used.
    expect(byKey(result, 'GET /pets/{petId}:response:200').fingerprint).toBe(byKey(result, 'POST /pets:request:default').fingerprint);
  });

  it('oai-uspto: the form-encoded request body is skipped as non-JSON media', () => {
    const result = importOpenApi(load('oai-uspto-v3.0.json'), 'http-api');
    expect(keys(result)).toEqual([
      'GET /:response:200',
      'GET /{dataset}/{version}/fields:response:200',
      'GET /{dataset}/{version}/fields:response:404',
      'POST /{dataset}/{version}/records:response:200',
    ]);
    expect(result.skipped).toEqual([{
      pointer: '/paths/~1{dataset}~1{version}~1records/post/requestBody/content/application~1x-www-form-urlencoded',
      reason: 'non-JSON media type application/x-www-form-urlencoded',
    }]);
  });

  it('oai-webhook-example: one message operation per webhook, eventType the webhook name', () => {
    const result = importOpenApi(load('oai-webhook-example-v3.1.json'), 'http-webhook');
    expect(result.skipped).toEqual([]);
    expect(result.operations).toEqual([{
      operationKey: 'POST newPet:message:default',
      method: 'POST',
      routeTemplate: 'newPet',
      eventType: 'newPet',
      payloadLocation: 'message',
      statusSelector: 'default',
      fingerprint: expect.stringMatching(FINGERPRINT_PATTERN),
      schema: {
        $ref: '#/$defs/Pet',
        $defs: { Pet: { required: ['id', 'name'], properties: { id: { type: 'integer' }, name: { type: 'string' }, tag: { type: 'string' } } } },
      },
    }]);
  });

  it('redocly-museum: composition and image/png are skipped, problem+json responses are imported', () => {
    const document = load('redocly-museum-v3.1.json');
    const result = importOpenApi(document, 'http-api');
    expect(result.skipped).toEqual([
      { pointer: '/paths/~1tickets/post/requestBody/content/application~1json', reason: 'composition keyword allOf at /components/schemas/BuyMuseumTickets/allOf' },
      { pointer: '/paths/~1tickets/post/responses/201/content/application~1json', reason: 'composition keyword allOf at /components/schemas/MuseumTicketsConfirmation/allOf' },
      { pointer: '/paths/~1tickets~1{ticketId}~1qr/get/responses/200/content/image~1png', reason: 'non-JSON media type image/png' },
    ]);
    const problem = byKey(result, 'GET /museum-hours:response:400');
    expect(problem.schema.$ref).toBe('#/$defs/Error');
    expect(keys(result)).toContain('POST /special-events:response:201');
    expect(keys(result)).not.toContain('POST /tickets:request:default');
    expect(keys(result)).not.toContain('POST /tickets:response:201');
    // The webhook of the same document belongs to http-webhook only.
    expect(keys(result).some((key) => key.includes('publishNewEvent'))).toBe(false);
    const webhooks = importOpenApi(document, 'http-webhook');
    expect(keys(webhooks)).toEqual(['POST publishNewEvent:message:default']);
    expect(webhooks.operations[0].fingerprint).toBe(byKey(result, 'POST /special-events:request:default').fingerprint);
  });

  it('oai-petstore-expanded: the allOf in Pet skips exactly the three payloads that reach it', () => {
    const result = importOpenApi(load('oai-petstore-expanded-v3.0.json'), 'http-api');
    const reason = 'composition keyword allOf at /components/schemas/Pet/allOf';
    expect(result.skipped).toEqual([
      { pointer: '/paths/~1pets/get/responses/200/content/application~1json', reason },
      { pointer: '/paths/~1pets/post/responses/200/content/application~1json', reason },
      { pointer: '/paths/~1pets~1{id}/get/responses/200/content/application~1json', reason },
    ]);
    expect(keys(result)).toEqual(['DELETE /pets/{id}:response:default', 'GET /pets/{id}:response:default', 'GET /pets:response:default', 'POST /pets:request:default', 'POST /pets:response:default']);
  });

  it('documents without schemas are refused: nothing importable', () => {
    const examples = rejection(() => importOpenApi(load('oai-api-with-examples-v3.0.json'), 'http-api'));
    expect(examples.reason).toBe('no importable operations: 4 payload(s) left out, first: no schema');
    expect(examples.pointers).toEqual([
      '/paths/~1/get/responses/200/content/application~1json',
      '/paths/~1/get/responses/300/content/application~1json',
      '/paths/~1v2/get/responses/200/content/application~1json',
      '/paths/~1v2/get/responses/203/content/application~1json',
    ]);
    const scopes = rejection(() => importOpenApi(load('oai-non-oauth-scopes-v3.1.json'), 'http-api'));
    expect(scopes).toEqual({ reason: 'no importable operations: no entry of paths declares a JSON payload', pointers: ['/paths'] });
  });

  it('swagger-petstore 3.1: the $id/$anchor reference and the null $ref leave nothing importable', () => {
    const error = rejection(() => importOpenApi(load('swagger-petstore-v3.1.json'), 'http-api'));
    expect(error.reason).toBe('no importable operations: 7 payload(s) left out, first: invalid reference (not a string) at /components/schemas/Pet/properties/petDetails/$ref');
    expect(error.pointers).toContain('/paths/~1pet/post/requestBody/content/application~1json');
    // With the null $ref repaired, the $id-based reference is what remains: a remote reference.
    const document = load('swagger-petstore-v3.1.json');
    delete ((document.components as any).schemas.Pet.properties as Record<string, unknown>).petDetails;
    const again = rejection(() => importOpenApi(document, 'http-webhook'));
    expect(again.reason).toBe('no importable operations: 1 payload(s) left out, first: remote reference /components/schemas/petdetails#pet_details_id at /components/schemas/Pet/properties/petDetailsId/$ref');
    expect(again.pointers).toEqual(['/webhooks/newPet/post/requestBody/content/application~1json']);
  });
});

describe('importOpenApi: recursive schemas', () => {
  const cycleMembers = (file: string) => new Set(entry(file).cycles.flat().map((ref) => ref.replace('#/components/schemas/', '')));

  it('keycloak: recursive groups and policies are stored once in $defs and reference themselves', () => {
    const result = importOpenApi(load('keycloak-admin-21.1.2-v3.0.json'), 'http-api');
    const group = result.operations.find((operation) => Object.hasOwn((operation.schema.$defs ?? {}) as object, 'GroupRepresentation'));
    expect(group).toBeDefined();
    const defs = (group as ImportedOperation).schema.$defs as Record<string, any>;
    expect(defs.GroupRepresentation.properties.subGroups).toEqual({ type: 'array', items: { $ref: '#/$defs/GroupRepresentation' } });
    const policy = result.operations.find((operation) => Object.hasOwn((operation.schema.$defs ?? {}) as object, 'PolicyRepresentation'));
    const policyDefs = (policy as ImportedOperation).schema.$defs as Record<string, unknown>;
    for (const member of cycleMembers('keycloak-admin-21.1.2-v3.0.json')) {
      if (member !== 'GroupRepresentation') expect(Object.keys(policyDefs)).toContain(member);
    }
    expect(JSON.stringify(policyDefs.ResourceRepresentation)).toContain('"#/$defs/ScopeRepresentation"');
    expect(JSON.stringify(policyDefs.ScopeRepresentation)).toContain('"#/$defs/PolicyRepresentation"');
  });

  for (const file of ['qdrant-v3.0.json', 'discord-v3.1.json']) {
    it(`${file}: import terminates; the recursive groups need composition, so their payloads are skipped`, () => {
      const result = importOpenApi(load(file), 'http-api');
      const members = cycleMembers(file);
      for (const operation of result.operations) {
        for (const name of Object.keys((operation.schema.$defs ?? {}) as object)) expect(members.has(name)).toBe(false);
      }
      expect(result.skipped.filter((skip) => skip.reason.startsWith('composition keyword')).length).toBeGreaterThan(0);
    });
  }

  it('self, mutual and additionalProperties recursion terminate with one definition each', () => {
    const document = openapi('3.0.3', {
      '/trees': { get: { responses: { 200: json({ $ref: '#/components/schemas/Tree' }) } } },
      '/a': { post: { requestBody: json({ $ref: '#/components/schemas/A' }), responses: { 204: { description: 'none' } } } },
      '/maps': { get: { responses: { 200: json({ type: 'object', additionalProperties: { $ref: '#/components/schemas/Map' } }) } } },
    }, {
      Tree: { type: 'object', properties: { children: { type: 'array', items: { $ref: '#/components/schemas/Tree' } } } },
      A: { type: 'object', properties: { b: { $ref: '#/components/schemas/B' } } },
      B: { type: 'object', properties: { a: { $ref: '#/components/schemas/A' } } },
      Map: { type: 'object', additionalProperties: { $ref: '#/components/schemas/Map' } },
    });
    const result = importOpenApi(document, 'http-api');
    expect(result.skipped).toEqual([]);
    expect(byKey(result, 'GET /trees:response:200').schema).toEqual({
      $ref: '#/$defs/Tree',
      $defs: { Tree: { type: 'object', properties: { children: { type: 'array', items: { $ref: '#/$defs/Tree' } } } } },
    });
    expect(byKey(result, 'POST /a:request:default').schema).toEqual({
      $ref: '#/$defs/A',
      $defs: { A: { type: 'object', properties: { b: { $ref: '#/$defs/B' } } }, B: { type: 'object', properties: { a: { $ref: '#/$defs/A' } } } },
    });
    expect(byKey(result, 'GET /maps:response:200').schema).toEqual({
      type: 'object',
      additionalProperties: { $ref: '#/$defs/Map' },
      $defs: { Map: { type: 'object', additionalProperties: { $ref: '#/$defs/Map' } } },
    });
    expect(keys(result)).not.toContain('POST /a:response:204');
  });

  it('a reference cycle without any schema is skipped', () => {
    const document = openapi('3.1.0', {
      '/loop': { get: { responses: { 200: json({ $ref: '#/components/schemas/P' }), 201: json({ type: 'string' }) } } },
    }, { P: { $ref: '#/components/schemas/Q' }, Q: { $ref: '#/components/schemas/P' } });
    const result = importOpenApi(document, 'http-api');
    expect(keys(result)).toEqual(['GET /loop:response:201']);
    expect(result.skipped).toEqual([{
      pointer: '/paths/~1loop/get/responses/200/content/application~1json',
      reason: 'reference cycle without a schema at /components/schemas/P/$ref',
    }]);
  });
});

function openapi(version: string, paths: Record<string, unknown>, schemas: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) {
  return { openapi: version, info: { title: 't', version: '1' }, paths, components: { schemas }, ...extra };
}

function json(schema: unknown, mediaType = 'application/json') {
  return { description: 'payload', content: { [mediaType]: { schema } } };
}

/** Imports one inline response schema and returns its stored schema, or the skip reason. */
function storedFor(schema: unknown, version = '3.0.3', schemas: Record<string, unknown> = {}): Record<string, unknown> | string {
  const result = importOpenApi(openapi(version, {
    '/probe': { get: { responses: { 200: json(schema), 299: json({ type: 'string' }) } } },
  }, schemas), 'http-api');
  const operation = result.operations.find((item) => item.statusSelector === '200');
  if (operation) {
    expectOperationInvariants(operation);
    return operation.schema;
  }
  expect(result.skipped.length).toBe(1);
  expect(result.skipped[0].pointer).toBe('/paths/~1probe/get/responses/200/content/application~1json');
  return result.skipped[0].reason;
}

describe('importOpenApi: the schema subset', () => {
  it('drops annotations and value constraints, keeps the subset', () => {
    expect(storedFor({
      type: 'object',
      title: 'Order', description: 'd', example: { id: 1 }, examples: [1], default: {}, deprecated: true,
      readOnly: true, writeOnly: false, xml: { name: 'o' }, externalDocs: { url: 'x' }, 'x-internal': true,
      discriminator: { propertyName: 'kind' }, minProperties: 1, maxProperties: 9, $comment: 'c',
      required: ['id', 'amount', 'id'],
      additionalProperties: false,
      properties: {
        id: { type: 'string', format: 'uuid', pattern: '^[a-f0-9-]+$', minLength: 36, maxLength: 36 },
        amount: { type: 'number', minimum: 0, maximum: 10, exclusiveMinimum: true, multipleOf: 0.01 },
        tags: { type: 'array', items: { type: 'string', enum: ['a', 'b'] }, minItems: 1, maxItems: 3, uniqueItems: true, contains: { type: 'string' } },
        meta: { type: 'object', additionalProperties: { type: 'integer' }, propertyNames: { pattern: '^x' }, dependentRequired: { a: ['b'] } },
        $ref: { type: 'string' },
        allOf: { type: 'boolean' },
      },
    })).toEqual({
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
    expect(storedFor({ type: 'object', properties: { a: true, b: false } }, '3.1.0')).toEqual({ type: 'object', properties: { a: {}, b: false } });
    expect(storedFor(true, '3.1.0')).toEqual({});
    expect(storedFor(false, '3.1.0')).toEqual({ enum: [] });
    expect(storedFor({ required: [] })).toEqual({});
  });

  it('skips payloads whose schema needs composition, remote references or unsupported keywords', () => {
    for (const keyword of ['allOf', 'oneOf', 'anyOf']) {
      expect(storedFor({ type: 'object', properties: { a: { [keyword]: [{ type: 'string' }] } } })).toBe(`composition keyword ${keyword} at /paths/~1probe/get/responses/200/content/application~1json/schema/properties/a/${keyword}`);
    }
    expect(storedFor({ not: { type: 'string' } })).toBe('composition keyword not at /paths/~1probe/get/responses/200/content/application~1json/schema/not');
    expect(storedFor({ $ref: 'https://example.com/pet.json' })).toBe('remote reference https://example.com/pet.json at /paths/~1probe/get/responses/200/content/application~1json/schema/$ref');
    expect(storedFor({ $ref: 'pet.yaml#/Pet' })).toBe('remote reference pet.yaml#/Pet at /paths/~1probe/get/responses/200/content/application~1json/schema/$ref');
    expect(storedFor({ $ref: '#pet' }, '3.1.0')).toMatch(/^unsupported reference #pet/);
    expect(storedFor({ $ref: '#/components/schemas/Missing' })).toBe('unresolved reference #/components/schemas/Missing at /paths/~1probe/get/responses/200/content/application~1json/schema/$ref');
    expect(storedFor({ $ref: '#' })).toMatch(/^invalid reference #/);
    expect(storedFor({ $ref: '#/components/schemas/%' })).toMatch(/^invalid reference/);
    for (const keyword of ['patternProperties', 'prefixItems', 'unevaluatedProperties', 'if', 'dependentSchemas', '$dynamicRef']) {
      expect(storedFor({ type: 'object', [keyword]: {} }, '3.1.0')).toBe(`unsupported keyword ${keyword} at /paths/~1probe/get/responses/200/content/application~1json/schema/${keyword}`);
    }
    expect(storedFor({ type: 'array', items: [{ type: 'string' }] })).toMatch(/^unsupported keyword items \(array form\)/);
    expect(storedFor({ type: 'file' })).toMatch(/^unsupported type file at /);
    expect(storedFor({ type: [] }, '3.1.0')).toMatch(/^invalid type at /);
    expect(storedFor({ required: true })).toMatch(/^invalid required/);
    expect(storedFor({ properties: [] })).toMatch(/^invalid properties/);
    expect(storedFor({ enum: 'a' })).toMatch(/^invalid enum/);
    expect(storedFor({ properties: { a: 'string' } })).toMatch(/^invalid schema .* at .*\/properties\/a$/);
    // A problem deep inside a referenced component is named at its own location.
    expect(storedFor({ $ref: '#/components/schemas/Outer' }, '3.0.3', {
      Outer: { type: 'object', properties: { inner: { $ref: '#/components/schemas/Inner' } } },
      Inner: { type: 'object', properties: { v: { oneOf: [{ type: 'string' }, { type: 'integer' }] } } },
    })).toBe('composition keyword oneOf at /components/schemas/Inner/properties/v/oneOf');
  });

  it('reports the first problem by pointer, whatever the key order of the document', () => {
    const a = storedFor({ type: 'object', properties: { b: { anyOf: [] }, a: { allOf: [] } } });
    const b = storedFor({ properties: { a: { allOf: [] }, b: { anyOf: [] } }, type: 'object' });
    expect(a).toBe(b);
    expect(a).toMatch(/properties\/a\/allOf$/);
  });

  it('ignores $ref siblings in 3.0 and applies them in 3.1', () => {
    const schemas = { Pet: { type: 'object', properties: { id: { type: 'integer' } } } };
    const sibling = { $ref: '#/components/schemas/Pet', required: ['id'], description: 'annotation', nullable: true };
    expect(storedFor(sibling, '3.0.3', schemas)).toEqual({ $ref: '#/$defs/Pet', $defs: { Pet: schemas.Pet } });
    expect(storedFor(sibling, '3.1.0', schemas)).toEqual({ $ref: '#/$defs/Pet', required: ['id'], $defs: { Pet: schemas.Pet } });
    expect(storedFor({ $ref: '#/components/schemas/Pet', allOf: [] }, '3.0.3', schemas)).toEqual({ $ref: '#/$defs/Pet', $defs: { Pet: schemas.Pet } });
    expect(storedFor({ $ref: '#/components/schemas/Pet', allOf: [] }, '3.1.0', schemas)).toMatch(/^composition keyword allOf/);
  });

  it('names definitions after their pointer: escaped, percent-decoded, collision-free', () => {
    // Parsed from text, as a request body is, so `__proto__` is an own member.
    const document = JSON.parse(JSON.stringify(openapi('3.0.3', {
      '/n': { get: { responses: { 200: json({
        type: 'object',
        properties: {
          a: { $ref: '#/components/schemas/a~1b~0c' },
          p: { $ref: '#/components/schemas/Plain' },
          p2: { $ref: '#/components/schemas/%50lain' },
          s: { $ref: '#/components/schemas/with%20space' },
          proto: { $ref: '#/components/schemas/__proto__' },
          inline: { $ref: '#/paths/~1n/get/responses/201/content/application~1json/schema' },
        },
      }), 201: json({ type: 'number' }) } } },
    }, { 'a/b~c': { type: 'string' }, Plain: { type: 'integer' }, 'with space': { type: 'boolean' }, PROTO: { type: 'null' } })).replace('"PROTO"', '"__proto__"'));
    const result = importOpenApi(document, 'http-api');
    const schema = byKey(result, 'GET /n:response:200').schema as any;
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
    expect(schema.$defs.__proto__).toEqual({ type: 'null' });
  });
});

describe('importOpenApi: operations, media types and status selectors', () => {
  it('prefers application/json, then the first +json type, and reads charset parameters', () => {
    const document = openapi('3.0.3', {
      '/m': {
        get: { responses: {
          200: { description: 'x', content: { 'application/vnd.api+json': { schema: { type: 'integer' } }, 'application/json': { schema: { type: 'string' } }, 'application/xml': { schema: { type: 'boolean' } } } },
          201: { description: 'x', content: { 'application/vnd.b+json': { schema: { type: 'boolean' } }, 'application/problem+json': { schema: { type: 'integer' } } } },
          202: { description: 'x', content: { 'application/json; charset=utf-8': { schema: { type: 'number' } }, 'text/plain': {} } },
          203: { description: 'x', content: { 'APPLICATION/JSON': { schema: { type: 'null' } } } },
        } },
      },
    });
    const result = importOpenApi(document, 'http-api');
    expect(result.operations.map((operation) => [operation.statusSelector, operation.schema])).toEqual([
      ['200', { type: 'string' }], ['201', { type: 'integer' }], ['202', { type: 'number' }], ['203', { type: 'null' }],
    ]);
    expect(result.skipped).toEqual([]);
    expect(isJsonMediaType('application/merge-patch+json')).toBe(true);
    expect(isJsonMediaType('text/json')).toBe(false);
    expect(isJsonMediaType('image/svg+xml')).toBe(false);
    expect(isJsonMediaType('application/jsonl')).toBe(false);
    expect(isJsonMediaType('*/*')).toBe(false);
  });

  it('lists every non-JSON media type of a payload that has no JSON one; payloads without content are not listed', () => {
    const result = importOpenApi(openapi('3.0.3', {
      '/files': {
        get: { responses: { 200: { description: 'x', content: { 'text/plain': {}, 'application/octet-stream': {} } }, 204: { description: 'empty' }, 304: { description: 'x', content: {} } } },
        put: { requestBody: json({ type: 'object' }), responses: { 204: { description: 'stored' } } },
      },
    }), 'http-api');
    expect(keys(result)).toEqual(['PUT /files:request:default']);
    expect(result.skipped).toEqual([
      { pointer: '/paths/~1files/get/responses/200/content/application~1octet-stream', reason: 'non-JSON media type application/octet-stream' },
      { pointer: '/paths/~1files/get/responses/200/content/text~1plain', reason: 'non-JSON media type text/plain' },
    ]);
  });

  it('normalises status selectors and skips duplicates and invalid codes', () => {
    const result = importOpenApi(openapi('3.0.3', {
      '/s': { get: { responses: {
        '2xx': json({ type: 'string' }), '2XX': json({ type: 'integer' }), '4xx': json({ type: 'boolean' }), Default: json({ type: 'null' }),
        '600': json({ type: 'string' }), 'x-extension': { whatever: true }, '20': json({ type: 'string' }),
      } } },
    }), 'http-api');
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
  });

  it('resolves local references to path items, request bodies and responses', () => {
    const document = openapi('3.1.0', {
      '/items': { $ref: '#/components/pathItems/Items' },
      '/other': { post: { requestBody: { $ref: '#/components/requestBodies/Item' }, responses: { 404: { $ref: '#/components/responses/NotFound' }, 500: { $ref: 'common.yaml#/responses/Error' } } } },
    }, { Item: { type: 'object', properties: { id: { type: 'string' } } } }, {});
    (document.components as any).pathItems = { Items: { get: { responses: { 200: { $ref: '#/components/responses/Item' } } } } };
    (document.components as any).requestBodies = { Item: json({ $ref: '#/components/schemas/Item' }) };
    (document.components as any).responses = {
      Item: json({ $ref: '#/components/schemas/Item' }),
      NotFound: { description: 'x', content: { 'text/html': {} } },
    };
    const result = importOpenApi(document, 'http-api');
    expect(keys(result)).toEqual(['GET /items:response:200', 'POST /other:request:default']);
    expect(result.skipped).toEqual([
      { pointer: '/components/responses/NotFound/content/text~1html', reason: 'non-JSON media type text/html' },
      { pointer: '/paths/~1other/post/responses/500', reason: 'remote reference common.yaml#/responses/Error' },
    ]);
  });

  it('skips unsupported methods that carry payloads; ignores callbacks, webhooks and x- paths for http-api', () => {
    const result = importOpenApi(openapi('3.1.0', {
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
    }, {}, { webhooks: { ping: { post: { requestBody: json({ type: 'object' }) } } } }), 'http-api');
    expect(keys(result)).toEqual(['GET /h:response:200']);
    expect(result.skipped).toEqual([
      { pointer: '/paths/relative~1path', reason: 'invalid path relative/path (not an absolute path without query)' },
      { pointer: '/paths/~1h/options', reason: 'unsupported method OPTIONS' },
      { pointer: '/paths/~1h/trace', reason: 'unsupported method TRACE' },
      { pointer: '/paths/~1q?x=1', reason: 'invalid path /q?x=1 (not an absolute path without query)' },
    ]);
  });

  it('reads webhooks for http-webhook: request bodies are messages, responses are not imported', () => {
    const result = importOpenApi(openapi('3.1.0', {
      '/api': { get: { responses: { 200: json({ type: 'string' }) } } },
    }, { Event: { type: 'object', required: ['type'], properties: { type: { type: 'string' } } } }, {
      webhooks: {
        'order.created': { post: { requestBody: json({ $ref: '#/components/schemas/Event' }), responses: { 200: json({ type: 'object' }) } } },
        'order.deleted': { put: { requestBody: json({ type: 'object' }, 'application/cloudevents+json') } },
        'order.noop': { post: { responses: { 200: { description: 'ok' } } } },
      },
    }), 'http-webhook');
    expect(result.skipped).toEqual([]);
    expect(result.operations.map(({ operationKey, eventType, payloadLocation, statusSelector, routeTemplate, method }) => ({ operationKey, eventType, payloadLocation, statusSelector, routeTemplate, method }))).toEqual([
      { operationKey: 'POST order.created:message:default', eventType: 'order.created', payloadLocation: 'message', statusSelector: 'default', routeTemplate: 'order.created', method: 'POST' },
      { operationKey: 'PUT order.deleted:message:default', eventType: 'order.deleted', payloadLocation: 'message', statusSelector: 'default', routeTemplate: 'order.deleted', method: 'PUT' },
    ]);
  });

  it('refuses documents that are not OpenAPI 3.0 or 3.1', () => {
    const paths = { '/a': { get: { responses: { 200: json({ type: 'string' }) } } } };
    for (const value of [null, [], 'openapi', 3, true]) {
      expect(rejection(() => importOpenApi(value, 'http-api'))).toEqual({ reason: 'the document is not a JSON object', pointers: [''] });
    }
    const swagger2 = { swagger: '2.0', info: { title: 'x', version: '1' }, produces: ['application/json'], paths: { '/a': { get: { responses: { 200: { description: 'x', schema: { type: 'string' } } } } } } };
    expect(importOpenApi(swagger2, 'http-api')).toMatchObject({ openapiVersion: '2.0', operations: [{ operationKey: 'GET /a:response:200', schema: { type: 'string' } }] });
    expect(rejection(() => importOpenApi({ swagger: '2.0', paths: { '/a': { get: { parameters: 'x' } } } }, 'http-api')).pointers).toEqual(['']);
    expect(rejection(() => importOpenApi({ swagger: '1.2', paths }, 'http-api')).reason)
      .toBe('Swagger 1.2 documents are not supported; supported versions are Swagger 2.0 and OpenAPI 3.0.x and 3.1.x');
    expect(rejection(() => importOpenApi({ paths }, 'http-api'))).toEqual({ reason: 'the document has no openapi version; supported versions are 3.0.x and 3.1.x', pointers: [''] });
    for (const version of ['3.2.0', '2.0', '4.0.0', '3', '3.0.x', 3.1, null, ['3.0.0']]) {
      const error = rejection(() => importOpenApi({ openapi: version, paths }, 'http-api'));
      expect(error.pointers).toEqual(['/openapi']);
      expect(error.reason).toMatch(/^unsupported OpenAPI version .*; supported versions are 3\.0\.x and 3\.1\.x$/);
    }
    for (const version of ['3.0', '3.0.0', '3.0.4', '3.1.0', '3.1.1', '3.1.0-rc1']) {
      expect(importOpenApi({ openapi: version, paths }, 'http-api').operations.length).toBe(1);
    }
    expect(rejection(() => importOpenApi({ openapi: '3.0.3', paths: [] }, 'http-api'))).toEqual({ reason: 'paths is not an object', pointers: ['/paths'] });
    expect(rejection(() => importOpenApi({ openapi: '3.1.0', webhooks: 'x' }, 'http-webhook'))).toEqual({ reason: 'webhooks is not an object', pointers: ['/webhooks'] });
    expect(rejection(() => importOpenApi({ openapi: '3.0.3', paths: {} }, 'http-api'))).toEqual({ reason: 'no importable operations: no entry of paths declares a JSON payload', pointers: ['/paths'] });
    expect(rejection(() => importOpenApi({ openapi: '3.0.3', paths }, 'queue' as never)).reason).toBe('OpenAPI documents can be registered only for http-api and http-webhook Integrations');
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
    $defs: { Line: { type: 'object', properties: { sku: { type: 'string' }, qty: { type: 'integer', minimum: 1 } } }, Unused: { type: 'string' } },
    definitions: { Customer: { type: ['object', 'null'], properties: { name: { type: 'string' } } } },
  };
  const queueSelector = { method: 'POST', routeTemplate: 'orders.created', payloadLocation: 'message', statusSelector: '202' };

  it('imports one operation for the selector with a self-contained schema', () => {
    const operation = importJsonSchema(orderSchema, queueSelector, 'queue');
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
      eventType: null,
      payloadLocation: 'message',
      statusSelector: '202',
      fingerprint: fingerprint(schema),
      schema,
    });
    expectOperationInvariants(operation);
    expect(importJsonSchema(orderSchema, { ...queueSelector, routeTemplate: 'nightly-export' }, 'scheduled-feed').fingerprint).toBe(operation.fingerprint);
    expect(importJsonSchema({ type: 'object' }, { method: 'GET', routeTemplate: '/v1/orders/{id}', payloadLocation: 'response', statusSelector: '2xx' }, 'http-api').operationKey).toBe('GET /v1/orders/{id}:response:2XX');
    expect(importJsonSchema({ type: 'object' }, { method: 'POST', routeTemplate: '/hooks/orders', payloadLocation: 'message', statusSelector: 'default' }, 'http-webhook').operationKey).toBe('POST /hooks/orders:message:default');
  });

  it('refuses remote references and composition with every offending pointer', () => {
    expect(rejection(() => importJsonSchema({ type: 'object', properties: { c: { $ref: 'https://example.com/customer.json' } } }, queueSelector, 'queue'))).toEqual({
      reason: 'remote reference https://example.com/customer.json',
      pointers: ['/properties/c/$ref'],
    });
    expect(rejection(() => importJsonSchema({ allOf: [{ type: 'object' }], properties: { x: { oneOf: [] }, y: { $ref: '#/$defs/Y' } }, $defs: { Y: { anyOf: [] } } }, queueSelector, 'queue'))).toEqual({
      reason: 'composition keyword anyOf (and 2 more)',
      pointers: ['/$defs/Y/anyOf', '/allOf', '/properties/x/oneOf'],
    });
    expect(rejection(() => importJsonSchema({ properties: { a: { $ref: '#/$defs/Nope' } } }, queueSelector, 'queue'))).toEqual({
      reason: 'unresolved reference #/$defs/Nope',
      pointers: ['/properties/a/$ref'],
    });
    expect(rejection(() => importJsonSchema({ $ref: '#' }, queueSelector, 'queue')).reason).toBe('reference cycle without a schema');
  });

  it('ignores $ref siblings for draft-07 schemas and applies them for 2020-12', () => {
    const base = { $defs: { A: { type: 'object' } }, properties: { a: { $ref: '#/$defs/A', required: ['x'] } } };
    const draft7 = importJsonSchema({ ...base, $schema: 'http://json-schema.org/draft-07/schema#' }, queueSelector, 'queue');
    expect((draft7.schema.properties as any).a).toEqual({ $ref: '#/$defs/A' });
    const modern = importJsonSchema(base, queueSelector, 'queue');
    expect((modern.schema.properties as any).a).toEqual({ $ref: '#/$defs/A', required: ['x'] });
  });

  it('refuses a schema that is not an object', () => {
    for (const schema of [null, [], 'string', true, 1]) {
      expect(rejection(() => importJsonSchema(schema, queueSelector, 'queue'))).toEqual({ reason: 'the document is not a JSON Schema object', pointers: [''] });
    }
  });

  it('refuses an invalid selector', () => {
    const cases: [unknown, string, RegExp][] = [
      [undefined, 'queue', /selector .* is required/],
      [{ ...queueSelector, method: 'GET' }, 'queue', /^operation\.method must be POST for queue$/],
      [{ ...queueSelector, method: 'post' }, 'queue', /^operation\.method must be POST/],
      [{ ...queueSelector, method: 'HEAD' }, 'http-webhook', /^operation\.method must be GET or POST or PUT or PATCH or DELETE for http-webhook$/],
      [{ ...queueSelector, payloadLocation: 'response' }, 'scheduled-feed', /^operation\.payloadLocation must be message for scheduled-feed$/],
      [{ ...queueSelector, payloadLocation: 'message', routeTemplate: '/orders' }, 'http-api', /^operation\.payloadLocation must be request or response/],
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
