import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMetricsRegistry } from '../shared/metrics.js';
import type { ClickHouseClient } from '../shared/clickhouse/client.js';
import { startFastifyIngestServer } from '../ingest/http/fastifyAdapter.js';
import { bootstrapWorkspace, createTestContext, type TestContext } from './helpers/context.js';
import { ManualClock, checkConnection, countObservations, createCollector, envelope, postBatch, sendEnvelopes, testClickHouse, type Edge } from './helpers/ingest.js';
import { newLogDir, removeLogDir } from './helpers/logDirs.js';

// The same pipeline behind Fastify (the adapter the benchmark compares with): identical answers.

let ctx: TestContext;
let clickhouse: ClickHouseClient;
let walDir: string;
let edge: Edge;

beforeAll(async () => {
  ctx = await createTestContext();
  clickhouse = testClickHouse(ctx);
  const clock = new ManualClock();
  walDir = newLogDir('edge-wal-fastify-');
  const server = await startFastifyIngestServer(
    { config: { ...ctx.deps.config, ingest: { ...ctx.deps.config.ingest, walDir, shipIntervalMs: 20 } }, pool: ctx.deps.pool, redis: ctx.deps.redis, clickhouse, clock, metrics: createMetricsRegistry('ingest-fastify-test') },
    '127.0.0.1', 0,
  );
  edge = { url: `http://127.0.0.1:${server.port}`, server, config: ctx.deps.config, clock, shipped: () => server.pipeline.shipper.flush(), close: () => server.close() };
});
afterAll(async () => {
  await edge.close();
  await clickhouse.close();
  removeLogDir(walDir);
  await ctx.close();
});

describe('Fastify adapter', () => {
  it('accepts, rejects and refuses exactly like the uWebSockets.js edge', async () => {
    const boot = await bootstrapWorkspace(ctx);
    const collector = await createCollector(ctx, boot.apiKey.key);
    const good = envelope(collector);
    const accepted = await sendEnvelopes(edge, collector, [good]);
    expect(accepted.status).toBe(202);
    expect(accepted.headers.get('cache-control')).toBe('no-store');
    expect(accepted.body).toEqual({ accepted: 1, persisted: 1, results: [{ index: 0, accepted: true, eventId: good.eventId }] });
    const mixed = await sendEnvelopes(edge, collector, [good, envelope(collector, { tenantId: 'ten_other' })]);
    expect(mixed.status).toBe(207);
    expect(mixed.body.results[1]).toEqual({ index: 1, accepted: false, issues: ['tenant does not match credential'] });
    expect((await postBatch(edge, collector, '[]')).body).toEqual({ error: 'expected { envelopes: [...] }' });
    expect((await postBatch(edge, collector, '{"envelopes":')).body).toEqual({ error: 'invalid_request' });
    expect((await sendEnvelopes(edge, collector, [good], { headers: { 'x-service-signature': 'bad' } })).body).toEqual({ error: 'unauthenticated', reason: 'malformed' });
    const tooLarge = await postBatch(edge, collector, `{"envelopes":[]}${' '.repeat(1024 * 1024)}`);
    expect(tooLarge.status).toBe(413);
    expect(tooLarge.body).toEqual({ error: 'request_too_large' });
    expect((await checkConnection(edge, collector)).status).toBe(200);
    await edge.shipped();
    expect(await countObservations(clickhouse, collector.connectionId)).toBe(1);
    expect((await fetch(`${edge.url}/readyz`)).status).toBe(200);
    expect((await fetch(`${edge.url}/nope`)).status).toBe(404);
  });
});
