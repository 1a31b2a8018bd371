import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import type { ClickHouseClient } from '../shared/clickhouse/client.js';
import { sqlLiteral } from '../shared/clickhouse/escape.js';
import { usagePeriodOf } from '../shared/usagePeriod.js';
import { OBSERVATION_COLUMNS } from '../ingest/common/observationsTable.js';
import { createApiKeyCommand } from '../management/admin/commands.js';
import type { BootstrapResult } from '../management/admin/bootstrap.js';
import type { ConnectionAnalyticsView } from '../management/observations/observationAnalytics.js';
import { parseTimestamp } from '../management/observations/observationQuery.js';
import type { ObservationView } from '../management/observations/observationViews.js';
import { bootstrapWorkspace, callWithKey, createTestContext, type TestContext } from './helpers/context.js';
import {
  FINGERPRINT,
  ManualClock,
  createCollector,
  envelope,
  newEventId,
  sendEnvelopes,
  startEdge,
  testClickHouse,
  type Collector,
  type Edge,
} from './helpers/ingest.js';

// Observation reads, connection analytics and workspace usage (00-decisions §5) against the real
// stores: envelopes go through the uWebSockets.js edge in-process over loopback HTTP, then are
// read back through the management plane (inject).

let ctx: TestContext;
let clickhouse: ClickHouseClient;
let edge: Edge;
const clock = new ManualClock();

beforeAll(async () => {
  ctx = await createTestContext();
  clickhouse = testClickHouse(ctx);
  edge = await startEdge(ctx, clickhouse, { clock });
});
afterAll(async () => {
  await edge.close();
  await clickhouse.close();
  await ctx.close();
});

const HOUR = 3_600_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

type Item = ObservationView;
type Bucket = ConnectionAnalyticsView['buckets'][number];

async function send(collector: Collector, items: Record<string, unknown>[]): Promise<void> {
  const res = await sendEnvelopes(edge, collector, items);
  expect(res.status, res.text).toBe(202);
  // Reads see what the log shipper has put in ClickHouse.
  expect(await edge.shipped()).toBe(true);
}

function get(key: string | null, path: string, query: Record<string, string> = {}): Promise<LightMyRequestResponse> {
  const search = new URLSearchParams(query).toString();
  return callWithKey(ctx, key, 'GET', search ? `${path}?${search}` : path);
}

/** Every page of a list, following nextCursor. */
async function allPages(key: string, query: Record<string, string>): Promise<{ pages: Item[][]; items: Item[] }> {
  const pages: Item[][] = [];
  let cursor: string | null = null;
  do {
    const res = await get(key, '/v1/observations', cursor ? { ...query, cursor } : query);
    expect(res.statusCode, res.body).toBe(200);
    pages.push(res.json().items);
    cursor = res.json().nextCursor;
  } while (cursor !== null && pages.length < 50);
  return { pages, items: pages.flat() };
}

/**
 * Writes a stored row of the connection a second time, as an edge retry whose first insert did
 * commit would. The copy goes to another partition (its `received_date` only differs), so no
 * background merge collapses it before the reads run: the reads themselves must.
 */
async function duplicateRow(connectionId: string, eventId: string): Promise<void> {
  const columns = OBSERVATION_COLUMNS.join(', ');
  const values = OBSERVATION_COLUMNS.map((column) => (column === 'received_date' ? "toDate('2000-01-01')" : column)).join(', ');
  await clickhouse.command({
    query: `INSERT INTO observations (${columns}) SELECT ${values} FROM observations
             WHERE connection_id = ${sqlLiteral(connectionId)} AND event_id = ${sqlLiteral(eventId)} LIMIT 1`,
  });
}

async function storedRows(connectionId: string, eventId: string): Promise<number> {
  const result = await clickhouse.query({
    query: `SELECT count() AS n FROM observations WHERE connection_id = ${sqlLiteral(connectionId)} AND event_id = ${sqlLiteral(eventId)}`,
    format: 'JSONEachRow',
  });
  return Number((await result.json<{ n: string }>())[0].n);
}

const transport = (overrides: Record<string, unknown>) => ({
  method: 'GET',
  routeTemplate: '/v1/orders/{orderId}',
  payloadLocation: 'response',
  statusCode: 200,
  durationMs: 42.5,
  attempt: 1,
  ...overrides,
});

