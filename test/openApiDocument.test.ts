import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RouteOptions } from 'fastify';
import { ERROR_CATALOGUE, type ErrorCode } from '../shared/errors/index.js';
import { BODY_LIMIT_BYTES, buildApp } from '../management/app.js';
import { bootstrapWorkspace, callWithKey, createTestContext, type TestContext } from './helpers/context.js';
import { createIntegration } from './helpers/integrations.js';
import { contractUrl, openApiRegistration, registerVersion } from './helpers/contracts.js';

// Issue 26 item 6: the management plane describes its own API at /openapi.json, generated from
// the routes it registers, with a self-hosted reference page, and its own importer takes it.

interface Operation {
  security?: Record<string, string[]>[];
  parameters?: { in: string; name: string; required?: boolean }[];
  'x-scopes'?: string[];
  'x-cli-scopes'?: string[];
  'x-error-codes'?: ErrorCode[];
  responses: Record<string, { content?: Record<string, { schema: { $ref?: string } }> }>;
}
interface Document {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, unknown>; securitySchemes: Record<string, unknown> };
}

let ctx: TestContext;
let documentText: string;
let document: Document;
/** `METHOD /path/{param}` of every route the app registers, less HEAD twins and hidden routes. */
const routeTable = new Set<string>();
/** Routes without a `config.errors` declaration (health and documentation routes may omit it). */
const undeclared: string[] = [];
/** `config.errors` of every route, by `METHOD /path/{param}`. */
const declared = new Map<string, readonly ErrorCode[]>();
const UNDECLARED_ALLOWED = new Set(['GET /healthz', 'GET /readyz', 'GET /metrics']);

const openApiPath = (url: string) => url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
const operation = (method: string, path: string) => document.paths[path]?.[method.toLowerCase()];

beforeAll(async () => {
  ctx = await createTestContext();
  const lister = await buildApp(ctx.deps, {
    onRoute: (route: RouteOptions) => {
      if (route.schema?.hide) return;
      for (const method of [route.method].flat()) {
        if (method === 'HEAD') continue;
        const key = `${method} ${openApiPath(route.url)}`;
        routeTable.add(key);
        const errors = route.config?.errors;
        if (errors) declared.set(key, errors);
        else if (!UNDECLARED_ALLOWED.has(key)) undeclared.push(key);
      }
    },
  });
  await lister.close();
  const res = await ctx.app.inject({ method: 'GET', url: '/openapi.json' });
  expect(res.statusCode, res.body).toBe(200);
  expect(res.headers['cache-control']).toBe('no-cache');
  documentText = res.body;
  document = res.json();
});
afterAll(async () => {
  await ctx.close();
});

