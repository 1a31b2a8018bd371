import { createHmac, randomBytes } from 'node:crypto';
import { ClickHouseLogLevel, createClient } from '@clickhouse/client';
import type { ClickHouseClient } from '../../shared/clickhouse/client.js';
import { sqlLiteral } from '../../shared/clickhouse/escape.js';
import { createClock, type Clock } from '../../shared/clock.js';
import type { Config, IngestEdgeConfig, IngestLimits } from '../../shared/config.js';
import { createMetricsRegistry } from '../../shared/metrics.js';
import { startIngestServer, type RunningServer } from '../../ingest/http/uwsServer.js';
import { startFastifyIngestServer } from '../../ingest/http/fastifyServer.js';
import { DEDUP_PERIODS, IngestKeys, dedupBucket, dedupBucketsKey } from '../../ingest/admission/keys.js';
import { EVENT_ID_DIGEST_BYTES, eventIdDigest } from '../../ingest/common/eventIdDigest.js';
import { OBSERVATION_ALIAS_COLUMNS } from '../../ingest/common/observationsTable.js';
import type { Redis } from '../../shared/redis.js';
import { newLogDir, removeLogDir } from './logDirs.js';
import { createIntegration, type CreateIntegrationInput } from './integrations.js';
import type { TestContext } from './context.js';

export interface Edge {
  url: string;
  server: RunningServer;
  config: Config;
  clock: Clock;
  /** Ships what the edge answered as accepted so far: true once in ClickHouse, false when shipping failed. */
  shipped(): Promise<boolean>;
  close(): Promise<void>;
}

/** What sending to an edge needs: in this process (Edge) or a spawned one. */
export type EdgeAddress = Pick<Edge, 'url' | 'clock'>;

export interface EdgeOverrides {
  limits?: Partial<IngestLimits>;
  ingest?: Partial<IngestEdgeConfig>;
  /**
   * The edge's clock. By default a ManualClock of this edge only, so other test files moving the
   * shared test clock (Redis `clock:offset_ms`) cannot shift this edge's windows and signatures;
   * `'shared'` gives the process clock of ENABLE_TEST_CLOCK=1.
   */
  clock?: Clock | 'shared';
  pool?: Pick<import('pg').Pool, 'query'>;
  analysisStream?: string;
}

/** Real time plus an offset that only this test moves. */
export class ManualClock implements Clock {
  offsetMs = 0;
  now(): Date {
    return new Date(this.nowMs());
  }
  nowMs(): number {
    return Date.now() + this.offsetMs;
  }
  async sync(): Promise<void> {
    /* nothing shared to read */
  }
  advance(ms: number): void {
    this.offsetMs += ms;
  }
}

/** The uWebSockets.js edge in-process on a free loopback port, on the test stores (no mocks). */
export function startEdge(ctx: TestContext, clickhouse: ClickHouseClient, overrides: EdgeOverrides = {}): Promise<Edge> {
  return startAdapter(startIngestServer, ctx, clickhouse, overrides);
}

/** The same pipeline behind the Fastify adapter (ingest/http/fastifyServer.ts). */
export function startFastifyEdge(ctx: TestContext, clickhouse: ClickHouseClient, overrides: EdgeOverrides = {}): Promise<Edge> {
  return startAdapter(startFastifyIngestServer, ctx, clickhouse, overrides);
}

async function startAdapter(
  start: typeof startIngestServer,
  ctx: TestContext,
  clickhouse: ClickHouseClient,
  overrides: EdgeOverrides,
): Promise<Edge> {
  const base = ctx.deps.config;
  // Its own log folder, removed on close unless the test chose one (to reopen it).
  const ownLog = overrides.ingest?.walDir === undefined ? newLogDir() : null;
  const config: Config = {
    ...base,
    limits: { ...base.limits, ...overrides.limits },
    ingest: { ...base.ingest, shipIntervalMs: 20, ...(ownLog ? { walDir: ownLog } : {}), ...overrides.ingest },
  };
  const clock = overrides.clock === 'shared' ? createClock(config.enableTestClock, ctx.deps.redis) : (overrides.clock ?? new ManualClock());
  const server = await start(
    {
      config,
      pool: overrides.pool ?? ctx.deps.pool,
      redis: ctx.deps.redis,
      clickhouse,
      clock,
      metrics: createMetricsRegistry('ingest-test'),
      ...(overrides.analysisStream ? { analysisStream: overrides.analysisStream } : {}),
    },
    '127.0.0.1',
    0,
  );
  const edge: Edge = {
    url: `http://127.0.0.1:${server.port}`,
    server,
    config,
    clock,
    shipped: () => server.pipeline.shipper.flush(),
    close: async () => {
      runningEdges.delete(edge);
      await server.close();
      if (ownLog) removeLogDir(ownLog);
    },
  };
  runningEdges.add(edge);
  return edge;
}