/** Strictly descending by (receivedAt, eventId): the list's order. */
function expectListOrder(items: Item[]): void {
  for (let i = 1; i < items.length; i += 1) {
    const [a, b] = [items[i - 1], items[i]];
    const before = a.receivedAt > b.receivedAt || (a.receivedAt === b.receivedAt && a.eventId > b.eventId);
    expect(before, `${a.receivedAt} ${a.eventId} then ${b.receivedAt} ${b.eventId}`).toBe(true);
  }
}

describe('GET /v1/observations: pages', () => {
  let boot: BootstrapResult;
  let collector: Collector;
  const sent: Record<string, unknown>[] = [];

  beforeAll(async () => {
    boot = await bootstrapWorkspace(ctx);
    collector = await createCollector(ctx, boot.apiKey.key);
    for (let batch = 0; batch < 3; batch += 1) {
      const items = Array.from({ length: 20 }, () => envelope(collector));
      await send(collector, items);
      sent.push(...items);
      await sleep(5);
    }
    // A redelivered eventId is accepted but not stored again.
    const again = await sendEnvelopes(edge, collector, [sent[7]]);
    await edge.shipped();
    expect(again.body).toMatchObject({ accepted: 1, persisted: 0 });
    // A row the edge wrote twice (its retried insert had committed) shows once.
    await duplicateRow(collector.connectionId, sent[30].eventId as string);
    expect(await storedRows(collector.connectionId, sent[30].eventId as string)).toBe(2);
  });

  it('serves three pages in receipt order, newest first, with no duplicate and no gap', async () => {
    const { pages, items } = await allPages(boot.apiKey.key, { integrationId: collector.connectionId, limit: '25' });
    expect(pages.map((page) => page.length)).toEqual([25, 25, 10]);
    const ids = items.map((item) => item.eventId);
    expect(new Set(ids).size).toBe(60);
    expect(new Set(ids)).toEqual(new Set(sent.map((item) => item.eventId)));
    expectListOrder(items);
    // Batches were sent one after another: the last batch comes first.
    expect(new Set(ids.slice(0, 20))).toEqual(new Set(sent.slice(40).map((item) => item.eventId)));
  });

  it('answers no-store with the default page of 25 and a null cursor on the last page', async () => {
    const first = await get(boot.apiKey.key, '/v1/observations', { integrationId: collector.connectionId });
    expect(first.statusCode).toBe(200);
    expect(first.headers['cache-control']).toBe('no-store');
    expect(first.json().items).toHaveLength(25);
    expect(typeof first.json().nextCursor).toBe('string');
    const all = await get(boot.apiKey.key, '/v1/observations', { integrationId: collector.connectionId, limit: '100' });
    expect(all.json().items).toHaveLength(60);
    expect(all.json().nextCursor).toBeNull();
  });

  it('serves each item with structure and hashes only, optional members null', async () => {
    const res = await get(boot.apiKey.key, '/v1/observations', { integrationId: collector.connectionId, limit: '100' });
    const source = sent[12];
    const item = res.json().items.find((candidate: Item) => candidate.eventId === source.eventId);
    expect(item).toEqual({
      eventId: source.eventId,
      connectionId: collector.connectionId,
      integrationId: collector.connectionId,
      eventType: 'order.created',
      operationKey: 'GET /v1/orders/{orderId}:response:200',
      method: 'GET',
      routeTemplate: '/v1/orders/{orderId}',
      payloadLocation: 'response',
      statusCode: 200,
      durationMs: 42.5,
      attempt: 1,
      occurredAt: new Date(source.occurredAt as string).toISOString(),
      receivedAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
      envelopeVersion: '0.2',
      schemaInspected: true,
      schemaFingerprint: FINGERPRINT,
      observedFingerprint: FINGERPRINT,
      shapeHash: expect.stringMatching(/^[0-9a-f]{64}$/),
      redactionPolicyVersion: '2025-01',
      correlation: { sourceEventIdHash: 'hmac:1f2e3d', idempotencyKeyHash: null, hashNamespace: 'orders' },
      outcome: { accepted: true, businessObjectType: 'order', businessObjectIdHash: 'hmac:9a8b7c' },
    });
    expect(Math.abs(Date.parse(item.receivedAt) - Date.now())).toBeLessThan(5 * 60_000);
  });

  it('serves the detail with the parsed schemaShape, and 404 observation_not_found for an eventId it does not hold', async () => {
    const source = sent[30];
    const res = await get(boot.apiKey.key, `/v1/observations/${source.eventId}`, { integrationId: collector.connectionId });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    const { observation } = res.json();
    expect(observation.eventId).toBe(source.eventId);
    expect(observation.schemaShape).toEqual((source.payload as { schemaShape: unknown }).schemaShape);
    expect(observation.operationKey).toBe('GET /v1/orders/{orderId}:response:200');
    for (const eventId of [newEventId(), 'evt_', 'not-an-event', 'evt_%27%20OR%201=1']) {
      const missing = await get(boot.apiKey.key, `/v1/observations/${eventId}`, { integrationId: collector.connectionId });
      expect(missing.statusCode, eventId).toBe(404);
      expect(missing.json(), eventId).toEqual({ error: 'observation_not_found' });
    }
    const noConnection = await get(boot.apiKey.key, `/v1/observations/${source.eventId}`);
    expect(noConnection.statusCode).toBe(400);
    expect(noConnection.json()).toEqual({ error: 'connection_required' });
  });

  it('keeps an eventId to its own connection', async () => {
    const other = await createCollector(ctx, boot.apiKey.key, { name: 'Other flow' });
    const res = await get(boot.apiKey.key, `/v1/observations/${sent[0].eventId}`, { integrationId: other.connectionId });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error: 'observation_not_found' });
    const list = await get(boot.apiKey.key, '/v1/observations', { integrationId: other.connectionId });
    expect(list.json()).toEqual({ items: [], nextCursor: null });
  });
});

