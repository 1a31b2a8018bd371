import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RouteOptions } from 'fastify';
import { buildApp } from '../management/app.js';
import {
  bootstrapWorkspace,
  callWithKey,
  callWithSession,
  createTestContext,
  newIdempotencyKey,
  type TestContext,
} from './helpers/context.js';
import type { BootstrapResult } from '../management/admin/bootstrap.js';
import { registerDraft } from './helpers/contracts.js';
import { createCollector } from './helpers/ingest.js';

// Issue 27 item 6: `Cache-Control: no-store` comes from one onSend hook (management/plugins/noStore.ts),
// not from each route. Every answer carries it (01 and 02 Conventions, docs/decisions/api-conventions.md), errors
// on every route included, except the own answers of the probes (no header), of the API
// documentation and of the console's static files (`no-cache`).

let ctx: TestContext;
let owner: BootstrapResult;
/** Every route the app registers (the route objects, read once the app is built). */
const routes: RouteOptions[] = [];

/** The routes whose own answers are not `no-store`. */
const CACHEABLE = [
  '/healthz',
  '/readyz',
  '/metrics',
  '/openapi.json',
  '/assets/console.css',
  '/assets/console.js',
  '/assets/device.js',
  '/assets/send-json.js',
  '/assets/icon.svg',
];
/** The console pages: they answer a page (a sign-in form) to anyone, so no request without input fails. */
const PAGES = ['/device', '/', '/console/signup', '/console/verify-email'];
/** A workspace's console pages (management/console/consoleRoute.ts): a redirect to sign-in without a session. */
const isWorkspacePage = (url: string) => url.startsWith('/console/workspaces/');
const isDocs = (url: string) => url === '/docs' || url.startsWith('/docs/');

beforeAll(async () => {
  ctx = await createTestContext();
  owner = await bootstrapWorkspace(ctx);
  const lister = await buildApp(ctx.deps, {
    onRoute: (route: RouteOptions) => {
      routes.push(route);
    },
  });
  await lister.ready();
  await lister.close();
});
afterAll(async () => {
  await ctx.close();
});

