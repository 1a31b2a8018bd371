import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RouteOptions } from 'fastify';
import { ERROR_CATALOGUE, type ErrorCode } from '../shared/errors/index.js';
import { BODY_LIMIT_BYTES, buildApp } from '../management/app.js';
import { SETUP_BINDING_STATUS } from '../management/auth/workspaceAuth.js';
import { SETUP_OAUTH_CLIENT_ID, SETUP_SCOPES } from '../management/oauth/rules.js';
import { bootstrapWorkspace, callWithKey, callWithSession, createTestContext, type TestContext } from './helpers/context.js';
import { createIntegration } from './helpers/integrations.js';
import { contractUrl, openApiRegistration, registerVersion } from './helpers/contracts.js';

// Issue 26 item 6: the management plane describes its own API at /openapi.json, generated from
// the routes it registers, with a self-hosted reference page, and its own importer takes it.

interface Operation {
  security?: Record<string, string[]>[];
  parameters?: { in: string; name: string; required?: boolean }[];
  'x-scopes'?: string[];
  'x-cli-scopes'?: string[];
  'x-setup-scopes'?: string[];
  'x-error-codes'?: ErrorCode[];
  responses: Record<string, { description?: string; content?: Record<string, { schema: { $ref?: string } }> }>;
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

/** The statuses under which an operation's error responses list `code` (each response's description names its codes). */
const listedStatuses = (op: Operation, code: ErrorCode) =>
  Object.entries(op.responses)
    .filter(([, response]) => response.description?.split(', ').includes(`\`${code}\``))
    .map(([status]) => Number(status));

/** The catalogue's statuses of a code: its first, then those the spec gives it for other meanings. */
const catalogueStatuses = (code: ErrorCode): number[] => {
  const spec: { status: number; otherStatuses?: readonly number[] } = ERROR_CATALOGUE[code];
  return [spec.status, ...(spec.otherStatuses ?? [])];
};

/** Whether an operation accepts a setup OAuth token, as the document says it. */
const takesSetupTokens = (op: Operation) => (op.security ?? []).some((scheme) => 'setup' in scheme);

/**
 * The status a code is listed under: the catalogue's, but on a route that accepts setup tokens
 * `integration_scope_mismatch` is that token's answer (01 Authentication 4), not an `expectedScope` 409.
 */
const expectedStatus = (op: Operation, code: ErrorCode) =>
  code === 'integration_scope_mismatch' && takesSetupTokens(op) ? SETUP_BINDING_STATUS : ERROR_CATALOGUE[code].status;

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
    expect(Object.keys(document.components.securitySchemes).sort()).toEqual(['apiKey', 'cli', 'session', 'setup']);
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

