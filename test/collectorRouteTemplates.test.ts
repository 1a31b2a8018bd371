import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import express from 'express';
import type { ClickHouseClient } from '../shared/clickhouse/client.js';
import { sqlLiteral } from '../shared/clickhouse/escape.js';
import * as lib from '../collector/src/index.js';
import * as instrument from '../collector/src/instrument/index.js';
import { learnedContract } from '../collector/src/contractRoutes.js';
import type { TestContext } from './helpers/context.js';
import { startEdgeFixture, type EdgeFixture } from './helpers/edgeFixture.js';
import { activateOk, openApiRegistration, registerDraft } from './helpers/contracts.js';
import { checkConnection, createCollector, type Collector as IntegrationConfig, type Edge } from './helpers/ingest.js';
import { waitFor } from './helpers/wait.js';

// Issue 26 item 2: the connection check answers the active contract's route templates and base
// paths, and the collector's instrumentation templatises concrete paths with them (the OpenAI
// case: `/v1/models/gpt-4o` → `/models/{model}` with no `routes` option); `routeTemplate` and
// `routes` still win. The edge is the real one (in-process, as in collectorInstrument.test.ts), the
// contracts are registered and activated through the management plane.

let fixture: EdgeFixture;
let ctx: TestContext;
let clickhouse: ClickHouseClient;
let edge: Edge;
let apiKey: string;
let vendor: http.Server;
let vendorOrigin: string;
const opened: lib.Collector[] = [];

beforeAll(async () => {
  fixture = await startEdgeFixture();
  ({ ctx, clickhouse, edge, apiKey } = fixture);
  vendor = http.createServer((request, response) => {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ id: 'x', object: 'model', path: request.url }));
  });
  await new Promise<void>((resolve) => vendor.listen(0, '127.0.0.1', resolve));
  vendorOrigin = `http://127.0.0.1:${(vendor.address() as AddressInfo).port}`;
}, 60_000);

afterAll(async () => {
  await Promise.all(opened.map((collector) => collector.close(2_000)));
  await new Promise((resolve) => vendor?.close(resolve));
  await fixture?.close();
});

const json = { content: { 'application/json': { schema: { type: 'object', properties: { id: { type: 'string' } } } } } };

/** An OpenAPI document of GET operations on these paths. */
function documentOf(title: string, paths: string[]): Record<string, unknown> {
  return {
    openapi: '3.1.0',
    info: { title, version: '1' },
    paths: Object.fromEntries(paths.map((path) => [path, { get: { responses: { '200': { description: 'ok', ...json } } } }])),
  };
}

/** Registers a document served under `basePaths` (its `servers`) and activates it. */
async function activate(
  config: IntegrationConfig,
  declaredVersion: string,
  document: Record<string, unknown>,
  previous: string | null,
  basePaths: string[] = ['/v1'],
): Promise<string> {
  const servers = basePaths.map((basePath) => ({ url: `https://api.vendor.test${basePath}` }));
  const draft = await registerDraft(ctx, apiKey, config.connectionId, openApiRegistration(declaredVersion, { ...document, servers }));
  await activateOk(ctx, apiKey, config.connectionId, draft.contract.id, { expectedActiveContractVersionId: previous, reason: 'promote' });
  return draft.contract.id;
}

/** The route templates stored for a connection, once `count` rows are there. */
async function storedRoutes(connectionId: string, count: number): Promise<string[]> {
  return waitFor(
    async () => {
      const result = await clickhouse.query({
        query: `SELECT method, route_template FROM observations FINAL WHERE connection_id = ${sqlLiteral(connectionId)}`,
        format: 'JSONEachRow',
      });
      const rows = await result.json<{ method: string; route_template: string }>();
      return rows.length >= count ? rows.map((row) => `${row.method} ${row.route_template}`).sort() : undefined;
    },
    20_000,
    `${count} rows`,
  );
}

function libraryCollector(config: IntegrationConfig, options: Partial<lib.CollectorOptions> = {}): lib.Collector {
  const collector = lib.createCollector({
    endpoint: edge.url,
    integrationKey: config.integrationKey,
    connectionKey: config.connectionKey,
    ingestToken: config.ingestToken,
    direction: config.direction,
    protocol: config.protocol,
    flushIntervalMs: 60_000,
    ...options,
  });
  opened.push(collector);
  return collector;
}