/** A ClickHouse client on the test database; its own error log is off (fault tests stop the server). */
export function testClickHouse(ctx: TestContext): ClickHouseClient {
  return createClient({
    url: ctx.deps.config.clickhouseUrl,
    database: ctx.deps.config.clickhouseDatabase,
    request_timeout: 10_000,
    compression: { request: false, response: false },
    log: { level: ClickHouseLogLevel.OFF },
  });
}

/** A collector's configuration plus the ids a test needs to look things up. */
export interface Collector {
  /** The account of the collector's workspace (its Redis keys carry the account's hash tag). */
  accountId: string;
  integrationKey: string;
  connectionKey: string;
  ingestToken: string;
  connectionId: string;
  workspaceIntegrationId: string;
  environmentId: string;
  mode: 'sandbox' | 'live';
  direction: 'inbound' | 'outbound';
  protocol: 'http-api' | 'http-webhook' | 'scheduled-feed' | 'queue';
}

export async function createCollector(ctx: TestContext, apiKey: string, input: Partial<CreateIntegrationInput> = {}): Promise<Collector> {
  const direction = input.direction ?? (input.protocol === 'http-webhook' ? 'inbound' : 'outbound');
  const protocol = input.protocol ?? 'http-api';
  const created = await createIntegration(ctx, apiKey, { mode: input.mode ?? 'sandbox', direction, protocol, ...input });
  const account = await ctx.deps.pool.query<{ account_id: string }>(
    'SELECT w.account_id FROM connections c JOIN workspaces w ON w.id = c.workspace_id WHERE c.id = $1',
    [created.integration.connectionId],
  );
  return {
    ...created.collectorConfiguration,
    accountId: account.rows[0].account_id,
    connectionId: created.integration.connectionId,
    workspaceIntegrationId: created.integration.id,
    environmentId: created.integration.environmentId,
    mode: created.integration.mode,
    direction,
    protocol,
  };
}

export const newEventId = () => `evt_${randomBytes(12).toString('hex')}`;

const OPERATION: Record<Collector['protocol'], { method: string; routeTemplate: string; payloadLocation: string; statusCode: number }> = {
  'http-api': { method: 'GET', routeTemplate: '/v1/orders/{orderId}', payloadLocation: 'response', statusCode: 200 },
  'http-webhook': { method: 'POST', routeTemplate: '/webhooks/orders', payloadLocation: 'message', statusCode: 200 },
  queue: { method: 'POST', routeTemplate: 'orders.created', payloadLocation: 'message', statusCode: 202 },
  'scheduled-feed': { method: 'POST', routeTemplate: 'nightly-orders-export', payloadLocation: 'message', statusCode: 200 },
};

export const FINGERPRINT = `sha256:${'ab'.repeat(32)}`;

/** A valid envelope (version 0.2 unless overridden) for the collector's Integration. */
export function envelope(
  collector: Pick<Collector, 'integrationKey' | 'direction' | 'protocol'>,
  overrides: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    envelopeVersion: '0.2',
    eventId: newEventId(),
    tenantId: 'ten_authenticated',
    environmentId: 'env_authenticated',
    integrationId: collector.integrationKey,
    direction: collector.direction,
    protocol: collector.protocol,
    occurredAt: new Date().toISOString(),
    operationIdentityVersion: '1',
    eventType: 'order.created',
    correlation: { sourceEventIdHash: 'hmac:1f2e3d', hashNamespace: 'orders' },
    contract: { observedFingerprint: FINGERPRINT },
    transport: { ...OPERATION[collector.protocol], durationMs: 42.5, attempt: 1 },
    payload: {
      storage: 'none',
      schemaFingerprint: FINGERPRINT,
      schemaShape: {
        kind: 'object',
        fields: { id: { kind: 'string' }, total: { kind: 'number' }, tags: { kind: 'array', items: { kind: 'string' } } },
      },
      redactionPolicyVersion: '2025-01',
    },
    outcome: { accepted: true, businessObjectType: 'order', businessObjectIdHash: 'hmac:9a8b7c' },
    ...overrides,
  };
}