describe('GET /v1/observations: filters and cursors', () => {
  let boot: BootstrapResult;
  let collector: Collector;
  let firstBatch: Record<string, unknown>[];
  let secondBatch: Record<string, unknown>[];
  let secondReceivedAt: string;

  beforeAll(async () => {
    boot = await bootstrapWorkspace(ctx);
    collector = await createCollector(ctx, boot.apiKey.key);
    firstBatch = [
      envelope(collector, {
        eventType: 'order.created',
        transport: transport({ statusCode: 201, method: 'POST', routeTemplate: '/v1/orders' }),
      }),
      envelope(collector, { eventType: 'order.created', transport: transport({ statusCode: 200 }) }),
      envelope(collector, { eventType: 'order.updated', transport: transport({ statusCode: 404 }) }),
    ];
    await send(collector, firstBatch);
    await sleep(10);
    secondBatch = [
      envelope(collector, { eventType: 'order.updated', transport: transport({ statusCode: 429 }) }),
      envelope(collector, { eventType: 'order.updated', transport: transport({ statusCode: 0 }) }),
      envelope(collector, { eventType: 'order.deleted', transport: transport({ statusCode: 503, method: 'DELETE' }) }),
      envelope(collector, { eventType: 'order.created', transport: transport({ statusCode: 302 }) }),
    ];
    await send(collector, secondBatch);
    const res = await get(boot.apiKey.key, '/v1/observations', { integrationId: collector.connectionId, limit: '100' });
    secondReceivedAt = res.json().items.find((item: Item) => item.eventId === secondBatch[0].eventId).receivedAt;
  });

  async function ids(query: Record<string, string>): Promise<Set<string>> {
    const { items } = await allPages(boot.apiKey.key, { integrationId: collector.connectionId, ...query });
    return new Set(items.map((item) => item.eventId));
  }
  const idsOf = (...items: Record<string, unknown>[]) => new Set(items.map((item) => item.eventId as string));
  const [a, b, c] = [0, 1, 2];

  it('filters by eventType and by exact operationKey', async () => {
    expect(await ids({ eventType: 'order.updated' })).toEqual(idsOf(firstBatch[c], secondBatch[a], secondBatch[b]));
    expect(await ids({ eventType: 'order.nothing' })).toEqual(new Set());
    expect(await ids({ operationKey: 'POST /v1/orders:response:201' })).toEqual(idsOf(firstBatch[a]));
    expect(await ids({ operationKey: 'GET /v1/orders/{orderId}:response:200' })).toEqual(idsOf(firstBatch[b]));
    expect(await ids({ operationKey: 'GET /v1/orders/{orderId}:response:201' })).toEqual(new Set());
  });

  it('filters by status class, transport_error and exact code', async () => {
    expect(await ids({ status: '2xx' })).toEqual(idsOf(firstBatch[a], firstBatch[b]));
    expect(await ids({ status: '4XX' })).toEqual(idsOf(firstBatch[c], secondBatch[a]));
    expect(await ids({ status: '5xx' })).toEqual(idsOf(secondBatch[c]));
    expect(await ids({ status: '3xx' })).toEqual(idsOf(secondBatch[3]));
    expect(await ids({ status: 'transport_error' })).toEqual(idsOf(secondBatch[b]));
    expect(await ids({ status: '0' })).toEqual(idsOf(secondBatch[b]));
    expect(await ids({ status: '429' })).toEqual(idsOf(secondBatch[a]));
    expect(await ids({ status: '1xx' })).toEqual(new Set());
  });

  it('filters by receipt time: from inclusive, to exclusive, any RFC 3339 offset', async () => {
    const at = Date.parse(secondReceivedAt);
    expect(await ids({ from: secondReceivedAt })).toEqual(idsOf(...secondBatch));
    expect(await ids({ to: secondReceivedAt })).toEqual(idsOf(...firstBatch));
    expect(await ids({ from: new Date(at + 1).toISOString() })).toEqual(new Set());
    expect(await ids({ from: secondReceivedAt, to: new Date(at + 1).toISOString() })).toEqual(idsOf(...secondBatch));
    expect(await ids({ from: secondReceivedAt, to: secondReceivedAt })).toEqual(new Set());
    // The same instant written at +02:00.
    const shifted = new Date(at + 2 * HOUR).toISOString().replace('Z', '+02:00');
    expect(await ids({ from: shifted })).toEqual(idsOf(...secondBatch));
    expect(await ids({ eventType: 'order.updated', from: secondReceivedAt, status: '4xx' })).toEqual(idsOf(secondBatch[a]));
  });

  it('binds the cursor to workspace, connection and filters', async () => {
    const query = { integrationId: collector.connectionId, eventType: 'order.updated', limit: '1' };
    const first = await get(boot.apiKey.key, '/v1/observations', query);
    const cursor = first.json().nextCursor as string;
    expect(typeof cursor).toBe('string');
    const next = await get(boot.apiKey.key, '/v1/observations', { ...query, cursor });
    expect(next.statusCode).toBe(200);
    // Another page size is the same list.
    expect((await get(boot.apiKey.key, '/v1/observations', { ...query, limit: '5', cursor })).statusCode).toBe(200);
    const other = await createCollector(ctx, boot.apiKey.key, { name: 'Second flow' });
    const misuses: Record<string, string>[] = [
      { ...query, eventType: 'order.created', cursor },
      { integrationId: collector.connectionId, cursor },
      { ...query, status: '4xx', cursor },
      { ...query, from: '2020-01-01T00:00:00Z', cursor },
      { ...query, integrationId: other.connectionId, cursor },
      { ...query, cursor: `${cursor.slice(0, -2)}AA` },
      { ...query, cursor: 'not-a-cursor' },
      { ...query, cursor: '' },
    ];
    for (const misuse of misuses) {
      const res = await get(boot.apiKey.key, '/v1/observations', misuse);
      expect(res.statusCode, JSON.stringify(misuse)).toBe(400);
      expect(res.json()).toEqual({ error: 'invalid_evidence_cursor' });
    }
    // The same connection id in another workspace is not this list either (and is 404 there).
    const stranger = await bootstrapWorkspace(ctx);
    const foreign = await get(stranger.apiKey.key, '/v1/observations', { ...query, cursor });
    expect(foreign.statusCode).toBe(404);
  });

  it('answers 400 for a missing connection, a bad limit, time, filter or range', async () => {
    const key = boot.apiKey.key;
    const connection = { integrationId: collector.connectionId };
    const missing = await get(key, '/v1/observations');
    expect(missing.statusCode).toBe(400);
    expect(missing.json()).toEqual({ error: 'connection_required' });
    const bad: Record<string, string>[] = [
      { limit: '0' },
      { limit: '101' },
      { limit: 'ten' },
      { limit: '05' },
      { limit: '-1' },
      { from: 'yesterday' },
      { from: '2026-02-30T00:00:00Z' },
      { to: '2026-01-01' },
      { from: '2026-01-01T25:00:00Z' },
      { from: '2026-01-02T00:00:00Z', to: '2026-01-01T00:00:00Z' },
      { status: '6xx' },
      { status: 'ok' },
      { status: '99' },
      { status: '2x' },
      { operationKey: 'GET /v1/orders' },
      { eventType: 'has space' },
      { unknown: '1' },
    ];
    for (const query of bad) {
      const res = await get(key, '/v1/observations', { ...connection, ...query });
      expect(res.statusCode, JSON.stringify(query)).toBe(400);
      expect(res.json(), JSON.stringify(query)).toEqual({ error: 'invalid_evidence_query' });
    }
    const repeated = await callWithKey(ctx, key, 'GET', `/v1/observations?integrationId=${collector.connectionId}&limit=1&limit=2`);
    expect(repeated.json()).toEqual({ error: 'invalid_evidence_query' });
  });
});

