import http from 'node:http';
import net from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Fastify from 'fastify';
import express from 'express';
import type { ClickHouseClient } from '../shared/clickhouse/client.js';
import { concreteSegment } from '../shared/envelope/validate.js';
import * as lib from '../collector/src/index.js';
import * as instrument from '../collector/src/instrument/index.js';
import type { TestContext } from './helpers/context.js';
import { startEdgeFixture, type EdgeFixture } from './helpers/edgeFixture.js';
import { createCollector, observationRows, type Collector as IntegrationConfig, type Edge } from './helpers/ingest.js';
import { waitFor } from './helpers/wait.js';

// The collector's instrumentation helpers (collector/src/instrument) on real servers and real
// calls: a node:http vendor API called with Node's global fetch, with undici 7's fetch and through
// observeFetch; a Fastify and an Express 5 app receiving JSON webhooks; queue and feed operations.
// The library collector sends to the real edge in-process; the rows are read back from ClickHouse
// and compared with what the analyzer expects (route template, method, status, payloadLocation,
// shape, schemaInspected). Nothing of the service is mocked.

let fixture: EdgeFixture;
let ctx: TestContext;
let clickhouse: ClickHouseClient;
let edge: Edge;
let apiKey: string;
const opened: lib.Collector[] = [];

beforeAll(async () => {
  fixture = await startEdgeFixture();
  ({ ctx, clickhouse, edge, apiKey } = fixture);
});
afterAll(async () => {
  await Promise.all(opened.map((collector) => collector.close(2_000)));
  await fixture?.close();
});

type Shape = { kind: string; fields?: Record<string, Shape>; items?: Shape };
const S = { kind: 'string' } as const;
const I = { kind: 'integer' } as const;
const N = { kind: 'number' } as const;
const B = { kind: 'boolean' } as const;
const obj = (fields: Record<string, Shape>): Shape => ({ kind: 'object', fields });
const arr = (items?: Shape): Shape => (items ? { kind: 'array', items } : { kind: 'array' });
/** The placeholder the library sends for a body it did not inspect (schemaInspected false). */
const PLACEHOLDER = obj({});

