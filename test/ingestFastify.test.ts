import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClickHouseClient } from '../shared/clickhouse/client.js';
import { bootstrapWorkspace, createTestContext, type TestContext } from './helpers/context.js';
import {
  checkConnection,
  countObservations,
  createCollector,
  envelope,
  postBatch,
  sendEnvelopes,
  startFastifyEdge,
  testClickHouse,
  type Edge,
} from './helpers/ingest.js';

// The same pipeline behind Fastify (the adapter the benchmark compares with): identical answers.

let ctx: TestContext;
let clickhouse: ClickHouseClient;
let edge: Edge;

beforeAll(async () => {
  ctx = await createTestContext();
  clickhouse = testClickHouse(ctx);
  edge = await startFastifyEdge(ctx, clickhouse);
});
afterAll(async () => {
  await edge.close();
  await clickhouse.close();
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
    expect(mixed.body?.results?.[1]).toEqual({ index: 1, accepted: false, issues: ['tenant does not match credential'] });
    expect((await postBatch(edge, collector, '[]')).body).toEqual({ error: 'expected { envelopes: [...] }' });
    expect((await postBatch(edge, collector, '{"envelopes":')).body).toEqual({ error: 'invalid_request' });
    expect((await sendEnvelopes(edge, collector, [good], { headers: { 'x-service-signature': 'bad' } })).body).toEqual({
      error: 'unauthenticated',
      reason: 'malformed',
    });
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