describe('observation reads: authority', () => {
  it("answers 404 connection_not_found for another workspace's, a malformed or an unknown connection", async () => {
    const owner = await bootstrapWorkspace(ctx);
    const stranger = await bootstrapWorkspace(ctx);
    const collector = await createCollector(ctx, owner.apiKey.key);
    const item = envelope(collector);
    await send(collector, [item]);
    const own = await get(owner.apiKey.key, '/v1/observations', { integrationId: collector.connectionId });
    expect(own.json().items).toHaveLength(1);
    const strangerCollector = await createCollector(ctx, stranger.apiKey.key);
    for (const connectionId of [collector.connectionId, collector.workspaceIntegrationId, 'int_nope', `int_${'0'.repeat(26)}`]) {
      for (const res of [
        await get(stranger.apiKey.key, '/v1/observations', { integrationId: connectionId }),
        await get(stranger.apiKey.key, `/v1/observations/${item.eventId}`, { integrationId: connectionId }),
        await get(stranger.apiKey.key, `/v1/connections/${connectionId}/analytics`),
      ]) {
        expect(res.statusCode, connectionId).toBe(404);
        expect(res.json()).toEqual({ error: 'connection_not_found' });
      }
    }
    // The stranger's own connection does not hold the owner's eventId.
    const cross = await get(stranger.apiKey.key, `/v1/observations/${item.eventId}`, { integrationId: strangerCollector.connectionId });
    expect(cross.json()).toEqual({ error: 'observation_not_found' });
  });

  it('answers 403 insufficient_scope without observations:read and 401 without a key', async () => {
    const boot = await bootstrapWorkspace(ctx);
    const collector = await createCollector(ctx, boot.apiKey.key);
    const narrow = await createApiKeyCommand(ctx.deps, { workspace: boot.workspace.slug, scopes: ['integrations:read', 'incidents:read'] });
    const paths: [string, Record<string, string>][] = [
      ['/v1/observations', { integrationId: collector.connectionId }],
      [`/v1/observations/${newEventId()}`, { integrationId: collector.connectionId }],
      [`/v1/connections/${collector.connectionId}/analytics`, {}],
      ['/v1/usage', {}],
    ];
    for (const [path, query] of paths) {
      const forbidden = await get(narrow.key, path, query);
      expect(forbidden.statusCode, path).toBe(403);
      expect(forbidden.json()).toEqual({ error: 'insufficient_scope' });
      const anonymous = await get(null, path, query);
      expect(anonymous.statusCode, path).toBe(401);
    }
  });
});