describe("the connection check answers the active contract's routes", () => {
  it('answers no routes without an active version, then the distinct routes and base paths of the active one', async () => {
    const config = await createCollector(ctx, apiKey, { protocol: 'http-api', name: 'openai-like' });
    expect((await checkConnection(edge, config)).body).toMatchObject({ activeContractVersionId: null, routes: [], routesTruncated: false });

    const document = documentOf('Models', ['/models', '/models/{model}']);
    (document.paths as Record<string, Record<string, unknown>>)['/models/{model}'].delete = {
      responses: { '200': { description: 'ok', ...json } },
    };
    const v1 = await activate(config, '1', document, null);
    const first = await checkConnection(edge, config);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ connectionId: config.connectionId, credentialStatus: 'active' });
    // In import order (operation keys sorted): compared as a set.
    const byRoute = (a: { method: string; routeTemplate: string }, b: { method: string; routeTemplate: string }) =>
      `${a.method} ${a.routeTemplate}`.localeCompare(`${b.method} ${b.routeTemplate}`);
    expect({
      id: first.body?.activeContractVersionId,
      routes: [...first.body!.routes!].sort(byRoute),
      truncated: first.body?.routesTruncated,
    }).toStrictEqual({
      id: v1,
      routes: [
        { method: 'DELETE', routeTemplate: '/models/{model}', basePaths: ['/v1'] },
        { method: 'GET', routeTemplate: '/models', basePaths: ['/v1'] },
        { method: 'GET', routeTemplate: '/models/{model}', basePaths: ['/v1'] },
      ],
      truncated: false,
    });
    // A second check (answered from the edge's cache of this version) says the same.
    expect((await checkConnection(edge, config)).body).toStrictEqual(first.body);

    // Another version activated: the next check names it and its routes (base paths united per route).
    const draft = await registerDraft(
      ctx,
      apiKey,
      config.connectionId,
      openApiRegistration('2', documentOf('Engines', ['/engines/{engine}', '/files'])),
    );
    await ctx.deps.pool.query(
      `UPDATE contract_operations SET base_paths = CASE WHEN route_template = '/files' THEN '{}'::text[] ELSE '{/v1,/beta}'::text[] END WHERE contract_version_id = $1`,
      [draft.contract.id],
    );
    await activateOk(ctx, apiKey, config.connectionId, draft.contract.id, { expectedActiveContractVersionId: v1, reason: 'promote' });
    const second = (await checkConnection(edge, config)).body!;
    expect(second.activeContractVersionId).toBe(draft.contract.id);
    expect([...second.routes!].sort(byRoute)).toStrictEqual([
      { method: 'GET', routeTemplate: '/engines/{engine}', basePaths: ['/beta', '/v1'] },
      { method: 'GET', routeTemplate: '/files', basePaths: [] },
    ]);
  });
});

