import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { compileContract } from '../shared/analysis/compile.js';
import type { AnalysedOperation } from '../shared/analysis/types.js';
import { importJsonSchema, importOpenApi } from '../shared/contracts/index.js';
import { MAX_BASE_PATHS } from '../shared/contracts/serverBasePaths.js';
import { CORPUS_DIR, loadCorpusDocument } from './helpers/contracts.js';

// Issue 26, item 1: the servers' path prefixes of each operation, and routes matched with or
// without them.

/** What every operation of each corpus document gets; a document not listed has no path prefix. */
const CORPUS_BASE_PATHS: Record<string, string[]> = {
  'adyen-checkout-v71-v3.1.json': ['/v71'],
  'discord-v3.1.json': ['/api/v10'],
  'nyt-books-swagger-v2.0.json': ['/svc/books/v3'],
  'nyt-most-popular-swagger-v2.0.json': ['/svc/mostpopular/v2'],
  'oai-petstore-expanded-v3.0.json': ['/v2'],
  'oai-petstore-swagger-v2.0.json': ['/v1'],
  'oai-petstore-v3.0.json': ['/v1'],
  'oai-uber-swagger-v2.0.json': ['/v1'],
  // `{scheme}://developer.uspto.gov/ds-api`, scheme ∈ {https, http}: one path.
  'oai-uspto-v3.0.json': ['/ds-api'],
  'openai-2024-04-v3.0.json': ['/v1'],
  'redocly-museum-v3.1.json': ['/_mock/docs/openapi/museum-api'],
  'slack-web-swagger-v2.0.json': ['/api'],
  'swagger-petstore-v3.0.json': ['/api/v3'],
  // A relative server URL.
  'swagger-petstore-v3.1.json': ['/api/v31'],
};

const corpusFiles = readdirSync(CORPUS_DIR)
  .filter((file) => file.endsWith('.json') && file !== 'manifest.json')
  .sort();
const protocolOf = (file: string) => (file.includes('webhook') ? 'http-webhook' : 'http-api');

const api = (servers: unknown, extra: { pathServers?: unknown; operationServers?: unknown } = {}) => ({
  openapi: '3.1.0',
  info: { title: 't', version: '1' },
  ...(servers === undefined ? {} : { servers }),
  paths: {
    '/models': {
      ...(extra.pathServers === undefined ? {} : { servers: extra.pathServers }),
      get: {
        ...(extra.operationServers === undefined ? {} : { servers: extra.operationServers }),
        responses: { '200': { description: 'ok' } },
      },
      post: { responses: { '201': { description: 'ok' } } },
    },
    '/files': { get: { responses: { '200': { description: 'ok' } } } },
  },
});

function basePathsByKey(document: unknown): Record<string, string[]> {
  return Object.fromEntries(importOpenApi(document, 'http-api').operations.map((op) => [op.operationKey, op.basePaths]));
}

describe('server base paths at import', () => {
  it('covers the corpus documents named in the table', () => {
    for (const file of Object.keys(CORPUS_BASE_PATHS)) expect(corpusFiles).toContain(file);
  });

  it.each(corpusFiles)('%s: every operation has the base paths its servers declare', (file) => {
    const result = importOpenApi(loadCorpusDocument(file), protocolOf(file));
    const expected = protocolOf(file) === 'http-api' ? (CORPUS_BASE_PATHS[file] ?? []) : [];
    expect(new Set(result.operations.map((op) => JSON.stringify(op.basePaths)))).toEqual(new Set([JSON.stringify(expected)]));
    expect(result.skipped.filter((entry) => /servers/.test(entry.pointer))).toEqual([]);
  });

  it('expands server variables from their default and enum values', () => {
    const servers = [
      {
        url: '{scheme}://{region}.api.example.test/{version}/',
        variables: {
          scheme: { default: 'https', enum: ['https', 'http'] },
          region: { default: 'eu' },
          version: { default: 'v2', enum: ['v1', 'v2'] },
        },
      },
    ];
    expect(basePathsByKey(api(servers))['GET /models:response:200']).toEqual(['/v1', '/v2']);
  });

  it('takes the most specific level that declares servers: operation, then path item, then document', () => {
    const byKey = basePathsByKey(
      api([{ url: 'https://api.example.test/v1' }], {
        pathServers: [{ url: '/path-level' }],
        operationServers: [{ url: 'https://other.example.test/op/level' }, { url: 'https://root.example.test' }],
      }),
    );
    expect(byKey).toEqual({
      'GET /models:response:200': ['/op/level'],
      'POST /models:response:201': ['/path-level'],
      'GET /files:response:200': ['/v1'],
    });
    // An empty array declares nothing: the next level up applies.
    expect(basePathsByKey(api([{ url: '/v1' }], { operationServers: [] }))['GET /models:response:200']).toEqual(['/v1']);
  });

  it('reads relative URLs as paths and servers at the root as no prefix', () => {
    expect(basePathsByKey(api([{ url: 'v1' }, { url: './api/v2/' }]))['GET /files:response:200']).toEqual(['/api/v2', '/v1']);
    expect(basePathsByKey(api([{ url: 'https://api.example.test/' }, { url: '/' }, { url: '' }]))['GET /files:response:200']).toEqual([]);
    expect(basePathsByKey(api(undefined))['GET /files:response:200']).toEqual([]);
  });

  it('lists a server it cannot read in skipped, with its pointer, and uses the others', () => {
    const result = importOpenApi(
      api([
        { url: 'https://api.example.test/v1' },
        { url: 'http://[broken/v9' },
        { url: 'https://{tenant}.example.test/v8' },
        { url: 42 },
        'https://not-an-object.test',
      ]),
      'http-api',
    );
    expect(result.operations.every((op) => JSON.stringify(op.basePaths) === '["/v1"]')).toBe(true);
    expect(result.skipped).toEqual([
      { pointer: '/servers/1/url', reason: 'invalid server URL http://[broken/v9' },
      { pointer: '/servers/2/url', reason: 'server variable tenant has no default or enum value' },
      { pointer: '/servers/3', reason: 'invalid server (url is not a string)' },
      { pointer: '/servers/4', reason: 'invalid server (not an object)' },
    ]);
  });

  it(`keeps at most ${MAX_BASE_PATHS} base paths per operation and says so`, () => {
    const versions = Array.from({ length: 40 }, (_, i) => `v${i}`);
    const result = importOpenApi(api([{ url: '/{version}', variables: { version: { default: 'v0', enum: versions } } }]), 'http-api');
    const kept = result.operations[0].basePaths;
    expect(kept).toHaveLength(MAX_BASE_PATHS);
    expect(kept).toContain('/v0');
    expect(result.skipped).toEqual([
      { pointer: '/servers', reason: `servers declare more than ${MAX_BASE_PATHS} base paths; the first ${MAX_BASE_PATHS} were kept` },
    ]);
  });

  it('converts Swagger 2.0 basePath; a json-schema contract and webhooks have none', () => {
    const swagger = (basePath: string) => ({
      swagger: '2.0',
      info: { title: 't', version: '1' },
      host: 'api.example.test',
      basePath,
      paths: { '/pets': { get: { responses: { '200': { description: 'ok' } } } } },
    });
    expect(importOpenApi(swagger('/v2/'), 'http-api').operations[0].basePaths).toEqual(['/v2']);
    expect(importOpenApi(swagger('/'), 'http-api').operations[0].basePaths).toEqual([]);
    const selector = { method: 'GET', routeTemplate: '/models', payloadLocation: 'response', statusSelector: '200' };
    expect(importJsonSchema({ type: 'object' }, selector, 'http-api').basePaths).toEqual([]);
    const webhooks = {
      openapi: '3.1.0',
      info: { title: 't', version: '1' },
      servers: [{ url: 'https://api.example.test/v1' }],
      webhooks: { 'order.paid': { post: { requestBody: { content: { 'application/json': { schema: { type: 'object' } } } } } } },
    };
    expect(importOpenApi(webhooks, 'http-webhook').operations[0].basePaths).toEqual([]);
  });
});

