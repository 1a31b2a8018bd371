import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, bootstrapWorkspace, callWithKey, type TestContext } from './helpers/context.js';

let ctx: TestContext;
beforeAll(async () => { ctx = await createTestContext(); });
afterAll(async () => { await ctx.close(); });

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