describe('GET /v1/connections/{id}/analytics', () => {
  let boot: BootstrapResult;
  let collector: Collector;
  // Two whole UTC hours ahead of real time, so the edge's receipt times are known buckets.
  const base = Math.ceil(Date.now() / HOUR) * HOUR + HOUR;
  const firstHour = [
    { statusCode: 200, durationMs: 10 },
    { statusCode: 200, durationMs: 20 },
    { statusCode: 201, durationMs: 30, method: 'POST', routeTemplate: '/v1/orders' },
    { statusCode: 404, durationMs: 40 },
    { statusCode: 500, durationMs: 50 },
    { statusCode: 0, durationMs: 60 },
    { statusCode: 302, durationMs: 70 },
    { statusCode: 200, durationMs: 80 },
    { statusCode: 200, durationMs: 90 },
    { statusCode: 200, durationMs: 100 },
  ];
  const secondHour = [
    { statusCode: 200, durationMs: 5 },
    { statusCode: 200, durationMs: 15 },
    { statusCode: 429, durationMs: 25 },
    { statusCode: 200, durationMs: 35 },
  ];
  let duplicated: string;

  /** Sends at edge time `at` (the ManualClock only moves this test's edge). */
  async function sendAt(at: number, items: Record<string, unknown>[]): Promise<void> {
    clock.offsetMs = at - Date.now();
    try {
      await send(collector, items);
    } finally {
      clock.offsetMs = 0;
    }
  }

  beforeAll(async () => {
    boot = await bootstrapWorkspace(ctx);
    collector = await createCollector(ctx, boot.apiKey.key);
    const first = firstHour.map((t) => envelope(collector, { transport: transport(t) }));
    await sendAt(base + 5 * 60_000, first.slice(0, 6));
    await sendAt(base + 20 * 60_000, first.slice(6));
    await sendAt(
      base + HOUR + 10 * 60_000,
      secondHour.map((t) => envelope(collector, { transport: transport(t) })),
    );
    duplicated = first[0].eventId as string;
    await duplicateRow(collector.connectionId, duplicated);
  });

  const analytics = (query: Record<string, string>, key = boot.apiKey.key) =>
    get(key, `/v1/connections/${collector.connectionId}/analytics`, query);
  const iso = (ms: number) => new Date(ms).toISOString();

  it('counts distinct observations per UTC hour by status class and operation, with exact quantiles', async () => {
    expect(await storedRows(collector.connectionId, duplicated)).toBe(2);
    const res = await analytics({ from: iso(base), to: iso(base + 3 * HOUR), bucket: 'hour' });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    const body = res.json();
    expect(body).toMatchObject({
      connectionId: collector.connectionId,
      from: iso(base),
      to: iso(base + 3 * HOUR),
      bucket: 'hour',
      quantiles: 'exact',
    });
    expect(body.buckets.map((bucket: Bucket) => bucket.start)).toEqual([iso(base), iso(base + HOUR), iso(base + 2 * HOUR)]);
    const [first, second, third] = body.buckets;
    expect(first.count).toBe(10);
    expect(first.statusClasses).toEqual({ '1xx': 0, '2xx': 6, '3xx': 1, '4xx': 1, '5xx': 1, transport_error: 1 });
    expect(first.operations).toEqual([
      { operationKey: 'GET /v1/orders/{orderId}:response:200', count: 5 },
      { operationKey: 'GET /v1/orders/{orderId}:response:0', count: 1 },
      { operationKey: 'GET /v1/orders/{orderId}:response:302', count: 1 },
      { operationKey: 'GET /v1/orders/{orderId}:response:404', count: 1 },
      { operationKey: 'GET /v1/orders/{orderId}:response:500', count: 1 },
      { operationKey: 'POST /v1/orders:response:201', count: 1 },
    ]);
    // Sorted durations 10…100: positions floor(0.5·10)=5, floor(0.95·10)=9, floor(0.99·10)=9.
    expect(first.durationMs).toEqual({ p50: 60, p95: 100, p99: 100 });
    expect(second.count).toBe(4);
    expect(second.statusClasses).toEqual({ '1xx': 0, '2xx': 3, '3xx': 0, '4xx': 1, '5xx': 0, transport_error: 0 });
    expect(second.durationMs).toEqual({ p50: 25, p95: 35, p99: 35 });
    expect(third).toEqual({
      start: iso(base + 2 * HOUR),
      count: 0,
      operations: [],
      statusClasses: { '1xx': 0, '2xx': 0, '3xx': 0, '4xx': 0, '5xx': 0, transport_error: 0 },
      durationMs: { p50: null, p95: null, p99: null },
    });
    expect(body.totals.count).toBe(14);
    expect(body.totals.statusClasses).toEqual({ '1xx': 0, '2xx': 9, '3xx': 1, '4xx': 2, '5xx': 1, transport_error: 1 });
    expect(body.totals.operations[0]).toEqual({ operationKey: 'GET /v1/orders/{orderId}:response:200', count: 8 });
    // 14 durations sorted: 5 10 15 20 25 30 35 40 50 60 70 80 90 100 → positions 7, 13, 13.
    expect(body.totals.durationMs).toEqual({ p50: 40, p95: 100, p99: 100 });
  });

  it('buckets by minute and by day, and counts only [from, to)', async () => {
    const minutes = await analytics({ from: iso(base), to: iso(base + 2 * HOUR), bucket: 'minute' });
    expect(minutes.statusCode).toBe(200);
    const busy = minutes
      .json()
      .buckets.filter((bucket: Bucket) => bucket.count > 0)
      .map((bucket: Bucket) => [bucket.start, bucket.count]);
    expect(minutes.json().buckets).toHaveLength(120);
    expect(busy).toEqual([
      [iso(base + 5 * 60_000), 6],
      [iso(base + 20 * 60_000), 4],
      [iso(base + HOUR + 10 * 60_000), 4],
    ]);
    const day = Math.floor(base / (24 * HOUR)) * 24 * HOUR;
    const days = await analytics({ from: iso(day), to: iso(day + 2 * 24 * HOUR), bucket: 'day' });
    expect(days.json().buckets.map((bucket: Bucket) => bucket.start)).toEqual([iso(day), iso(day + 24 * HOUR)]);
    expect(days.json().totals.count).toBe(14);
    const partial = await analytics({ from: iso(base + 10 * 60_000), to: iso(base + HOUR + 10 * 60_000) });
    expect(partial.json().buckets.map((bucket: Bucket) => [bucket.start, bucket.count])).toEqual([
      [iso(base), 4],
      [iso(base + HOUR), 0],
    ]);
    const empty = await analytics({ from: iso(base), to: iso(base) });
    expect(empty.json()).toMatchObject({ buckets: [], totals: { count: 0 } });
  });

  it('pages a list whose rows lie far below its upper end (the page reads widen to the whole range)', async () => {
    const { pages, items } = await allPages(boot.apiKey.key, {
      integrationId: collector.connectionId,
      limit: '5',
      to: iso(base + 40 * 24 * HOUR),
    });
    expect(pages.map((page) => page.length)).toEqual([5, 5, 4]);
    expect(new Set(items.map((item) => item.eventId)).size).toBe(14);
    expectListOrder(items);
    const recent = await allPages(boot.apiKey.key, { integrationId: collector.connectionId, limit: '3', from: iso(base + 20 * 60_000) });
    expect(recent.pages.map((page) => page.length)).toEqual([3, 3, 2]);
  });

  it('defaults to the last 24 hours in hours', async () => {
    const res = await analytics({});
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.bucket).toBe('hour');
    expect(Date.parse(body.to) - Date.parse(body.from)).toBe(24 * HOUR);
    await ctx.deps.clock.sync();
    expect(Math.abs(Date.parse(body.to) - ctx.deps.clock.nowMs())).toBeLessThan(60_000);
    expect([24, 25]).toContain(body.buckets.length);
    // The test's observations lie ahead of now.
    expect(body.totals.count).toBe(0);
  });

  it('answers 400 invalid_evidence_query for a bad bucket, range or too many buckets', async () => {
    const bad: Record<string, string>[] = [
      { bucket: 'week' },
      { bucket: '' },
      { from: 'now' },
      { from: iso(base + HOUR), to: iso(base) },
      { from: iso(base), to: iso(base + 2 * 24 * HOUR), bucket: 'minute' },
      { from: '2000-01-01T00:00:00Z', to: iso(base), bucket: 'day' },
      { from: iso(base + 365 * 24 * HOUR) },
      { limit: '5' },
    ];
    for (const query of bad) {
      const res = await analytics(query);
      expect(res.statusCode, JSON.stringify(query)).toBe(400);
      expect(res.json()).toEqual({ error: 'invalid_evidence_query' });
    }
    // 1,500 minutes is the most one answer holds.
    expect((await analytics({ from: iso(base), to: iso(base + 1500 * 60_000), bucket: 'minute' })).statusCode).toBe(200);
    expect((await analytics({ from: iso(base), to: iso(base + 1500 * 60_000 + 1), bucket: 'minute' })).statusCode).toBe(400);
  });
});