function operation(id: string, routeTemplate: string, basePaths: string[], statusSelector = '200'): AnalysedOperation {
  return {
    id,
    operationKey: `GET ${routeTemplate}:response:${statusSelector}`,
    method: 'GET',
    routeTemplate,
    basePaths,
    payloadLocation: 'response',
    statusSelector,
    schema: {},
  };
}

const observed = (routeTemplate: string, statusCode = 200) => ({ method: 'GET', routeTemplate, payloadLocation: 'response', statusCode });

describe('matching with and without the base path', () => {
  it('matches an observed route with or without one of the operation base paths in front', () => {
    const contract = compileContract([operation('models', '/models/{model}', ['/v1', '/v2']), operation('root', '/', ['/v1'])]);
    for (const route of ['/models/{model}', '/v1/models/{model}', '/v2/models/{model}'])
      expect(contract.match(observed(route))?.id, route).toBe('models');
    expect(contract.match(observed('/v1'))?.id).toBe('root');
    expect(contract.match(observed('/v1/'))?.id).toBe('root');
    for (const route of ['/v10/models/{model}', '/v3/models/{model}', '/v1models/{model}', '/v1/v1/models/{model}'])
      expect(contract.match(observed(route)), route).toBeNull();
    // The status selector still applies under a base path.
    expect(contract.match(observed('/v1/models/{model}', 404))).toBeNull();
  });

  it('uses a base path only for the operations that declare it', () => {
    const contract = compileContract([operation('a', '/models', ['/v1']), operation('b', '/files', [])]);
    expect(contract.match(observed('/v1/models'))?.id).toBe('a');
    expect(contract.match(observed('/v1/files'))).toBeNull();
    // Operations stored before issue 26 carry no base paths.
    const legacy = compileContract([{ ...operation('c', '/models', []), basePaths: undefined }]);
    expect(legacy.match(observed('/models'))?.id).toBe('c');
  });

  it('prefers a route declared as observed, then the longest base path', () => {
    const contract = compileContract([
      operation('prefixed', '/models', ['/v1']),
      operation('declared', '/v1/models', []),
      operation('short', '/v3/pets', ['/api']),
      operation('long', '/pets', ['/api/v3']),
    ]);
    expect(contract.match(observed('/v1/models'))?.id).toBe('declared');
    expect(contract.match(observed('/models'))?.id).toBe('prefixed');
    expect(contract.match(observed('/api/v3/pets'))?.id).toBe('long');
  });

  it('matches the OpenAI document with and without /v1', () => {
    const imported = importOpenApi(loadCorpusDocument('openai-2024-04-v3.0.json'), 'http-api').operations;
    const contract = compileContract(imported.map((op, i) => ({ ...op, id: `op${i}`, uncheckedPointers: [] })));
    expect(contract.match(observed('/v1/models'))?.operationKey).toBe('GET /models:response:200');
    expect(contract.match(observed('/models'))?.operationKey).toBe('GET /models:response:200');
    expect(contract.match(observed('/v1/models/{model}'))?.operationKey).toBe('GET /models/{model}:response:200');
  });
});
