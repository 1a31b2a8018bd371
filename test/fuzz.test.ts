import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import type { RouteOptions } from 'fastify';
import { ERROR_CATALOGUE } from '../shared/errors/index.js';
import { buildApp } from '../management/app.js';
import { bootstrapWorkspace, createTestContext, type TestContext } from './helpers/context.js';
import type { BootstrapResult } from '../management/admin/bootstrap.js';
import { createIntegration } from './helpers/integrations.js';
import { malformedRequests } from './helpers/malformedHttp.js';
import { catalogueViolation, sendRaw } from './helpers/rawHttp.js';

// Bad input never gives a 500 (issue: foundation, Done means): random bodies, headers, keys and
// path ids against every route the management plane registers, answered only with catalogued
// 4xx codes whose status matches the catalogue (or a 2xx for input that happens to be valid).
// Requests broken at the protocol level go over raw sockets (issue 12, defect 3).

let ctx: TestContext;
let port: number;
let owner: BootstrapResult;
let stranger: BootstrapResult;
const realIds: string[] = [];
const routes: { method: string; url: string }[] = [];

beforeAll(async () => {
  ctx = await createTestContext();
  await ctx.app.listen({ host: '127.0.0.1', port: 0 });
  port = (ctx.app.server.address() as AddressInfo).port;
  const lister = await buildApp(ctx.deps, {
    onRoute: (route: RouteOptions) => {
      for (const method of [route.method].flat()) if (method !== 'HEAD') routes.push({ method, url: route.url });
    },
  });
  await lister.close();
  routes.splice(0, routes.length, ...routes.filter((route) => !['/healthz', '/readyz', '/metrics'].includes(route.url)));
  owner = await bootstrapWorkspace(ctx);
  stranger = await bootstrapWorkspace(ctx);
  const created = await createIntegration(ctx, owner.apiKey.key, { mode: 'sandbox' });
  realIds.push(created.integration.id, created.integration.connectionId, created.operationId, created.integration.environmentId);
});
afterAll(async () => { await ctx.close(); });

const DUAL_STATUS = new Map<string, number[]>([['integration_scope_mismatch', [403, 409]], ['service_unavailable', [503]]]);

function idCandidates(): fc.Arbitrary<string> {
  return fc.oneof(
    fc.constantFrom('wint_00000000000000000000000000', 'int_00000000000000000000000000', 'x', '%2e%2e', 'intop_01', 'credop_x'),
    fc.constantFrom(owner.workspace.slug, stranger.workspace.slug, owner.account.id, stranger.account.id, owner.apiKey.id, ...realIds),
    fc.string({ minLength: 1, maxLength: 30 }).map((s) => encodeURIComponent(s)),
  );
}

function fillParams(url: string, values: string[]): string {
  let i = 0;
  return url.replace(/:[A-Za-z]+/g, () => values[i++ % values.length] || 'x');
}

const bodies = fc.oneof(
  fc.constant(undefined),
  fc.jsonValue().map((value) => JSON.stringify(value)),
  fc.dictionary(fc.constantFrom('name', 'mode', 'provider', 'direction', 'protocol', 'expectedRevision', 'email', 'password', 'scopes', 'token', 'slug', 'billingAccountId', 'connectionKey', 'ingestToken', 'expiresInSeconds', 'extra'), fc.oneof(fc.jsonValue(), fc.constantFrom('sandbox', 'live', 'outbound', 'http-api', 'all', 'integrations:read', 'x'.repeat(121)))).map((v) => JSON.stringify(v)),
  fc.string({ maxLength: 200 }),
);

describe('fuzz: every management route', () => {
  it('collects the registered routes', () => {
    expect(routes.length).toBeGreaterThan(0);
  });

  it('answers random input only with catalogued codes, never 5xx', async () => {
    expect(routes.length).toBeGreaterThan(0);
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...routes),
        fc.array(idCandidates(), { minLength: 1, maxLength: 3 }),
        bodies,
        fc.constantFrom<'none' | 'key' | 'strangerKey' | 'garbage' | 'session' | 'strangerSession'>('none', 'key', 'strangerKey', 'garbage', 'session', 'strangerSession'),
        fc.option(fc.string({ maxLength: 140 }), { nil: undefined }),
        fc.constantFrom('application/json', 'text/plain', 'application/x-www-form-urlencoded', undefined),
        fc.option(fc.dictionary(fc.constantFrom('limit', 'cursor', 'view', 'environmentId', 'x'), fc.string({ maxLength: 20 })), { nil: undefined }),
        async (route, ids, body, auth, idempotencyKey, contentType, query) => {
          const headers: Record<string, string> = {};
          if (auth === 'key') headers.authorization = `Bearer ${owner.apiKey.key}`;
          if (auth === 'strangerKey') headers.authorization = `Bearer ${stranger.apiKey.key}`;
          if (auth === 'garbage') headers.authorization = 'Bearer svc_api_garbage';
          if (auth === 'session') headers.cookie = `session=${owner.sessionToken}`;
          if (auth === 'strangerSession') headers.cookie = `session=${stranger.sessionToken}`;
          headers.origin = ctx.deps.config.consoleOrigin;
          if (idempotencyKey !== undefined && /^[\x20-\x7e]*$/.test(idempotencyKey)) headers['idempotency-key'] = idempotencyKey;
          if (contentType && body !== undefined) headers['content-type'] = contentType;
          const search = query ? '?' + new URLSearchParams(query).toString() : '';
          const res = await ctx.app.inject({ method: route.method as 'GET', url: fillParams(route.url, ids) + search, headers, payload: body });
          expect(res.statusCode, `${route.method} ${route.url} → ${res.statusCode} ${res.body}`).toBeLessThan(500);
          if (res.statusCode >= 400) {
            const code = res.json().error as string;
            const spec = (ERROR_CATALOGUE as Record<string, { status: number }>)[code];
            expect(spec, `${route.method} ${route.url}: uncatalogued ${code}`).toBeDefined();
            const allowed = DUAL_STATUS.get(code) ?? [spec.status];
            expect(allowed, `${route.method} ${route.url}: ${code} with ${res.statusCode}`).toContain(res.statusCode);
          }
        },
      ),
      { numRuns: 2500 },
    );
  });
});

describe('fuzz: protocol-level malformations over raw sockets', () => {
  it('answers every malformed request, only with catalogue answers, and HEAD without a body', async () => {
    const paths = fc.tuple(fc.constantFrom(...routes, { method: 'GET', url: '/healthz' }, { method: 'GET', url: '/nowhere' }), fc.array(idCandidates(), { minLength: 1, maxLength: 3 }))
      .map(([route, ids]) => fillParams(route.url, ids));
    const auth = fc.constantFrom<string[]>(
      [],
      [`Authorization: Bearer ${owner.apiKey.key}`],
      [`Cookie: session=${owner.sessionToken}`, `Origin: ${ctx.deps.config.consoleOrigin}`],
    );
    await fc.assert(
      fc.asyncProperty(malformedRequests(paths, auth), async (request) => {
        const exchange = await sendRaw(port, request.bytes, { head: request.head, waitMs: 3000, graceMs: 5 });
        const sent = JSON.stringify(request.bytes.toString('latin1').slice(0, 300));
        expect(exchange.responses.length, `no answer to ${sent}`).toBeGreaterThan(0);
        for (const response of exchange.responses) {
          expect(response.status, sent).toBeLessThan(500);
          expect(catalogueViolation(response, { head: request.head }), sent).toBeNull();
        }
        expect(exchange.rest.toString('latin1'), `bytes after the answer to ${sent}`).toBe('');
      }),
      { numRuns: 400 },
    );
  });
});