describe('GET /v1/usage', () => {
  it("reports the workspace's accepted distinct eventIds per mode this UTC month", async () => {
    const boot = await bootstrapWorkspace(ctx);
    const sandbox = await createCollector(ctx, boot.apiKey.key, { mode: 'sandbox' });
    const live = await createCollector(ctx, boot.apiKey.key, { mode: 'live', name: 'Live flow' });
    const sandboxItems = Array.from({ length: 5 }, () => envelope(sandbox));
    await send(sandbox, sandboxItems.slice(0, 3));
    // A batch repeating an accepted eventId: only the new ones count.
    await send(sandbox, [sandboxItems[0], ...sandboxItems.slice(3)]);
    const liveItems = Array.from({ length: 3 }, () => envelope(live));
    await send(live, liveItems);
    await send(live, [liveItems[1]]);

    const res = await get(boot.apiKey.key, '/v1/usage');
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    await ctx.deps.clock.sync();
    const { period, periodStart, resetAt } = usagePeriodOf(ctx.deps.clock.now());
    const limit = ctx.deps.config.limits.sandboxMonthlyAllowance;
    expect(res.json()).toEqual({
      workspaceId: boot.workspace.id,
      accountId: boot.account.id,
      period,
      periodStart: periodStart.toISOString(),
      resetAt: resetAt.toISOString(),
      sandbox: {
        workspaceTotal: 5,
        accountTotal: 5,
        limit,
        remaining: limit - 5,
        quotaEnforced: ctx.deps.config.limits.sandboxQuotaEnforced,
      },
      live: { workspaceTotal: 3 },
    });
    // The same numbers as the distinct eventIds stored for the workspace's connections.
    const stored = await clickhouse.query({
      query: `SELECT connection_id, uniqExact(event_id) AS n FROM observations
               WHERE connection_id IN (${[sandbox.connectionId, live.connectionId].map(sqlLiteral).join(', ')}) GROUP BY connection_id`,
      format: 'JSONEachRow',
    });
    const counts = Object.fromEntries(
      (await stored.json<{ connection_id: string; n: string }>()).map((row) => [row.connection_id, Number(row.n)]),
    );
    expect(counts).toEqual({
      [sandbox.connectionId]: res.json().sandbox.workspaceTotal,
      [live.connectionId]: res.json().live.workspaceTotal,
    });

    expect((await get(boot.apiKey.key, '/v1/usage', { mode: 'live' })).json()).toEqual({ error: 'invalid_request' });
  });
});