export function signatureHeader(token: string, body: string | Buffer, unixSeconds: number): string {
  const v1 = createHmac('sha256', token).update(`${unixSeconds}.`).update(body).digest('hex');
  return `t=${unixSeconds},v1=${v1}`;
}

/** "Now" of the edge's clock in unix seconds (the test clock may carry an offset). */
export async function edgeSeconds(edge: EdgeAddress): Promise<number> {
  await edge.clock.sync();
  return Math.floor(edge.clock.nowMs() / 1000);
}

export interface SendOptions {
  /** Unix seconds of the signature (default: the service clock). */
  t?: number;
  /** Replaces or removes (null) any header. */
  headers?: Record<string, string | null>;
  /** Signs with another secret than the collector's token. */
  signingKey?: string;
}

/** One item's result in POST /ingest's answer (document 03). */
export interface ItemResult {
  index: number;
  accepted: boolean;
  eventId?: string;
  issues?: string[];
}

/**
 * The members of the edge's JSON answers (document 03): a batch's on POST /ingest (202, 207), the
 * connection check's on GET /v1/collector/connection, `error` on a refusal. Which of them an
 * answer has depends on its route and status.
 */
export interface EdgeAnswerBody {
  accepted?: number;
  persisted?: number;
  results?: ItemResult[];
  connectionId?: string;
  credentialStatus?: string;
  activeContractVersionId?: string | null;
  routes?: { method: string; routeTemplate: string; basePaths: string[] }[];
  routesTruncated?: boolean;
  limits?: { observationsPerMinute: number; requestsPerMinute: number };
  error?: string;
}

export interface EdgeAnswer {
  status: number;
  headers: Headers;
  text: string;
  /** The parsed answer; undefined when it is not JSON. */
  body: EdgeAnswerBody | undefined;
}

async function answer(res: Response): Promise<EdgeAnswer> {
  const text = await res.text();
  let body: EdgeAnswerBody | undefined;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: res.status, headers: res.headers, text, body };
}

async function signedHeaders(edge: EdgeAddress, collector: Collector, body: string, options: SendOptions): Promise<Record<string, string>> {
  const t = options.t ?? (await edgeSeconds(edge));
  const headers: Record<string, string | null> = {
    'content-type': 'application/json',
    'x-service-connection': collector.connectionKey,
    authorization: `Bearer ${collector.ingestToken}`,
    'x-service-signature': signatureHeader(options.signingKey ?? collector.ingestToken, body, t),
    ...options.headers,
  };
  return Object.fromEntries(Object.entries(headers).filter((entry): entry is [string, string] => entry[1] !== null));
}

/** POST /ingest with the exact body string signed (a non-string body is serialised once). */
export async function postBatch(edge: EdgeAddress, collector: Collector, body: unknown, options: SendOptions = {}): Promise<EdgeAnswer> {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  const res = await fetch(`${edge.url}/ingest`, {
    method: 'POST',
    headers: await signedHeaders(edge, collector, text, options),
    body: text,
  });
  return answer(res);
}

export async function sendEnvelopes(
  edge: EdgeAddress,
  collector: Collector,
  envelopes: unknown[],
  options: SendOptions = {},
): Promise<EdgeAnswer> {
  return postBatch(edge, collector, { envelopes }, options);
}

/** GET /v1/collector/connection, signed over `<t>.` and the empty body (or `body` when given). */
export async function checkConnection(
  edge: Edge,
  collector: Collector,
  options: SendOptions & { signedBody?: string } = {},
): Promise<EdgeAnswer> {
  const headers = await signedHeaders(edge, collector, options.signedBody ?? '', options);
  delete headers['content-type'];
  return answer(await fetch(`${edge.url}/v1/collector/connection`, { headers }));
}

/** Rows of a connection in ClickHouse, collapsed by the ReplacingMergeTree key (FINAL); optionally only these eventIds. */
/** The edges of this process that are running (startEdge), for shippedByAll. */
const runningEdges = new Set<Edge>();

/**
 * Lets every running in-process edge ship what it answered as accepted so far (an edge whose
 * shipping fails, ClickHouse being down, gives up at once: the test then reads what is there).
 */
export async function shippedByAll(): Promise<void> {
  await Promise.all([...runningEdges].map((edge) => edge.shipped()));
}

/** The rows of a connection after FINAL (once the running edges have shipped what they accepted). */
export async function countObservations(clickhouse: ClickHouseClient, connectionId: string, eventIds?: string[]): Promise<number> {
  await shippedByAll();
  return countStoredNow(clickhouse, connectionId, eventIds);
}

