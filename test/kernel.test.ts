import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../management/app.js';
import { createPool } from '../shared/db/pool.js';
import { connectRedis } from '../shared/redis.js';
import { createTestContext, bootstrapWorkspace, callWithKey, type TestContext } from './helpers/context.js';

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(async () => {
  await ctx.close();
});

describe('management kernel', () => {
  it('answers /healthz and /readyz', async () => {
    expect((await ctx.app.inject({ url: '/healthz' })).statusCode).toBe(200);
    const ready = await ctx.app.inject({ url: '/readyz' });
    expect(ready.json()).toMatchObject({ status: 'ready', postgres: true, redis: true });
  });

  it('serves Prometheus metrics', async () => {
    const res = await ctx.app.inject({ url: '/metrics' });
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('http_requests_total');
  });

  it('answers unknown routes with not_found', async () => {
    const res = await ctx.app.inject({ url: '/nope' });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error: 'not_found' });
  });

  it('bootstraps a workspace with a usable API key', async () => {
    const boot = await bootstrapWorkspace(ctx);
    expect(boot.apiKey.key).toMatch(/^svc_api_/);
    expect(boot.workspace.id).toMatch(/^ws_/);
    const stored = await ctx.deps.pool.query('SELECT key_hash FROM api_keys WHERE id = $1', [boot.apiKey.id]);
    expect(stored.rows[0].key_hash).not.toContain(boot.apiKey.key);
    const res = await callWithKey(ctx, 'svc_api_bad', 'GET', '/healthz');
    expect(res.statusCode).toBe(200);
  });
});

describe('global error handler', () => {
  it('answers a body over 1 MiB with 413 request_too_large', async () => {
    const boot = await bootstrapWorkspace(ctx);
    const res = await ctx.app.inject({
      method: 'POST',
      url: '/v1/integrations',
      headers: { authorization: `Bearer ${boot.apiKey.key}`, 'idempotency-key': 'too-large-0001', 'content-type': 'application/json' },
      payload: JSON.stringify({ name: 'x'.repeat(1024 * 1024) }),
    });
    expect(res.statusCode).toBe(413);
    expect(res.json()).toEqual({ error: 'request_too_large' });
  });

  it('answers unparsable JSON with 400 invalid_request', async () => {
    const boot = await bootstrapWorkspace(ctx);
    const res = await ctx.app.inject({
      method: 'POST',
      url: '/v1/integrations',
      headers: { authorization: `Bearer ${boot.apiKey.key}`, 'idempotency-key': 'bad-json-0001', 'content-type': 'application/json' },
      payload: '{"mode": "sandbox",',
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: 'invalid_request' });
  });

  it('answers an unexpected failure with 500 service_unavailable and no detail', async () => {
    const app = await buildApp(ctx.deps);
    app.get('/boom', async () => {
      throw new Error('secret internal detail');
    });
    const res = await app.inject({ url: '/boom' });
    await app.close();
    expect(res.statusCode).toBe(500);
    expect(res.json()).toEqual({ error: 'service_unavailable' });
    expect(res.body).not.toContain('secret');
  });

  it('answers 503 service_unavailable when PostgreSQL cannot be reached', async () => {
    const pool = createPool('postgres://svc:svc@127.0.0.1:1/svc_test');
    const app = await buildApp({ ...ctx.deps, pool });
    const res = await app.inject({ url: '/v1/environments', headers: { authorization: `Bearer svc_api_${'a'.repeat(43)}` } });
    await app.close();
    await pool.end();
    expect(res.statusCode).toBe(503);
    expect(res.json()).toEqual({ error: 'service_unavailable' });
  });

  it('answers 503 service_unavailable when Redis cannot be reached, and writes nothing', async () => {
    const boot = await bootstrapWorkspace(ctx);
    const redis = await connectRedis(ctx.deps.config.redisUrl);
    redis.disconnect();
    const app = await buildApp({ ...ctx.deps, redis });
    const res = await app.inject({
      method: 'POST',
      url: '/v1/integrations',
      headers: { authorization: `Bearer ${boot.apiKey.key}`, 'idempotency-key': 'redis-down-0001', 'content-type': 'application/json' },
      payload: JSON.stringify({ name: 'Redis down', provider: 'Acme', protocol: 'http-api', direction: 'outbound', mode: 'sandbox' }),
    });
    await app.close();
    expect(res.statusCode).toBe(503);
    expect(res.json()).toEqual({ error: 'service_unavailable' });
    const written = await ctx.deps.pool.query('SELECT count(*)::int AS n FROM integrations WHERE workspace_id = $1', [boot.workspace.id]);
    expect(written.rows[0].n).toBe(0);
  });
});