describe('RFC 3339 parsing of from and to', () => {
  it('reads offsets, fractions and years before 100, and refuses impossible dates', () => {
    expect(parseTimestamp('2026-01-01T00:00:00Z')).toBe(Date.UTC(2026, 0, 1));
    expect(parseTimestamp('2026-01-01t01:30:00+01:30')).toBe(Date.UTC(2026, 0, 1));
    expect(parseTimestamp('2026-01-01T00:00:00 01:00')).toBe(Date.UTC(2025, 11, 31, 23));
    expect(parseTimestamp('2026-01-01T00:00:00.1234Z')).toBe(Date.UTC(2026, 0, 1) + 124);
    expect(parseTimestamp('2026-01-01T00:00:00.123Z')).toBe(Date.UTC(2026, 0, 1) + 123);
    expect(parseTimestamp('0050-06-01T00:00:00Z')).toBe(new Date('0050-06-01T00:00:00Z').getTime());
    expect(parseTimestamp('2024-02-29T00:00:00Z')).toBe(Date.UTC(2024, 1, 29));
    for (const bad of [
      '2025-02-29T00:00:00Z',
      '2026-13-01T00:00:00Z',
      '2026-01-01T00:00:60Z',
      '2026-01-01T00:00:00',
      '2026-01-01 00:00:00Z',
      '2026-01-01T00:00:00+24:00',
    ]) {
      expect(parseTimestamp(bad), bad).toBeNull();
    }
  });
});