describe('Cache-Control: no-store', () => {
  it('is on the answers of API key routes: reads, a 201 write and its replay', async () => {
    for (const url of ['/v1/integrations', '/v1/environments', '/v1/usage']) {
      const res = await callWithKey(ctx, owner.apiKey.key, 'GET', url);
      expect(res.statusCode, `${url} ${res.body}`).toBe(200);
      expect(res.headers['cache-control'], url).toBe('no-store');
    }
    const idempotencyKey = newIdempotencyKey();
    const body = { mode: 'sandbox', name: 'Orders sync', provider: 'Acme', direction: 'outbound', protocol: 'http-api' };
    const created = await callWithKey(ctx, owner.apiKey.key, 'POST', '/v1/integrations', { idempotencyKey, body });
    expect(created.statusCode, created.body).toBe(201);
    expect(created.headers['cache-control']).toBe('no-store');
    const replay = await callWithKey(ctx, owner.apiKey.key, 'POST', '/v1/integrations', { idempotencyKey, body });
    expect(replay.statusCode, replay.body).toBe(200);
    expect(replay.headers['cache-control']).toBe('no-store');
    const { integration } = created.json();
    for (const url of [
      `/v1/integrations/${integration.id}`,
      `/v1/connections/${integration.connectionId}`,
      `/v1/connections/${integration.connectionId}/credentials`,
    ]) {
      const res = await callWithKey(ctx, owner.apiKey.key, 'GET', url);
      expect(res.statusCode, `${url} ${res.body}`).toBe(200);
      expect(res.headers['cache-control'], url).toBe('no-store');
    }
  });

  it('is on the answers of console session routes', async () => {
    for (const url of ['/workspaces', '/billing-accounts', `/workspaces/${owner.workspace.slug}/api-keys`]) {
      const res = await callWithSession(ctx, owner.sessionToken, 'GET', url);
      expect(res.statusCode, `${url} ${res.body}`).toBe(200);
      expect(res.headers['cache-control'], url).toBe('no-store');
    }
  });

  it('is on error answers: domain, authentication, validation, unknown routes and refused URLs', async () => {
    const answers = [
      await callWithKey(ctx, owner.apiKey.key, 'GET', '/v1/integrations/wint_00000000000000000000000000'),
      await callWithKey(ctx, null, 'GET', '/v1/usage'),
      await callWithKey(ctx, owner.apiKey.key, 'GET', '/v1/usage?unknown=1'),
      await callWithKey(ctx, owner.apiKey.key, 'POST', '/v1/integrations', {
        idempotencyKey: newIdempotencyKey(),
        body: { mode: 'nowhere' },
      }),
      await ctx.app.inject({ method: 'GET', url: '/nowhere' }),
      await ctx.app.inject({ method: 'GET', url: '/%E0%A4%A' }),
    ];
    expect(answers.map((res) => res.statusCode)).toEqual([404, 401, 400, 400, 404, 400]);
    for (const res of answers) expect(res.headers['cache-control'], res.body).toBe('no-store');
  });

  it('is on the console pages, with or without a session', async () => {
    for (const url of PAGES) {
      for (const cookie of [undefined, `session=${owner.sessionToken}`]) {
        const res = await ctx.app.inject({ method: 'GET', url, headers: cookie ? { cookie } : {} });
        expect(res.statusCode, url).toBe(200);
        expect(res.headers['cache-control'], url).toBe('no-store');
      }
    }
  });

  it("is on a workspace's console pages: the page, the 404 page and the redirect to sign-in", async () => {
    const pages = routes.filter((route) => isWorkspacePage(route.url));
    expect(pages.length).toBeGreaterThan(0);
    const cookie = `session=${owner.sessionToken}`;
    // The pages of one connection or contract version (the contract and rule pages) get real ones of the owner's.
    const collector = await createCollector(ctx, owner.apiKey.key, { mode: 'sandbox' });
    const draft = await registerDraft(ctx, owner.apiKey.key, collector.connectionId, {
      declaredVersion: '1',
      format: 'openapi',
      document: {
        openapi: '3.0.3',
        info: { title: 'x', version: '1' },
        paths: {
          '/x': { get: { responses: { '200': { description: 'x', content: { 'application/json': { schema: { type: 'object' } } } } } } },
        },
      },
    });
    const known: Record<string, string> = { connectionId: collector.connectionId, contractVersionId: draft.contract.id };
    for (const route of pages) {
      for (const [slug, headers, status] of [
        [owner.workspace.slug, { cookie }, 200],
        ['x', { cookie }, 404],
        [owner.workspace.slug, {}, 303],
      ] as const) {
        const url = route.url.replace(':workspaceSlug', slug).replace(/:([A-Za-z]+)/g, (_, name: string) => known[name] ?? `:${name}`);
        const res = await ctx.app.inject({ method: 'GET', url, headers });
        // A page of one resource this test made none of (`:incidentId`) named by its literal
        // parameter finds none: its own 4xx, as no-store as any answer.
        const named = /:\w+/.test(url);
        if (named && status === 200) expect([400, 404], url).toContain(res.statusCode);
        else expect(res.statusCode, url).toBe(status);
        expect(res.headers['cache-control'], url).toBe('no-store');
      }
    }
  });

  it('is on the errors of the probe, documentation and console routes too', async () => {
    for (const [method, url, status] of [
      ['POST', '/healthz', 404],
      ['GET', '/docs/static/nothing.js', 404],
      ['DELETE', '/openapi.json', 404],
      ['GET', '/assets/nothing.js', 404],
      ['GET', '/device?unknown=1', 400],
    ] as const) {
      const res = await ctx.app.inject({ method, url });
      expect(res.statusCode, `${method} ${url}`).toBe(status);
      expect(res.headers['cache-control'], `${method} ${url}`).toBe('no-store');
    }
  });

  it('is on the error answer of every registered route but the probes, the documentation and the console pages', async () => {
    const checked = routes.filter(
      (route) => !CACHEABLE.includes(route.url) && !isDocs(route.url) && !PAGES.includes(route.url) && !isWorkspacePage(route.url),
    );
    expect(checked.length).toBeGreaterThan(60);
    for (const route of checked) {
      for (const method of [route.method].flat()) {
        const url = route.url.replace(/:[A-Za-z]+/g, 'x');
        const res = await ctx.app.inject({
          method: method as 'GET',
          url,
          ...(method === 'GET' || method === 'HEAD' ? {} : { payload: {} }),
        });
        expect(res.statusCode, `${method} ${url}`).toBeGreaterThanOrEqual(400);
        expect(res.headers['cache-control'], `${method} ${url}`).toBe('no-store');
      }
    }
  });
});

describe('without no-store', () => {
  it('leaves the probes and metrics without Cache-Control', async () => {
    for (const url of ['/healthz', '/readyz', '/metrics']) {
      const res = await ctx.app.inject({ method: 'GET', url });
      expect(res.statusCode, url).toBe(200);
      expect(res.headers['cache-control'], url).toBeUndefined();
    }
  });

  it('serves the OpenAPI document and the reference page `no-cache`', async () => {
    for (const url of ['/openapi.json', '/docs', '/docs/json', '/docs/static/swagger-initializer.js']) {
      const res = await ctx.app.inject({ method: 'GET', url });
      expect(res.statusCode, url).toBe(200);
      expect(res.headers['cache-control'], url).toBe('no-cache');
    }
  });

  it('serves the console assets `no-cache`', async () => {
    const res = await ctx.app.inject({ method: 'GET', url: '/assets/device.js' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('no-cache');
  });

  it('exempts exactly the probe, documentation and asset routes', () => {
    const exempt = new Set(routes.filter((route) => route.config?.noStore === false).map((route) => route.url));
    expect([...exempt].filter((url) => !isDocs(url)).sort()).toEqual([...CACHEABLE].sort());
    expect(routes.filter((route) => isDocs(route.url) && route.config?.noStore !== false).map((route) => route.url)).toEqual([]);
  });
});