/** The same count, of what ClickHouse holds now: running edges are not asked to ship first. */
export async function countStoredNow(clickhouse: ClickHouseClient, connectionId: string, eventIds?: string[]): Promise<number> {
  const count = async (filter: string) => {
    const result = await clickhouse.query({
      query: `SELECT count() AS n FROM observations FINAL WHERE connection_id = ${sqlLiteral(connectionId)}${filter}`,
      format: 'JSONEachRow',
    });
    return Number((await result.json<{ n: string | number }>())[0].n);
  };
  if (!eventIds) return count('');
  let total = 0;
  // ClickHouse caps the query text (max_query_size): ask in slices.
  for (let offset = 0; offset < eventIds.length; offset += 2_000) {
    total += await count(
      ` AND event_id IN (${eventIds
        .slice(offset, offset + 2_000)
        .map(sqlLiteral)
        .join(', ')})`,
    );
  }
  return total;
}

/** Every stored row of a connection (FINAL) with its ALIAS columns too, for field-level checks. */
export async function observationRows(clickhouse: ClickHouseClient, connectionId: string): Promise<Record<string, unknown>[]> {
  await shippedByAll();
  const result = await clickhouse.query({
    query: `SELECT *, ${OBSERVATION_ALIAS_COLUMNS.join(', ')} FROM observations FINAL WHERE connection_id = ${sqlLiteral(connectionId)} ORDER BY event_id`,
    format: 'JSONEachRow',
  });
  return result.json<Record<string, unknown>>();
}

/**
 * The de-duplication period `nowMs` falls in for a window of `windowSeconds`, worked out here
 * independently of ADMIT (periods of a third of the window) so that tests can check the script.
 */
export function dedupPeriod(nowMs: number, windowSeconds: number): number {
  return Math.floor(Math.floor(nowMs / 1000) / Math.ceil(windowSeconds / (DEDUP_PERIODS - 1)));
}

/** The digests (hex) of a de-duplication bucket. */
export function bucketDigests(text: Buffer): string[] {
  const digests: string[] = [];
  for (let at = 0; at < text.length; at += EVENT_ID_DIGEST_BYTES)
    digests.push(text.subarray(at, at + EVENT_ID_DIGEST_BYTES).toString('hex'));
  return digests;
}

/**
 * Where ADMIT keeps an eventId: the de-duplication sets of the current period and the three
 * before it (most recent first), in the bucket the set's meta names for the eventId's digest
 * (keys.ts), then the hashes of the form before buckets. Returns the key and the digest in hex
 * (or, in a hash of the form before buckets, the value), or null.
 */
export async function dedupEntry(
  redis: Redis,
  target: { accountId: string; connectionId: string },
  eventId: string,
  windowSeconds: number,
  nowMs = Date.now(),
): Promise<{ key: string; value: string } | null> {
  const current = dedupPeriod(nowMs, windowSeconds);
  const digest = eventIdDigest(eventId);
  for (let back = 0; back < DEDUP_PERIODS; back += 1) {
    const metaKey = IngestKeys.eventIdMeta(target.accountId, target.connectionId, current - back);
    const meta = await redis.get(metaKey);
    if (meta === null) continue;
    const key = dedupBucketsKey(metaKey);
    const text = await redis.hgetBuffer(key, String(dedupBucket(digest, Number(meta.split(':')[0]))));
    if (text !== null && bucketDigests(text).includes(digest.toString('hex'))) return { key, value: digest.toString('hex') };
  }
  for (let back = 0; back < DEDUP_PERIODS; back += 1) {
    const key = IngestKeys.eventIds(target.accountId, target.connectionId, current - back);
    const value = await redis.hget(key, eventId);
    if (value !== null) return { key, value };
  }
  return null;
}

/**
 * One connection's de-duplication set of one period: its keys (meta, buckets hash), its counts,
 * and per bucket its digests (hex).
 */
export async function dedupSet(
  redis: Redis,
  metaKey: string,
): Promise<{ buckets: number; count: number; keys: string[]; digests: string[][]; fields: string[] }> {
  const meta = await redis.get(metaKey);
  if (meta === null) return { buckets: 0, count: 0, keys: [], digests: [], fields: [] };
  const [buckets, count] = meta.split(':').map(Number);
  const key = dedupBucketsKey(metaKey);
  const all = await redis.hgetallBuffer(key);
  const digests = Array.from({ length: buckets }, (_, index) => bucketDigests(all[String(index)] ?? Buffer.alloc(0)));
  return { buckets, count, keys: [metaKey, key], digests, fields: Object.keys(all) };
}