describe('GET /openapi.json', () => {
  it('lists exactly the registered routes', () => {
    const documented = new Set(
      Object.entries(document.paths).flatMap(([path, ops]) => Object.keys(ops).map((method) => `${method.toUpperCase()} ${path}`)),
    );
    expect(routeTable.size).toBeGreaterThan(60);
    expect(
      [...routeTable].filter((route) => !documented.has(route)),
      'registered but undocumented',
    ).toEqual([]);
    expect(
      [...documented].filter((route) => !routeTable.has(route)),
      'documented but not registered',
    ).toEqual([]);
  });

  it("names each route's authentication and scope", () => {
    expect(Object.keys(document.components.securitySchemes).sort()).toEqual(['apiKey', 'cli', 'session']);
    const register = operation('POST', '/v1/integrations/{integrationId}/contracts');
    // Contract registration takes a workspace API key or an account CLI token (03 Reviewed repairs 5).
    expect(register.security).toEqual([{ apiKey: [] }, { cli: [] }]);
    expect(register['x-scopes']).toEqual(['contracts:write']);
    expect(register['x-cli-scopes']).toEqual(['service:cli:contracts:write']);
    expect(operation('POST', '/v1/integrations/{integrationId}/contracts/{contractVersionId}/activate')['x-scopes']).toEqual([
      'contracts:activate',
    ]);
    expect(operation('GET', '/v1/incidents')['x-scopes']).toEqual(['incidents:read']);
    const console = operation('POST', '/workspaces');
    expect(console.security).toEqual([{ session: [] }]);
    expect(console['x-scopes']).toEqual(['session']);
    const login = operation('POST', '/auth/login');
    expect(login.security).toBeUndefined();
    expect(login['x-scopes']).toEqual([]);
  });

  it('documents the CLI routes: the CLI scheme, the scope, the workspace header and the codes of the CLI hook', () => {
    const incidents = operation('GET', '/v1/cli/connections/{connectionId}/incidents');
    expect(incidents.security).toEqual([{ cli: [] }]);
    expect(incidents['x-scopes']).toEqual(['service:cli:incidents:read']);
    expect(incidents.parameters).toContainEqual(expect.objectContaining({ in: 'header', name: 'X-Service-Workspace', required: true }));
    expect(incidents['x-error-codes']).toEqual(
      expect.arrayContaining([
        'unauthenticated',
        'insufficient_scope',
        'workspace_required',
        'workspace_not_found',
        'connection_not_found',
        'invalid_incident_query',
        'invalid_incident_cursor',
      ]),
    );
    expect(incidents['x-error-codes']).not.toContain('cli_operation_forbidden');
    expect(operation('GET', '/v1/cli/connections/{connectionId}/verify')['x-scopes']).toEqual(['service:cli:observations:read']);
    const me = operation('GET', '/v1/cli/me');
    expect(me.security).toEqual([{ cli: [] }]);
    expect(me['x-scopes']).toEqual(['cli']);
    expect(me['x-error-codes']).toEqual(expect.arrayContaining(['unauthenticated', 'invalid_cli_query']));
    expect(me['x-error-codes']).not.toContain('workspace_required');
    expect(me.parameters ?? []).not.toContainEqual(expect.objectContaining({ in: 'header' }));
    expect(operation('DELETE', '/v1/cli/sessions/{clientId}')['x-error-codes']).toEqual(
      expect.arrayContaining(['cli_session_not_found', 'mode_cutover_write_paused', 'invalid_cli_session_query']),
    );
  });

  it("lists each route's error codes, each under its catalogue status with the shared Error body", () => {
    const register = operation('POST', '/v1/integrations/{integrationId}/contracts');
    expect(register['x-error-codes']).toEqual(
      expect.arrayContaining([
        'invalid_contract',
        'unauthenticated',
        'insufficient_scope',
        'request_too_large',
        'mode_cutover_write_paused',
      ]),
    );
    expect(operation('GET', '/v1/integrations/{integrationId}/contracts')['x-error-codes']).toContain('invalid_contract_query');
    expect(document.components.schemas.Error).toMatchObject({ required: ['error'] });
    for (const [path, ops] of Object.entries(document.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        expect(op['x-error-codes'], `${method} ${path}`).toContain('service_unavailable');
        for (const code of op['x-error-codes'] ?? []) {
          const response = op.responses[String(ERROR_CATALOGUE[code].status)];
          expect(response?.content?.['application/json'].schema.$ref, `${method} ${path} ${code}`).toBe('#/components/schemas/Error');
        }
      }
    }
  });

  it("declares each route's domain codes and lists them under their catalogue status", () => {
    // A new route cannot be added without saying what it answers (`errors: []` when nothing).
    expect(undeclared, 'routes without config.errors').toEqual([]);
    expect(declared.size).toBeGreaterThan(60);
    for (const [route, codes] of declared) {
      const [method, path] = route.split(' ');
      const op = operation(method, path);
      for (const code of codes) {
        expect(ERROR_CATALOGUE[code], `${route} ${code} in the catalogue`).toBeDefined();
        expect(op['x-error-codes'], route).toContain(code);
        expect(op.responses[String(ERROR_CATALOGUE[code].status)]?.content?.['application/json'].schema.$ref, `${route} ${code}`).toBe(
          '#/components/schemas/Error',
        );
      }
    }
    const codes = (method: string, path: string) => operation(method, path)['x-error-codes'];
    expect(codes('POST', '/v1/integrations/{integrationId}/contracts')).toEqual(
      expect.arrayContaining([
        'invalid_contract',
        'contract_version_already_exists',
        'integration_scope_mismatch',
        'connection_configuration_changed',
        'rate_limited',
      ]),
    );
    expect(operation('POST', '/v1/integrations/{integrationId}/contracts').responses['409']).toBeDefined();
    expect(codes('POST', '/v1/integrations/{integrationId}/contracts/{contractVersionId}/activate')).toEqual(
      expect.arrayContaining(['active_contract_changed', 'contract_not_activatable', 'invalid_contract_activation']),
    );
    expect(codes('GET', '/v1/incidents/{incidentId}')).toContain('incident_not_found');
  });

  it("imports through the service's own contract importer", async () => {
    expect(Buffer.byteLength(documentText)).toBeLessThan(BODY_LIMIT_BYTES / 2);
    const owner = await bootstrapWorkspace(ctx);
    const created = await createIntegration(ctx, owner.apiKey.key, {
      mode: 'sandbox',
      protocol: 'http-api',
      provider: 'integration-watch',
    });
    const res = await registerVersion(
      ctx,
      owner.apiKey.key,
      created.integration.connectionId,
      openApiRegistration('self-1', document as unknown as Record<string, unknown>),
    );
    expect(res.statusCode, res.body).toBe(201);
    const { contract } = res.json();
    const read = await callWithKey(ctx, owner.apiKey.key, 'GET', contractUrl(created.integration.connectionId, contract.id));
    const imported = new Set(
      (read.json().contract.operations as { method: string; routeTemplate: string }[]).map((op) => `${op.method} ${op.routeTemplate}`),
    );
    expect(
      [...routeTable].filter((route) => !imported.has(route)),
      'routes without an imported operation',
    ).toEqual([]);
  });
});

describe('the API reference page', () => {
  it('is served with its assets from the same origin under a strict Content-Security-Policy', async () => {
    const page = await ctx.app.inject({ method: 'GET', url: '/docs/' });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    const csp = String(page.headers['content-security-policy']);
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toMatch(/https?:|unsafe-inline|unsafe-eval/);
    const assets = [...page.body.matchAll(/(?:src|href)="([^"]+)"/g)].map((match) => match[1]);
    expect(assets.length).toBeGreaterThan(0);
    for (const asset of assets) expect(asset, 'a same-origin relative URL').toMatch(/^\.\/|^\/(?!\/)/);
    const script = assets.find((asset) => asset.endsWith('swagger-ui-bundle.js'));
    expect(script).toBeDefined();
    const bundle = await ctx.app.inject({ method: 'GET', url: new URL(script!, 'http://service/docs/').pathname });
    expect(bundle.statusCode).toBe(200);
    expect(bundle.headers['content-type']).toMatch(/javascript/);
    const initializer = await ctx.app.inject({ method: 'GET', url: '/docs/static/swagger-initializer.js' });
    // The page loads the document from its own origin.
    expect(initializer.body).toContain("resolveUrl('./json')");
    const json = await ctx.app.inject({ method: 'GET', url: '/docs/json' });
    expect(json.json()).toEqual(document);
  });
});
