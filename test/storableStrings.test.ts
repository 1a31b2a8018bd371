import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LightMyRequestResponse, RouteOptions } from 'fastify';
import { ERROR_CATALOGUE } from '../shared/errors/index.js';
import { buildApp } from '../management/app.js';
import type { BootstrapResult } from '../management/admin/bootstrap.js';
import { bootstrapWorkspace, createTestContext, newIdempotencyKey, type TestContext } from './helpers/context.js';
import { openApiRegistration, registerVersion } from './helpers/contracts.js';
import { createIntegration } from './helpers/integrations.js';
import { newId } from '../shared/ids.js';
import { loginCli, serveOnLoopback, type CliSession } from './helpers/cli.js';

// Issue 12, defect 2: strings PostgreSQL cannot store (U+0000, lone surrogates) never reach it.
// Generated from the registered routes: every path parameter, every string field of every body
// schema (nested members, array items, open documents) and every query parameter.

interface Schema {
  type?: string | string[];
  enum?: unknown[];
  anyOf?: Schema[];
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  minItems?: number;
  minLength?: number;
  minimum?: number;
  minProperties?: number;
  additionalProperties?: unknown;
  pattern?: string;
}

/** Values of the patterns body schemas use (a sample must pass the schema to reach the handler). */
const PATTERN_SAMPLES: Record<string, string> = {
  '^sha256:[0-9a-f]{64}$': `sha256:${'0'.repeat(64)}`,
  // A deletion's `operationId` (well-formed, naming no review).
  '^del_[0-9a-hjkmnp-tv-z]{26}$': `del_${'0'.repeat(26)}`,
};

interface Route {
  method: string;
  url: string;
  params: string[];
  body?: Schema;
  querystring?: Schema;
  validationError?: string;
}

const UNSTORABLE = ['a\u0000b', 'a\ud800b', '\udc00'];

let ctx: TestContext;
let owner: BootstrapResult;
/** The owner's CLI client, which authenticates the `/v1/cli` routes. */
let cli: CliSession;
const routes: Route[] = [];
/** A stored value for each path parameter name, so a request reaches the parameter under test. */
const known: Record<string, string> = {};
/** The query a route needs before it looks its path parameter up. */
const requiredQuery: Record<string, string> = {};
/** The workspace pages of the console (management/console/consoleRoute.ts). */
const consolePages: string[] = [];

beforeAll(async () => {
  ctx = await createTestContext();
  const lister = await buildApp(ctx.deps, {
    onRoute: (route: RouteOptions) => {
      if (['/healthz', '/readyz', '/metrics'].includes(route.url)) return;
      // A workspace's console pages answer HTML (a redirect, the 404 page): checked on their own below.
      if (route.url.startsWith('/console/workspaces/')) {
        consolePages.push(route.url);
        return;
      }
      const schema = (route.schema ?? {}) as { body?: Schema; querystring?: Schema };
      const params = [...route.url.matchAll(/:([A-Za-z]+)/g)].map((match) => match[1]);
      for (const method of [route.method].flat()) {
        if (method === 'HEAD') continue;
        routes.push({
          method,
          url: route.url,
          params,
          body: schema.body,
          querystring: schema.querystring,
          validationError: route.config?.validationError,
        });
      }
    },
  });
  await lister.close();

  owner = await bootstrapWorkspace(ctx);
  const baseUrl = await serveOnLoopback(ctx);
  cli = await loginCli(baseUrl, owner.sessionToken);
  // A second client of the owner: the stored `clientId` (requests name it only changed, never revoke it).
  const otherClient = await loginCli(baseUrl, owner.sessionToken);
  const created = await createIntegration(ctx, owner.apiKey.key, { mode: 'sandbox' });
  const draft = await registerVersion(ctx, owner.apiKey.key, created.integration.connectionId, openApiRegistration('v1'));
  expect(draft.statusCode, draft.body).toBe(201);
  Object.assign(known, {
    workspaceSlug: owner.workspace.slug,
    accountId: owner.account.id,
    id: owner.apiKey.id,
    workspaceIntegrationId: created.integration.id,
    connectionId: created.integration.connectionId,
    integrationId: created.integration.connectionId,
    operationId: created.operationId,
    contractVersionId: (draft.json() as { contract: { id: string } }).contract.id,
    // Well-formed and unknown: these reads answer 404 for any id they cannot find.
    eventId: 'evt_storable0',
    incidentId: newId('inc_'),
    ruleId: newId('rule_'),
    proposalId: newId('rp_'),
    datasetId: newId('rds_'),
    runId: newId('rrun_'),
    clientId: otherClient.clientId,
  });
  Object.assign(requiredQuery, {
    '/v1/observations/:eventId': `integrationId=${created.integration.connectionId}`,
    '/v1/incidents/:incidentId': 'mode=sandbox',
    '/v1/repair-proposals/:proposalId': 'mode=sandbox',
  });
});
afterAll(async () => {
  await ctx.close();
});