  it("lists each route's error codes, each under its status with the shared Error body", () => {
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
          expect(listedStatuses(op, code), `${method} ${path} ${code}`).toEqual([expectedStatus(op, code)]);
          expect(catalogueStatuses(code), `${method} ${path} ${code}`).toContain(expectedStatus(op, code));
          const response = op.responses[String(expectedStatus(op, code))];
          expect(response?.content?.['application/json'].schema.$ref, `${method} ${path} ${code}`).toBe('#/components/schemas/Error');
        }
      }
    }
  });

  it("declares each route's domain codes and lists them under their status", () => {
    // A new route cannot be added without saying what it answers (`errors: []` when nothing).
    expect(undeclared, 'routes without config.errors').toEqual([]);
    expect(declared.size).toBeGreaterThan(60);
    for (const [route, codes] of declared) {
      const [method, path] = route.split(' ');
      const op = operation(method, path);
      for (const code of codes) {
        expect(ERROR_CATALOGUE[code], `${route} ${code} in the catalogue`).toBeDefined();
        expect(op['x-error-codes'], route).toContain(code);
        expect(listedStatuses(op, code), `${route} ${code}`).toEqual([expectedStatus(op, code)]);
        expect(op.responses[String(expectedStatus(op, code))]?.content?.['application/json'].schema.$ref, `${route} ${code}`).toBe(
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
    // Contract registration's is the `expectedScope` guard: 409.
    expect(listedStatuses(operation('POST', '/v1/integrations/{integrationId}/contracts'), 'integration_scope_mismatch')).toEqual([409]);
    expect(codes('POST', '/v1/integrations/{integrationId}/contracts/{contractVersionId}/activate')).toEqual(
      expect.arrayContaining(['active_contract_changed', 'contract_not_activatable', 'invalid_contract_activation']),
    );
    expect(codes('GET', '/v1/incidents/{incidentId}')).toContain('incident_not_found');
  });

  it('documents the setup OAuth token: its scheme, the scope of each route that accepts it, and its 403 for another Integration', () => {
    expect(document.components.securitySchemes.setup).toMatchObject({ type: 'http', scheme: 'bearer' });
    const setupRoutes = Object.entries(document.paths).flatMap(([path, ops]) =>
      Object.entries(ops)
        .filter(([, op]) => takesSetupTokens(op))
        .map(([method, op]) => [`${method.toUpperCase()} ${path}`, op['x-setup-scopes']]),
    );
    const [contractsRead, integrationsDelete] = SETUP_SCOPES.map((scope) => [scope]);
    expect(Object.fromEntries(setupRoutes)).toEqual({
      'GET /v1/integrations/{integrationId}/contracts': contractsRead,
      'POST /v1/integrations/{workspaceIntegrationId}/deletion-preview': integrationsDelete,
      'POST /v1/integrations/{workspaceIntegrationId}/deletion': integrationsDelete,
      'POST /v1/integrations/{workspaceIntegrationId}/connections/{connectionId}/deletion-preview': integrationsDelete,
      'POST /v1/integrations/{workspaceIntegrationId}/connections/{connectionId}/deletion': integrationsDelete,
      'GET /v1/deletion-operations/{operationId}': integrationsDelete,
    });
    const list = operation('GET', '/v1/integrations/{integrationId}/contracts');
    expect(list.security).toEqual([{ apiKey: [] }, { cli: [] }, { setup: [] }]);
    // The routes that check the binding answer another Integration 403, never 409 (01 Authentication 4).
    for (const [method, path] of [
      ['GET', '/v1/integrations/{integrationId}/contracts'],
      ['POST', '/v1/integrations/{workspaceIntegrationId}/deletion-preview'],
      ['POST', '/v1/integrations/{workspaceIntegrationId}/connections/{connectionId}/deletion'],
    ]) {
      const op = operation(method, path);
      expect(listedStatuses(op, 'integration_scope_mismatch'), `${method} ${path}`).toEqual([403]);
      expect(op.responses['409']?.description ?? '', `${method} ${path}`).not.toContain('integration_scope_mismatch');
    }
    // The receipt read has no path Integration to check: only the grant that previewed finds its review.
    expect(operation('GET', '/v1/deletion-operations/{operationId}')['x-error-codes']).not.toContain('integration_scope_mismatch');
    expect(ERROR_CATALOGUE.integration_scope_mismatch).toMatchObject({ status: 409, otherStatuses: [SETUP_BINDING_STATUS] });
  });

  it('lists the setup scheme on exactly the routes that accept a setup token', async () => {
    const owner = await bootstrapWorkspace(ctx);
    const { integration } = await createIntegration(ctx, owner.apiKey.key, { mode: 'sandbox' });
    const device = await ctx.app.inject({
      method: 'POST',
      url: '/oauth/device/code',
      payload: { client_id: SETUP_OAUTH_CLIENT_ID, scope: [...SETUP_SCOPES].join(' '), connection_id: integration.connectionId },
    });
    const { device_code, user_code } = device.json();
    const consent = await callWithSession(ctx, owner.sessionToken, 'POST', '/oauth/device/consent', {
      body: { user_code, decision: 'approve' },
    });
    expect(consent.statusCode, consent.body).toBe(200);
    const exchange = await ctx.app.inject({
      method: 'POST',
      url: '/oauth/token',
      payload: { grant_type: 'urn:ietf:params:oauth:grant-type:device_code', device_code, client_id: SETUP_OAUTH_CLIENT_ID },
    });
    expect(exchange.statusCode, exchange.body).toBe(200);
    const token: string = exchange.json().access_token;
    const ids: Record<string, string> = {
      integrationId: integration.connectionId,
      connectionId: integration.connectionId,
      workspaceIntegrationId: integration.id,
    };
    let accepting = 0;
    for (const [path, ops] of Object.entries(document.paths)) {
      // Public routes (health, sign-in, the device grant's own endpoints) read no token at all.
      for (const [method, op] of Object.entries(ops).filter(([, candidate]) => candidate.security !== undefined)) {
        const url = path.replace(/\{([A-Za-z]+)\}/g, (_match, name: string) => ids[name] ?? 'x');
        const res = await ctx.app.inject({
          method: method.toUpperCase() as 'GET',
          url,
          headers: { authorization: `Bearer ${token}` },
          ...(method === 'get' ? {} : { payload: {} }),
        });
        // A route that takes the token answers past authentication; any other refuses it there.
        const refused = res.statusCode === 401 || (res.statusCode === 403 && res.json().error === 'insufficient_scope');
        expect(refused, `${method.toUpperCase()} ${path} ${res.statusCode} ${res.body}`).toBe(!takesSetupTokens(op));
        if (!refused) accepting += 1;
      }
    }
    expect(accepting).toBe(6);
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