/** One stored observation as the analyzer reads it. */
interface Row {
  method: string;
  route: string;
  status: number;
  location: string;
  inspected: boolean;
  shape: Shape;
  eventType: string;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** An Integration of the given protocol and a library collector sending its observations to the edge. */
async function integration(
  name: string,
  protocol: IntegrationConfig['protocol'],
  direction?: IntegrationConfig['direction'],
  options: Partial<lib.CollectorOptions> = {},
) {
  const config = await createCollector(ctx, apiKey, { protocol, ...(direction ? { direction } : {}), name });
  const collector = lib.createCollector({
    endpoint: edge.url,
    integrationKey: config.integrationKey,
    connectionKey: config.connectionKey,
    ingestToken: config.ingestToken,
    direction: config.direction,
    protocol: config.protocol,
    connectionCheck: false,
    flushIntervalMs: 60_000,
    ...options,
  });
  opened.push(collector);
  return { config, collector };
}

/** Waits until `count` observations were queued, flushes, and returns the stored rows (sorted). */
async function storedRows(config: IntegrationConfig, collector: lib.Collector, count: number): Promise<Row[]> {
  await waitFor(() => (collector.counters().observed >= count ? true : undefined), 10_000, `${count} observations`);
  await collector.flush();
  const counters = collector.counters();
  expect(counters, JSON.stringify(counters)).toMatchObject({
    observed: count,
    delivered: count,
    buildErrors: 0,
    rejected: 0,
    dropped: 0,
    pendingInspections: 0,
  });
  const rows = await waitFor(
    async () => {
      const found = await observationRows(clickhouse, config.connectionId);
      return found.length >= count ? found : undefined;
    },
    10_000,
    `${count} rows`,
  );
  expect(rows).toHaveLength(count);
  for (const row of rows) expect(Number(row.duration_ms)).toBeGreaterThanOrEqual(0);
  return rows
    .map((row) => ({
      method: String(row.method),
      route: String(row.route_template),
      status: Number(row.status_code),
      location: String(row.payload_location),
      inspected: Number(row.schema_inspected) === 1,
      shape: JSON.parse(String(row.schema_shape)) as Shape,
      eventType: String(row.event_type),
    }))
    .sort(byKey);
}

const keyOf = (row: Row) => `${row.method} ${row.route} ${row.status} ${row.location} ${row.inspected} ${JSON.stringify(row.shape)}`;
const byKey = (a: Row, b: Row) => (keyOf(a) < keyOf(b) ? -1 : keyOf(a) > keyOf(b) ? 1 : 0);

/** An expected row: inspected when a shape is given, else the placeholder with schemaInspected false. */
function row(method: string, route: string, status: number, location: string, shape: Shape | null, eventType?: string): Row {
  return {
    method,
    route,
    status,
    location,
    inspected: shape !== null,
    shape: shape ?? PLACEHOLDER,
    eventType: eventType ?? (location === 'message' ? route : `${method.toLowerCase()}.${location}`),
  };
}

// ---------------------------------------------------------------------------------------------
// The vendor API: a node:http server whose bodies the tests know byte for byte.

const ORDER = Buffer.from(JSON.stringify({ id: 'ord_1', total: 12.5, items: [{ sku: 'a', qty: 1 }], paid: true }));
const ORDER_SHAPE = obj({ id: S, total: N, items: arr(obj({ sku: S, qty: I })), paid: B });
const REPORT = Buffer.from('id,total\nord_1,12.5\n');
/** ~70 KiB of JSON: over the 16 KiB bound the fetch helpers get in these tests. */
const EXPORT = Buffer.from(JSON.stringify({ orders: Array.from({ length: 1_500 }, (_, i) => ({ id: `ord_${i}`, note: 'x'.repeat(20) })) }));
const MAX_BYTES = 16 * 1024;
const STREAM_HEAD = Buffer.from('{"events":[{"id":"evt_1","type":"order.created"}');
const STREAM_TAIL = Buffer.from(',{"id":"evt_2","type":"order.paid"}],"cursor":"c_2"}');
const STREAM_SHAPE = obj({ events: arr(obj({ id: S, type: S })), cursor: S });
const SEARCH = Buffer.from(JSON.stringify({ results: [], total: 0 }));
const SEARCH_SHAPE = obj({ results: arr(), total: I });
const INVOICE = Buffer.from(JSON.stringify({ number: 'INV-1', lines: [{ amount: 1200 }] }));
const INVOICE_SHAPE = obj({ number: S, lines: arr(obj({ amount: I })) });
const CREATED = Buffer.from(JSON.stringify({ id: 'ord_2', status: 'created' }));

interface Vendor {
  origin: string;
  /** Resolved by a test when the host read the first chunk of /v1/events/stream. */
  releaseStream(): void;
  /** Per stream request: whether the server wrote the end only after the host had the first chunk. */
  streamReleases: boolean[];
  /** JSON bodies the server received (POST /v1/orders). */
  received: string[];
  close(): Promise<void>;
}

async function startVendor(): Promise<Vendor> {
  let release: (() => void) | undefined;
  const streamReleases: boolean[] = [];
  const received: string[] = [];
  const json = (res: http.ServerResponse, body: Buffer, headers: Record<string, string> = {}) => {
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': String(body.length), ...headers });
    res.end(body);
  };
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method === 'POST' && path === '/v1/orders') {
      const parts: Buffer[] = [];
      req.on('data', (part: Buffer) => parts.push(part));
      req.on('end', () => {
        received.push(Buffer.concat(parts).toString('utf8'));
        res.writeHead(201, { 'content-type': 'application/json', 'content-length': String(CREATED.length) });
        res.end(CREATED);
      });
      return;
    }
    if (/^\/v1\/orders\/[^/]+$/.test(path)) return json(res, ORDER);
    if (path === '/v1/report') {
      res.writeHead(200, { 'content-type': 'text/csv', 'content-length': String(REPORT.length) });
      return res.end(REPORT);
    }
    if (path === '/v1/export') return json(res, EXPORT);
    if (path === '/v1/export/chunked') {
      // No Content-Length: the bound is found while reading.
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write(EXPORT.subarray(0, 10_000));
      res.end(EXPORT.subarray(10_000));
      return;
    }
    if (path === '/v1/archive') {
      const zipped = gzipSync(ORDER);
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip', 'content-length': String(zipped.length) });
      return res.end(zipped);
    }
    if (path === '/v1/events/stream') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write(STREAM_HEAD);
      // The end is written only once the host read the first chunk (or after 5 s, which fails the test).
      const gate = new Promise<boolean>((resolve) => {
        release = () => resolve(true);
        setTimeout(() => resolve(false), 5_000).unref();
      });
      void gate.then((released) => {
        streamReleases.push(released);
        res.end(STREAM_TAIL);
      });
      return;
    }
    if (path === '/v1/search') return json(res, SEARCH);
    if (/^\/v1\/customers\/[^/]+\/invoices\/[^/]+$/.test(path)) return json(res, INVOICE);
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end('{"error":"not_found"}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    releaseStream: () => release?.(),
    streamReleases,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** An origin on which nothing listens (a port taken and released). */
async function deadOrigin(): Promise<string> {
  const probe = net.createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as net.AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

type FetchLike = (url: string, init?: RequestInit) => Promise<Response>;

async function bytesOf(res: Response): Promise<Buffer> {
  return Buffer.from(await res.arrayBuffer());
}

/** Reads a streamed body as the host would, telling the vendor when the first chunk arrived. */
async function readStreamed(res: Response, vendor: Vendor): Promise<Buffer> {
  const reader = res.body!.getReader();
  const parts: Uint8Array[] = [];
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (parts.length === 0) vendor.releaseStream();
    parts.push(value);
  }
  return Buffer.concat(parts);
}

/**
 * The calls every fetch style makes, checking that the host gets exactly the vendor's bytes and
 * status; returns the dead origin's error (the host's own).
 */
async function vendorCalls(call: FetchLike, vendor: Vendor, dead: string): Promise<unknown> {
  let res = await call(`${vendor.origin}/v1/orders/ord_123`);
  expect(res.status).toBe(200);
  expect((await bytesOf(res)).equals(ORDER)).toBe(true);

  res = await call(`${vendor.origin}/v1/orders/ord_456?expand=items&customer=cus_NffrFeUfNV2Hib`);
  expect((await bytesOf(res)).equals(ORDER)).toBe(true);

  res = await call(`${vendor.origin}/v1/search?q=alice%40example.com&page=2`);
  expect((await bytesOf(res)).equals(SEARCH)).toBe(true);

  res = await call(`${vendor.origin}/v1/customers/cus_NffrFeUfNV2Hib/invoices/550e8400-e29b-41d4-a716-446655440000`);
  expect((await bytesOf(res)).equals(INVOICE)).toBe(true);

  res = await call(`${vendor.origin}/v1/report`);
  expect((await bytesOf(res)).equals(REPORT)).toBe(true);

  res = await call(`${vendor.origin}/v1/export`);
  expect((await bytesOf(res)).equals(EXPORT)).toBe(true);

  res = await call(`${vendor.origin}/v1/export/chunked`);
  expect((await bytesOf(res)).equals(EXPORT)).toBe(true);

  res = await call(`${vendor.origin}/v1/archive`);
  expect((await bytesOf(res)).equals(ORDER)).toBe(true);

  const streamsBefore = vendor.streamReleases.length;
  res = await call(`${vendor.origin}/v1/events/stream`);
  expect((await readStreamed(res, vendor)).equals(Buffer.concat([STREAM_HEAD, STREAM_TAIL]))).toBe(true);
  // The host had the first chunk while the vendor still held the end of the stream.
  expect(vendor.streamReleases.slice(streamsBefore)).toEqual([true]);

  res = await call(`${vendor.origin}/v1/unknown/12345678`);
  expect(res.status).toBe(404);
  await res.arrayBuffer();

  try {
    await call(`${dead}/v1/orders/ord_789`);
  } catch (error) {
    return error;
  }
  throw new Error('the call to the dead origin did not fail');
}

/** The rows of vendorCalls, given how a style sees the JSON bodies it can read. */
function vendorRows(readsBodies: boolean, gzipInspected = readsBodies): Row[] {
  const seen = (shape: Shape) => (readsBodies ? shape : null);
  return [
    row('GET', '/v1/orders/{orderId}', 200, 'response', seen(ORDER_SHAPE)),
    row('GET', '/v1/orders/{orderId}', 200, 'response', seen(ORDER_SHAPE)),
    row('GET', '/v1/search', 200, 'response', seen(SEARCH_SHAPE)),
    row('GET', '/v1/customers/{id}/invoices/{id}', 200, 'response', seen(INVOICE_SHAPE)),
    row('GET', '/v1/report', 200, 'response', null),
    row('GET', '/v1/export', 200, 'response', null),
    row('GET', '/v1/export/chunked', 200, 'response', null),
    row('GET', '/v1/archive', 200, 'response', gzipInspected ? ORDER_SHAPE : null),
    row('GET', '/v1/events/stream', 200, 'response', seen(STREAM_SHAPE)),
    row('GET', '/v1/unknown/{id}', 404, 'response', seen(obj({ error: S }))),
    row('GET', '/v1/orders/{orderId}', 0, 'response', null),
  ].sort(byKey);
}

describe('instrumentFetch and observeFetch (outbound http-api)', () => {
  let vendor: Vendor;
  let dead: string;
  beforeAll(async () => {
    vendor = await startVendor();
    dead = await deadOrigin();
  });
  afterAll(async () => {
    await vendor?.close();
  });

  it("observes Node's global fetch through diagnostics_channel: no body chunks are published by Node 20's undici, so JSON bodies are 'stream'", async () => {
    const { config, collector } = await integration('Fetch global', 'http-api');
    const unsubscribe = instrument.instrumentFetch(collector, {
      origins: [vendor.origin, dead],
      routes: ['/v1/orders/{orderId}'],
      maxBytes: MAX_BYTES,
    });
    expect(instrument.instrumentFetch(collector)).toBe(unsubscribe);
    let error: unknown;
    try {
      error = await vendorCalls((url, init) => fetch(url, init), vendor, dead);
      // Calls to other origins (the edge itself, here) are not attributed to this Integration.
      await fetch(`${edge.url}/healthz`)
        .then((res) => res.arrayBuffer())
        .catch(() => undefined);
    } finally {
      unsubscribe();
    }
    expect((error as Error).name).toBe('TypeError');
    // After unsubscribe nothing more is observed.
    await (await fetch(`${vendor.origin}/v1/orders/ord_1`)).arrayBuffer();

    const bundledPublishesChunks = Number(process.versions.undici?.split('.')[0]) >= 7;
    const rows = await storedRows(config, collector, 11);
    expect(rows).toEqual(vendorRows(bundledPublishesChunks));
    for (const stored of rows) expect(stored.route).not.toMatch(/[?#]|ord_|cus_|550e8400|alice/);
  });

  it('reads JSON bodies from undici:request:bodyChunkReceived where undici publishes it (undici 7), gzip included', async () => {
    const { config, collector } = await integration('Fetch undici 7', 'http-api');
    const undici = await import('undici');
    const dispatcher = new undici.Agent();
    const unsubscribe = instrument.instrumentFetch(collector, {
      origins: [vendor.origin, dead],
      routes: ['/v1/orders/{orderId}'],
      maxBytes: MAX_BYTES,
    });
    let error: unknown;
    try {
      error = await vendorCalls(
        (url, init) => undici.fetch(url, { ...(init as object), dispatcher }) as unknown as Promise<Response>,
        vendor,
        dead,
      );
    } finally {
      unsubscribe();
      await dispatcher.close();
    }
    expect((error as Error).name).toBe('TypeError');
    expect(await storedRows(config, collector, 11)).toEqual(vendorRows(true));
  });

  it('observeFetch reads a clone of the response in the background and rethrows the host error unchanged', async () => {
    const { config, collector } = await integration('Fetch wrapper', 'http-api');
    const thrown = new Error('host fetch failed');
    const failing = (async () => {
      throw thrown;
    }) as unknown as typeof fetch;
    // Both installed: a wrapped call is observed once.
    const unsubscribe = instrument.instrumentFetch(collector, { origins: [vendor.origin, dead] });
    const observed = instrument.observeFetch(collector, globalThis.fetch, {
      origins: [vendor.origin, dead],
      routes: ['/v1/orders/{orderId}'],
      maxBytes: MAX_BYTES,
    });
    let error: unknown;
    try {
      error = await vendorCalls((url, init) => observed(url, init), vendor, dead);
      // A request body as the payload.
      const posted = JSON.stringify({ customer: 'cus_1', lines: [{ sku: 'a', qty: 2 }] });
      const asRequest = instrument.observeFetch(collector, globalThis.fetch, { origins: [vendor.origin], payloadLocation: 'request' });
      const res = await asRequest(`${vendor.origin}/v1/orders`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: posted,
      });
      expect(res.status).toBe(201);
      expect((await bytesOf(res)).equals(CREATED)).toBe(true);
      expect(vendor.received.at(-1)).toBe(posted);
      // The host's own error object, unchanged.
      const wrappedFailing = instrument.observeFetch(collector, failing, { origins: [vendor.origin] });
      await expect(wrappedFailing(`${vendor.origin}/v1/orders/ord_1`)).rejects.toBe(thrown);
      // The same Response object the fetch implementation returned.
      let original: Response | undefined;
      const recording = (async (input: string) => {
        original = await fetch(input);
        return original;
      }) as unknown as typeof fetch;
      const returned = await instrument.observeFetch(collector, recording, { origins: [vendor.origin] })(`${vendor.origin}/v1/report`);
      expect(returned).toBe(original);
      expect((await bytesOf(returned)).equals(REPORT)).toBe(true);
    } finally {
      unsubscribe();
    }
    expect((error as Error).name).toBe('TypeError');
    const rows = await storedRows(config, collector, 14);
    expect(rows).toEqual(
      [
        ...vendorRows(true),
        row('POST', '/v1/orders', 201, 'request', obj({ customer: S, lines: arr(obj({ sku: S, qty: I })) })),
        row('GET', '/v1/orders/{id}', 0, 'response', null),
        row('GET', '/v1/report', 200, 'response', null),
      ].sort(byKey),
    );
  });
});

// ---------------------------------------------------------------------------------------------
// Inbound webhooks

const WEBHOOK = { id: 'evt_1NffrFeUfNV2Hib', type: 'order.created', data: { object: { id: 'ord_1', amount: 1200, paid: false } } };
const WEBHOOK_SHAPE = obj({ id: S, type: S, data: obj({ object: obj({ id: S, amount: I, paid: B }) }) });

async function post(url: string, body: string | undefined, contentType?: string, headers: Record<string, string> = {}): Promise<number> {
  const res = await fetch(url, { method: 'POST', headers: { ...(contentType ? { 'content-type': contentType } : {}), ...headers }, body });
  await res.arrayBuffer();
  return res.status;
}

describe('fastifyCollector and expressCollector (inbound http-webhook)', () => {
  it('records Fastify webhooks with the route template, reply status and the parsed request body', async () => {
    const { config, collector } = await integration('Fastify webhooks', 'http-webhook');
    const app = Fastify({ logger: false });
    await app.register(instrument.fastifyCollector, {
      collector,
      correlation: (request) => ({ sourceEventId: request.headers['x-event-id'] as string | undefined }),
    });
    await app.register(async (scope) => {
      scope.post('/webhooks/:provider', async () => ({ received: true }));
      scope.post('/webhooks/:provider/strict', async (_request, reply) => reply.code(422).send({ error: 'unsupported' }));
      scope.post('/webhooks/:provider/fail', async () => {
        throw new Error('handler failed');
      });
    });
    await app.listen({ host: '127.0.0.1', port: 0 });
    const base = `http://127.0.0.1:${(app.server.address() as net.AddressInfo).port}`;
    try {
      expect(await post(`${base}/webhooks/stripe?attempt=2`, JSON.stringify(WEBHOOK), 'application/json', { 'x-event-id': 'evt_1' })).toBe(
        200,
      );
      expect(await post(`${base}/webhooks/github`, 'payload=1', 'text/plain')).toBe(200);
      expect(await post(`${base}/webhooks/stripe/strict`, JSON.stringify({ type: 'x' }), 'application/json')).toBe(422);
      expect(await post(`${base}/webhooks/stripe/fail`, JSON.stringify(WEBHOOK), 'application/json')).toBe(500);
      expect(await post(`${base}/webhooks/legacy/550e8400-e29b-41d4-a716-446655440000/x`, '{}', 'application/json')).toBe(404);
    } finally {
      await app.close();
    }
    const rows = await storedRows(config, collector, 5);
    expect(rows).toEqual(
      [
        row('POST', '/webhooks/:provider', 200, 'message', WEBHOOK_SHAPE),
        row('POST', '/webhooks/:provider', 200, 'message', null),
        row('POST', '/webhooks/:provider/strict', 422, 'message', obj({ type: S })),
        row('POST', '/webhooks/:provider/fail', 500, 'message', WEBHOOK_SHAPE),
        row('POST', '/webhooks/legacy/{id}/x', 404, 'message', obj({})),
      ].sort(byKey),
    );
    const stored = await observationRows(clickhouse, config.connectionId);
    expect(stored.filter((entry) => entry.source_event_id_hash !== '').map((entry) => entry.status_code)).toEqual([200]);
    expect(JSON.stringify(stored)).not.toContain('evt_1NffrFeUfNV2Hib');
  });

  it('reads nothing of a request past the observation budget, and the host gets every answer', async () => {
    // 6 a minute: the first six of the twenty requests (all within the minute) are observed.
    const { config, collector } = await integration('Budgeted webhooks', 'http-webhook', undefined, { maxObservationsPerMinute: 6 });
    const app = Fastify({ logger: false });
    let correlations = 0;
    await app.register(instrument.fastifyCollector, {
      collector,
      correlation: () => {
        correlations++;
        return {};
      },
    });
    app.post('/webhooks/:provider', async () => ({ received: true }));
    await app.listen({ host: '127.0.0.1', port: 0 });
    const base = `http://127.0.0.1:${(app.server.address() as net.AddressInfo).port}`;
    try {
      for (let i = 0; i < 20; i++) expect(await post(`${base}/webhooks/stripe`, JSON.stringify(WEBHOOK), 'application/json')).toBe(200);
    } finally {
      await app.close();
    }
    const observed = 6;
    expect(collector.counters()).toMatchObject({ observed, throttled: 20 - observed, buildErrors: 0 });
    expect(correlations).toBe(observed);
    expect(await storedRows(config, collector, observed)).toHaveLength(observed);
  });

  it('records Express 5 webhooks: baseUrl + route path, express.json() and express.raw() bodies, absent bodies', async () => {
    const { config, collector } = await integration('Express webhooks', 'http-webhook');
    const app = express();
    app.use(instrument.expressCollector(collector));
    const hooks = express.Router();
    hooks.post('/:provider', express.json(), (_req, res) => {
      res.status(202).json({ ok: true });
    });
    app.use('/hooks', hooks);
    app.post('/raw/:provider', express.raw({ type: 'application/json' }), (req, res) => {
      res.status(200).send(Buffer.isBuffer(req.body) ? 'verified' : 'no body');
    });
    app.post('/bare/:provider', (_req, res) => {
      res.sendStatus(204);
    });
    const server = app.listen(0, '127.0.0.1');
    await new Promise<void>((resolve) => server.once('listening', () => resolve()));
    const base = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
    try {
      expect(await post(`${base}/hooks/stripe?signature=abc`, JSON.stringify(WEBHOOK), 'application/json')).toBe(202);
      expect(await post(`${base}/raw/shopify`, JSON.stringify({ order: { id: 1 } }), 'application/json')).toBe(200);
      expect(await post(`${base}/bare/github`, undefined)).toBe(204);
      expect(await post(`${base}/hooks/stripe`, 'a=1', 'application/x-www-form-urlencoded')).toBe(202);
      expect(await post(`${base}/missing/1234567/events`, JSON.stringify(WEBHOOK), 'application/json')).toBe(404);
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
    const rows = await storedRows(config, collector, 5);
    expect(rows).toEqual(
      [
        row('POST', '/hooks/:provider', 202, 'message', WEBHOOK_SHAPE),
        row('POST', '/raw/:provider', 200, 'message', obj({ order: obj({ id: I }) })),
        row('POST', '/bare/:provider', 204, 'message', null),
        row('POST', '/hooks/:provider', 202, 'message', null),
        // No router match and no parser: the id-stripped path, the body absent.
        row('POST', '/missing/{id}/events', 404, 'message', null),
      ].sort(byKey),
    );
  });

  it('passes through and records nothing with a collector of another protocol', async () => {
    const { collector } = await integration('Wrong protocol', 'http-api');
    const app = express();
    app.use(instrument.expressCollector(collector));
    app.post('/x', (_req, res) => {
      res.sendStatus(200);
    });
    const server = app.listen(0, '127.0.0.1');
    await new Promise<void>((resolve) => server.once('listening', () => resolve()));
    try {
      expect(await post(`http://127.0.0.1:${(server.address() as net.AddressInfo).port}/x`, '{}', 'application/json')).toBe(200);
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
    const { collector: webhooks } = await integration('Wrong protocol 2', 'http-webhook');
    const off = instrument.instrumentFetch(webhooks);
    await (await fetch(`${edge.url}/healthz`)).arrayBuffer().catch(() => undefined);
    off();
    await sleep(20);
    expect(collector.counters().observed).toBe(0);
    expect(webhooks.counters().observed).toBe(0);
  });
});

// ---------------------------------------------------------------------------------------------
// Queue and feed operations

describe('observeQueue and observeFeed', () => {
  const MESSAGE = { orderId: 'ord_1', total: 12.5, lines: [{ sku: 'a', qty: 1 }] };
  const MESSAGE_SHAPE = obj({ orderId: S, total: N, lines: arr(obj({ sku: S, qty: I })) });

  it('records 202 / 422 / 500 for a queue publish, returning the result and rethrowing the host error unchanged', async () => {
    const { config, collector } = await integration('Queue publish', 'queue', 'outbound');
    const options = { routeTemplate: 'orders.created', direction: 'outbound' as const, body: { json: MESSAGE } };
    const result = { messageId: 'm-1' };
    expect(await instrument.observeQueue(collector, options, async () => result)).toBe(result);
    expect(await instrument.observeQueue(collector, { ...options, body: undefined }, () => 7)).toBe(7);

    const rejection = instrument.reject('unknown order');
    expect(rejection).toBeInstanceOf(instrument.RejectedOperation);
    await expect(
      instrument.observeQueue(collector, options, async () => {
        throw rejection;
      }),
    ).rejects.toBe(rejection);

    const failure = new Error('broker unavailable');
    await expect(
      instrument.observeQueue(collector, options, async () => {
        throw failure;
      }),
    ).rejects.toBe(failure);
    // A synchronous throw too, and a thrown non-Error value.
    await expect(
      instrument.observeQueue(collector, options, () => {
        throw failure;
      }),
    ).rejects.toBe(failure);
    const odd = { code: 'E_ODD' };
    await expect(instrument.observeQueue(collector, options, () => Promise.reject(odd))).rejects.toBe(odd);
    // Another direction than the collector's: runs, not recorded.
    expect(await instrument.observeQueue(collector, { ...options, direction: 'inbound' }, async () => 'ran')).toBe('ran');

    expect(await storedRows(config, collector, 6)).toEqual(
      [
        row('POST', 'orders.created', 202, 'message', MESSAGE_SHAPE),
        row('POST', 'orders.created', 202, 'message', null),
        row('POST', 'orders.created', 422, 'message', MESSAGE_SHAPE),
        row('POST', 'orders.created', 500, 'message', MESSAGE_SHAPE),
        row('POST', 'orders.created', 500, 'message', MESSAGE_SHAPE),
        row('POST', 'orders.created', 500, 'message', MESSAGE_SHAPE),
      ].sort(byKey),
    );
  });

  it('records 200 / 422 / 500 for a feed job', async () => {
    const { config, collector } = await integration('Feed import', 'scheduled-feed', 'inbound');
    const options = { routeTemplate: 'nightly-orders-import', body: { raw: JSON.stringify(MESSAGE), contentType: 'application/json' } };
    const summary = { imported: 3 };
    expect(await instrument.observeFeed(collector, options, async () => summary)).toBe(summary);
    const rejection = new instrument.RejectedOperation('file signature mismatch');
    await expect(
      instrument.observeFeed(collector, options, async () => {
        throw rejection;
      }),
    ).rejects.toBe(rejection);
    const failure = new RangeError('disk full');
    await expect(
      instrument.observeFeed(collector, { ...options, eventType: 'orders.import' }, async () => {
        throw failure;
      }),
    ).rejects.toBe(failure);

    expect(await storedRows(config, collector, 3)).toEqual(
      [
        row('POST', 'nightly-orders-import', 200, 'message', MESSAGE_SHAPE),
        row('POST', 'nightly-orders-import', 422, 'message', MESSAGE_SHAPE),
        row('POST', 'nightly-orders-import', 500, 'message', MESSAGE_SHAPE, 'orders.import'),
      ].sort(byKey),
    );
  });
});

// ---------------------------------------------------------------------------------------------
// Route templates and hooks that cannot throw into the host

describe('route templates', () => {
  it('replaces ids, tokens, dates and e-mails by {id}, never keeps a query string, and passes the edge check', () => {
    const cases: [string, string][] = [
      ['/v1/orders/123', '/v1/orders/{id}'],
      ['/v1/orders/ord_1/lines?expand=all', '/v1/orders/{id}/lines'],
      ['/v1/customers/cus_NffrFeUfNV2Hib', '/v1/customers/{id}'],
      ['/v1/items/550e8400-e29b-41d4-a716-446655440000#top', '/v1/items/{id}'],
      ['/v1/blobs/9f86d081884c7d659a2feaa0c55ad015', '/v1/blobs/{id}'],
      ['/v1/runs/01HZY3K8J9X2WQ5T7V6N4M3B2A/logs', '/v1/runs/{id}/logs'],
      ['/v1/reports/2024-05-01/daily', '/v1/reports/{id}/daily'],
      ['/v1/users/alice%40example.com', '/v1/users/{id}'],
      ['/v1/invoices/INV-2024-0001', '/v1/invoices/{id}'],
      ['/v2/payment_intents/pi_3MtwBwLkdIwHu7ix28a3tqPa/capture', '/v2/payment_intents/{id}/capture'],
      ['/api-v2/orders', '/api-v2/orders'],
      ['/oauth2/token', '/oauth2/token'],
      ['https://api.example.com/v1/orders/42?x=1', '/v1/orders/{id}'],
    ];
    for (const [path, template] of cases) {
      const stripped = instrument.strippedPath(path);
      expect(stripped, path).toBe(template);
      expect(concreteSegment(stripped), path).toBe(false);
    }
    expect(instrument.strippedPath(`/v1/${'segment/'.repeat(40)}end`).length).toBeLessThanOrEqual(128);
    const match = instrument.routeMatcher(['/v1/orders/{id}', '/v1/orders/search', '/v1/orders/:id/lines']);
    expect(match('/v1/orders/search')).toBe('/v1/orders/search');
    expect(match('/v1/orders/ord_1')).toBe('/v1/orders/{id}');
    expect(match('/v1/orders/ord_1/lines/')).toBe('/v1/orders/:id/lines');
    expect(match('/v1/orders')).toBeUndefined();
  });
});

describe('hooks never throw into the host', () => {
  it('keeps the host calls working when the collector and the callbacks throw', async () => {
    const vendor = await startVendor();
    const broken = (): never => {
      throw new Error('collector broken');
    };
    const hostile: lib.Collector = {
      direction: 'outbound',
      protocol: 'http-api',
      observe: broken,
      admit: broken,
      observeAdmitted: broken,
      flush: broken,
      close: broken,
      counters: broken,
      beginInspection: broken,
      isOwnRequest: () => false,
    };
    const unsubscribe = instrument.instrumentFetch(hostile, { routeTemplate: broken });
    try {
      const observed = instrument.observeFetch(hostile, globalThis.fetch, { routeTemplate: broken });
      expect((await bytesOf(await fetch(`${vendor.origin}/v1/orders/1`))).equals(ORDER)).toBe(true);
      expect((await bytesOf(await observed(`${vendor.origin}/v1/orders/1`))).equals(ORDER)).toBe(true);
      expect(await instrument.observeQueue({ ...hostile, protocol: 'queue' }, { routeTemplate: 'q' }, async () => 'done')).toBe('done');
      await sleep(50);
    } finally {
      unsubscribe();
      await vendor.close();
    }
  });
});