/** The same form with another last character: well-formed, and naming nothing stored. */
const unknownLike = (value: string) => value.slice(0, -1) + (value.endsWith('0') ? '1' : '0');

/**
 * A body that passes the schema: required members (and optional ones in order up to
 * `minProperties`), first enum values, null or `{}` where allowed.
 */
function sample(schema: Schema): unknown {
  if (schema.anyOf) return sample(schema.anyOf[schema.anyOf.length - 1]);
  if (schema.enum) return schema.enum[0];
  switch ([schema.type].flat()[0]) {
    case 'object': {
      const names = [...(schema.required ?? [])];
      for (const name of Object.keys(schema.properties ?? {}))
        if (names.length < (schema.minProperties ?? 0) && !names.includes(name)) names.push(name);
      return Object.fromEntries(names.map((name) => [name, sample(schema.properties?.[name] ?? {})]));
    }
    case 'array':
      return schema.minItems ? [sample(schema.items ?? {})] : [];
    case 'string':
      return PATTERN_SAMPLES[schema.pattern ?? ''] ?? 'x'.repeat(Math.max(1, schema.minLength ?? 1));
    case 'integer':
    case 'number':
      return schema.minimum ?? 0;
    case 'boolean':
      return false;
    default:
      return null;
  }
}

type Field = { path: (string | number)[]; open: boolean };

/** Where strings go in a body: string members and items, and open documents (any member name or value). */
function stringFields(schema: Schema, path: (string | number)[] = []): Field[] {
  const alternatives = schema.anyOf ?? [schema];
  return alternatives.flatMap((alternative): Field[] => {
    const types = [alternative.type].flat();
    if (types.includes('string')) return [{ path, open: false }];
    if (types.includes('array') && alternative.items) return stringFields(alternative.items, [...path, 0]);
    if (!types.includes('object')) return [];
    if (!alternative.properties && !alternative.additionalProperties) return [{ path, open: true }];
    return Object.entries(alternative.properties ?? {}).flatMap(([name, child]) => stringFields(child, [...path, name]));
  });
}

/** `sample(schema)` with `value` at `path` (an open document gets it as a member name and a string). */
function bodyWith(schema: Schema, field: Field, value: string): unknown {
  const body = sample(schema) as Record<string | number, unknown>;
  let node = body;
  let nodeSchema: Schema = schema;
  field.path.forEach((token, index) => {
    const childSchema: Schema = (typeof token === 'number' ? nodeSchema.items : nodeSchema.properties?.[token]) ?? {};
    if (index === field.path.length - 1) {
      node[token] = field.open ? { type: 'object', properties: { [value]: { type: 'string', description: value } } } : value;
      return;
    }
    node[token] ??= typeof token === 'number' ? [] : sample(childSchema);
    node = node[token] as Record<string | number, unknown>;
    nodeSchema = childSchema;
  });
  return body;
}

function fill(route: Route, values: Record<string, string>): string {
  return route.url.replace(/:([A-Za-z]+)/g, (_, name: string) => {
    if (!(name in values)) throw new Error(`${route.method} ${route.url}: no stored value for :${name}; add one to \`known\``);
    return values[name];
  });
}

function send(route: Route, url: string, options: { authenticated: boolean; body?: unknown }): Promise<LightMyRequestResponse> {
  // Both credentials: API-key routes ignore the cookie and console routes the bearer key. The
  // CLI routes take a CLI access token and their workspace header instead of the key.
  const headers: Record<string, string> = { origin: ctx.deps.config.consoleOrigin, 'idempotency-key': newIdempotencyKey() };
  if (options.authenticated) {
    const cliRoute = route.url.startsWith('/v1/cli/');
    headers.authorization = `Bearer ${cliRoute ? cli.accessToken : owner.apiKey.key}`;
    headers.cookie = `session=${owner.sessionToken}`;
    if (cliRoute) headers['x-service-workspace'] = owner.workspace.slug;
  }
  const body = options.body !== undefined ? options.body : route.body ? sample(route.body) : undefined;
  if (requiredQuery[route.url] !== undefined) url += `${url.includes('?') ? '&' : '?'}${requiredQuery[route.url]}`;
  return ctx.app.inject({
    method: route.method as 'GET',
    url,
    headers,
    ...(body === undefined ? {} : { payload: JSON.stringify(body), headers: { ...headers, 'content-type': 'application/json' } }),
  });
}