describe('the collector templatises paths with the learned routes', () => {
  it('records /v1/models/gpt-4o as /models/{model} with no routes option, and follows a new activation without restart', {
    timeout: 60_000,
  }, async () => {
    const config = await createCollector(ctx, apiKey, { protocol: 'http-api', name: 'openai-app' });
    const v1 = await activate(config, '1', documentOf('Models', ['/models', '/models/{model}']), null);
    const collector = libraryCollector(config, { contractRefreshIntervalMs: 1_000 });
    await waitFor(() => (collector.counters().contractVersionId === v1 ? true : undefined), 10_000, 'the active version learned');

    const vendorFetch = instrument.observeFetch(collector, globalThis.fetch, { origins: [vendorOrigin] });
    for (const path of ['/v1/models/gpt-4o', '/v1/models', '/models/gpt-4o-mini', '/v1/unknown/thing'])
      await (await vendorFetch(`${vendorOrigin}${path}?q=1`)).json();
    await waitFor(() => (collector.counters().observed >= 4 ? true : undefined), 10_000, '4 observations');
    await collector.flush();
    expect(await storedRoutes(config.connectionId, 4)).toStrictEqual([
      'GET /models',
      'GET /models/{model}',
      'GET /models/{model}',
      'GET /v1/unknown/thing',
    ]);

    // A new version activated while the collector runs: the next checks learn it.
    const v2 = await activate(config, '2', documentOf('Engines', ['/engines/{engine}']), v1);
    await waitFor(() => (collector.counters().contractVersionId === v2 ? true : undefined), 15_000, 'the new version learned');
    await (await vendorFetch(`${vendorOrigin}/v1/engines/davinci`)).json();
    await (await vendorFetch(`${vendorOrigin}/v1/models/gpt-4o`)).json();
    await waitFor(() => (collector.counters().observed >= 6 ? true : undefined), 10_000, '6 observations');
    await collector.flush();
    const routes = await storedRoutes(config.connectionId, 6);
    expect(routes).toContain('GET /engines/{engine}');
    // /models/{model} is no longer a route of the active version: the id-stripped path.
    expect(routes.filter((route) => route === 'GET /v1/models/{id}')).toHaveLength(1);
  });

  it('lets routeTemplate and routes override the learned templates, and instrumentFetch learns as well', { timeout: 60_000 }, async () => {
    const config = await createCollector(ctx, apiKey, { protocol: 'http-api', name: 'overrides' });
    const v1 = await activate(config, '1', documentOf('Models', ['/models/{model}']), null);
    const collector = libraryCollector(config, { contractRefreshIntervalMs: 0 });
    await waitFor(() => (collector.counters().contractVersionId === v1 ? true : undefined), 10_000, 'the active version learned');

    const byCallback = instrument.observeFetch(collector, globalThis.fetch, {
      origins: [vendorOrigin],
      routes: ['/v1/models/{name}'],
      routeTemplate: (url) => (url.includes('special') ? '/special' : undefined),
    });
    const byRoutes = instrument.observeFetch(collector, globalThis.fetch, { origins: [vendorOrigin], routes: ['/v1/models/{name}'] });
    await (await byCallback(`${vendorOrigin}/v1/models/special-1`)).json();
    await (await byCallback(`${vendorOrigin}/v1/models/gpt-4o`)).json();
    await (await byRoutes(`${vendorOrigin}/v1/models/gpt-4o`)).json();
    const unsubscribe = instrument.instrumentFetch(collector, { origins: [vendorOrigin] });
    try {
      await (await fetch(`${vendorOrigin}/v1/models/o1-preview`)).text();
      await waitFor(() => (collector.counters().observed >= 4 ? true : undefined), 10_000, '4 observations');
    } finally {
      unsubscribe();
    }
    await collector.flush();
    expect(await storedRoutes(config.connectionId, 4)).toStrictEqual([
      'GET /models/{model}',
      'GET /special',
      'GET /v1/models/{name}',
      'GET /v1/models/{name}',
    ]);
  });

  it("templatises inbound requests of an Express app with the learned routes before the framework's", { timeout: 60_000 }, async () => {
    const config = await createCollector(ctx, apiKey, { protocol: 'http-webhook', direction: 'inbound', name: 'hooks' });
    const document = {
      openapi: '3.1.0',
      info: { title: 'Hooks', version: '1' },
      // A webhook's route template is its name (shared/contracts/importOpenApi.ts); a path-like one is templatised.
      webhooks: { '/hooks/{provider}/events': { post: { requestBody: json, responses: { '200': { description: 'ok' } } } } },
    };
    const v1 = await activate(config, '1', document, null, []);
    const collector = libraryCollector(config, { contractRefreshIntervalMs: 0 });
    await waitFor(() => (collector.counters().contractVersionId === v1 ? true : undefined), 10_000, 'the active version learned');
    const app = express();
    app.use(express.json());
    app.use(instrument.expressCollector(collector));
    app.post('/hooks/:provider/:kind', (_request, response) => {
      response.json({ ok: true });
    });
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      for (const path of ['/hooks/stripe/events', '/hooks/stripe/other']) {
        await (
          await fetch(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"id":"1"}' })
        ).text();
      }
      await waitFor(() => (collector.counters().observed >= 2 ? true : undefined), 10_000, '2 observations');
    } finally {
      server.close();
    }
    await collector.flush();
    expect(await storedRoutes(config.connectionId, 2)).toStrictEqual(['POST /hooks/:provider/:kind', 'POST /hooks/{provider}/events']);
  });
});

describe('learned route matching', () => {
  const contract = learnedContract({
    activeContractVersionId: 'cv_1',
    routes: [
      { method: 'GET', routeTemplate: '/models/{model}', basePaths: ['/v1'] },
      { method: 'DELETE', routeTemplate: '/models/special', basePaths: ['/v1'] },
      { method: 'GET', routeTemplate: '/v1/files/{file}', basePaths: [] },
      { method: 'GET', routeTemplate: '/', basePaths: ['/api/v2'] },
      { method: 'GET', routeTemplate: 'not a path', basePaths: [] },
    ],
  });

  it("matches one segment per parameter, with or without a base path, the call's verb first", () => {
    expect(contract?.versionId).toBe('cv_1');
    expect(contract?.size).toBe(4);
    const match = (method: string, path: string) => contract?.match(method, path);
    expect(match('GET', '/v1/models/gpt-4o')).toBe('/models/{model}');
    expect(match('GET', '/models/gpt-4o/')).toBe('/models/{model}');
    expect(match('GET', '/v1/models/special')).toBe('/models/{model}');
    expect(match('DELETE', '/v1/models/special')).toBe('/models/special');
    expect(match('POST', '/models/special')).toBe('/models/special');
    expect(match('GET', '/v1/files/abc')).toBe('/v1/files/{file}');
    // A base path belongs to its routes only.
    expect(match('GET', '/files/abc')).toBeUndefined();
    expect(match('GET', '/v2/models/gpt-4o')).toBeUndefined();
    expect(match('GET', '/api/v2')).toBe('/');
    expect(match('GET', '/v1/models/a/b')).toBeUndefined();
    expect(match('GET', '/v1/models/')).toBeUndefined();
  });

  it('learns nothing from an answer without an active version', () => {
    expect(learnedContract({ activeContractVersionId: null, routes: [] })).toBeUndefined();
    expect(learnedContract(undefined)).toBeUndefined();
  });
});