function expectCatalogued(res: LightMyRequestResponse, label: string): string {
  expect(res.statusCode, `${label} → ${res.statusCode} ${res.body}`).toBeLessThan(500);
  expect(res.statusCode, `${label} → ${res.statusCode} ${res.body}`).toBeGreaterThanOrEqual(400);
  const code = (res.json() as { error: string }).error;
  const spec = (ERROR_CATALOGUE as Record<string, { status: number }>)[code];
  expect(spec, `${label}: uncatalogued ${code}`).toBeDefined();
  expect(res.statusCode, `${label}: ${code}`).toBe(spec.status);
  return code;
}

describe('strings PostgreSQL cannot store', () => {
  it('collects the registered routes, with a stored value for every path parameter', () => {
    expect(routes.length).toBeGreaterThan(20);
    for (const route of routes) fill(route, known);
  });

  it('answers a path parameter holding U+0000 like a well-formed unknown one: 401 without credentials, 404 with', async () => {
    let checked = 0;
    const refusedAsMalformed: string[] = [];
    for (const route of routes) {
      for (const param of route.params) {
        for (const authenticated of [false, true]) {
          const label = `${route.method} ${route.url} :${param} (${authenticated ? 'authenticated' : 'no credentials'})`;
          const answer = async (value: string) => {
            const res = await send(route, fill(route, { ...known, [param]: value }), { authenticated });
            return { status: res.statusCode, body: res.json() as unknown, code: expectCatalogued(res, `${label} ${value}`) };
          };
          const stored = encodeURIComponent(known[param]);
          const unstorable = await answer(`${stored}%00`);
          // A NUL is one more character the route cannot look up, so it answers as for any value of
          // the wrong form; every route but one answers that as it answers a well-formed unknown id.
          expect(unstorable, label).toEqual(await answer(`${stored}~`));
          if (authenticated && unstorable.status === 400) {
            refusedAsMalformed.push(`${route.method} ${route.url} :${param} ${unstorable.code}`);
            continue;
          }
          expect(unstorable, label).toEqual(await answer(unknownLike(known[param])));
          expect(unstorable.status, `${label}: ${unstorable.code}`).toBe(authenticated ? 404 : 401);
          checked++;
        }
      }
    }
    expect(checked).toBeGreaterThan(30);
    // The one route whose ids of the wrong form are a 400 of their own (billing.test.ts, 01 Errors).
    expect(refusedAsMalformed).toEqual(['GET /billing-accounts/:accountId/usage :accountId invalid_billing_account_id']);
  });

  it('answers a console page whose workspace slug holds U+0000 like an unknown slug: the 404 page', async () => {
    expect(consolePages.length).toBeGreaterThan(0);
    const headers = { cookie: `session=${owner.sessionToken}` };
    for (const url of consolePages) {
      const nul = await ctx.app.inject({ method: 'GET', url: url.replace(':workspaceSlug', `${owner.workspace.slug}%00`), headers });
      const unknown = await ctx.app.inject({ method: 'GET', url: url.replace(':workspaceSlug', `${owner.workspace.slug}~`), headers });
      for (const res of [nul, unknown]) {
        expect(res.statusCode, url).toBe(404);
        expect(res.headers['content-type'], url).toBe('text/html; charset=utf-8');
      }
      expect(nul.body, url).toBe(unknown.body);
    }
  });

  it("answers the issue's legacy credential case like an unknown slug", async () => {
    const headers = { cookie: `session=${owner.sessionToken}`, origin: ctx.deps.config.consoleOrigin };
    const nul = await ctx.app.inject({ method: 'POST', url: '/workspaces/x%00/integrations/y/credentials/rotate', headers });
    const plain = await ctx.app.inject({ method: 'POST', url: '/workspaces/x/integrations/y/credentials/rotate', headers });
    expect([nul.statusCode, nul.json()]).toEqual([404, { error: 'workspace_not_found' }]);
    expect([plain.statusCode, plain.json()]).toEqual([404, { error: 'workspace_not_found' }]);
  });

  it('refuses U+0000 or a lone surrogate in any string of a body with a 400 of the route', async () => {
    let checked = 0;
    for (const route of routes.filter((r) => r.body)) {
      for (const field of stringFields(route.body as Schema)) {
        for (const value of UNSTORABLE) {
          const label = `${route.method} ${route.url} body /${field.path.join('/')}${field.open ? ' (open document)' : ''} ${JSON.stringify(value)}`;
          const res = await send(route, fill(route, known), { authenticated: true, body: bodyWith(route.body as Schema, field, value) });
          const code = expectCatalogued(res, label);
          expect(res.statusCode, `${label}: ${code}`).toBe(400);
          if (route.validationError) expect(code, label).toBe(route.validationError);
          checked++;
        }
      }
    }
    expect(checked).toBeGreaterThan(40);
  });

  it('refuses them in POST /v1/integrations name and provider with 400 invalid_integration, creating nothing', async () => {
    const before = await ctx.deps.pool.query('SELECT count(*)::int AS n FROM integrations WHERE workspace_id = $1', [owner.workspace.id]);
    for (const field of ['name', 'provider']) {
      for (const value of UNSTORABLE) {
        const body = { mode: 'sandbox', name: 'Orders', provider: 'Acme', direction: 'outbound', protocol: 'http-api', [field]: value };
        const res = await ctx.app.inject({
          method: 'POST',
          url: '/v1/integrations',
          headers: { authorization: `Bearer ${owner.apiKey.key}`, 'idempotency-key': newIdempotencyKey() },
          payload: body,
        });
        expect([res.statusCode, res.json()], `${field} ${JSON.stringify(value)}`).toEqual([400, { error: 'invalid_integration' }]);
      }
    }
    const after = await ctx.deps.pool.query('SELECT count(*)::int AS n FROM integrations WHERE workspace_id = $1', [owner.workspace.id]);
    expect(after.rows[0].n).toBe(before.rows[0].n);
  });

  it('gives each field of POST /workspaces (a route that maps validation per field) its own code', async () => {
    const cases = [
      ['name', 'invalid_workspace_name'],
      ['slug', 'invalid_workspace_slug'],
      ['billingAccountId', 'invalid_billing_account_id'],
    ];
    for (const [field, code] of cases) {
      const payload = { name: 'Good name', [field]: 'a\u0000b' };
      const res = await ctx.app.inject({
        method: 'POST',
        url: '/workspaces',
        headers: { cookie: `session=${owner.sessionToken}`, origin: ctx.deps.config.consoleOrigin },
        payload,
      });
      expect([res.statusCode, res.json()], field).toEqual([400, { error: code }]);
    }
  });

  it('keeps the order of checks: no credentials → 401, no Idempotency-Key → 400 idempotency_key_required', async () => {
    const body = { mode: 'sandbox', name: 'a\u0000b', provider: 'Acme', direction: 'outbound', protocol: 'http-api' };
    const anonymous = await ctx.app.inject({
      method: 'POST',
      url: '/v1/integrations',
      headers: { 'idempotency-key': newIdempotencyKey() },
      payload: body,
    });
    expect([anonymous.statusCode, anonymous.json()]).toEqual([401, { error: 'unauthenticated' }]);
    const keyless = await ctx.app.inject({
      method: 'POST',
      url: '/v1/integrations',
      headers: { authorization: `Bearer ${owner.apiKey.key}` },
      payload: body,
    });
    expect([keyless.statusCode, keyless.json()]).toEqual([400, { error: 'idempotency_key_required' }]);
  });

  it("refuses them in every query parameter a route reads with the route's 400", async () => {
    let checked = 0;
    for (const route of routes.filter((r) => r.querystring?.properties)) {
      for (const name of Object.keys(route.querystring?.properties ?? {})) {
        const label = `${route.method} ${route.url} ?${name}`;
        const res = await send(route, `${fill(route, known)}?${name}=a%00b`, { authenticated: true });
        const code = expectCatalogued(res, label);
        expect(res.statusCode, `${label}: ${code}`).toBe(400);
        if (route.validationError) expect(code, label).toBe(route.validationError);
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(4);
  });
});
