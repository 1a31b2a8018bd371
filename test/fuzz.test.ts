import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import type { RouteOptions } from 'fastify';
import { ERROR_CATALOGUE } from '../shared/errors/index.js';
import { buildApp } from '../management/app.js';
import { bootstrapWorkspace, createTestContext, type TestContext } from './helpers/context.js';
import type { BootstrapResult } from '../management/admin/bootstrap.js';
import { createIntegration } from './helpers/integrations.js';
import { newId } from '../shared/ids.js';
import { malformedRequests } from './helpers/malformedHttp.js';
import { catalogueViolation, sendRaw } from './helpers/rawHttp.js';
import { loginCli, type CliSession } from './helpers/cli.js';
import { cliLogin } from './helpers/cliLogin.js';
import { createConsoleUser } from './helpers/consoleUsers.js';
import { CLI_OAUTH_CLIENT_ID } from '../management/oauth/rules.js';
import { DUAL_STATUS } from './helpers/catalogueAnswer.js';

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
/** The owner's incidents (sandbox), its connection, and signed cursors of its lists, for the incident fuzz. */
const incidentIds: string[] = [];
const incidentCursors: string[] = [];
let incidentConnectionId: string;
let incidentReaderlessKey: string;
/** CLI clients of the owner: every scope; `observations:read` only; one the fuzz may log out or revoke. */
let cli: CliSession;
let cliObserver: CliSession;
let cliSpare: CliSession;
/** Signed cursors of the CLI lists (incidents, workspaces, sessions), for the CLI fuzz. */
const cliCursors: string[] = [];

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
  // Incidents are written by the analyzer; two rows in SQL give the incident routes real ids and a real cursor.
  for (const [i, status] of (['open', 'resolved'] as const).entries()) {
    const incidentId = newId('inc_');
    await ctx.deps.pool.query(
      `INSERT INTO incidents (id, connection_id, workspace_id, integration_id, environment_id, mode, operation_key, kind, status, resolution_state,
                              summary, affected_records, observation_ids, first_observed_at, last_observed_at, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, 'sandbox', $6, 'schema-drift', $7, 'active', 'drift', 1, '{evt_1}', now(), now(), now(), now())`,
      [
        incidentId,
        created.integration.connectionId,
        owner.workspace.id,
        created.integration.id,
        created.integration.environmentId,
        `GET /v1/orders/${i}:response:200`,
        status,
      ],
    );
    await ctx.deps.pool.query(
      `INSERT INTO incident_findings (incident_id, kind, path, expected, observed, forbidden, observation_count, first_observed_at, last_observed_at)
       VALUES ($1, 'undeclared_field', '/x', 'no property x', 'string', true, 1, now(), now())`,
      [incidentId],
    );
    realIds.push(incidentId);
    incidentIds.push(incidentId);
  }
  incidentConnectionId = created.integration.connectionId;
  const page = await ctx.app.inject({
    method: 'GET',
    url: `/v1/incidents?integrationId=${incidentConnectionId}&mode=sandbox&limit=1`,
    headers: { authorization: `Bearer ${owner.apiKey.key}` },
  });
  const cursor = page.json().nextCursor as string;
  incidentCursors.push(cursor, cursor.slice(0, -1) + (cursor.endsWith('A') ? 'B' : 'A'));
  incidentReaderlessKey = (await bootstrapWorkspace(ctx, { email: owner.user.email, scopes: ['integrations:read', 'observations:read'] }))
    .apiKey.key;
  const baseUrl = `http://127.0.0.1:${port}`;
  cli = await loginCli(baseUrl, owner.sessionToken);
  cliObserver = await loginCli(baseUrl, owner.sessionToken, ['observations:read']);
  cliSpare = await loginCli(baseUrl, owner.sessionToken);
  // Only the spare client's id is a path candidate: a random DELETE may revoke it, never `cli`.
  realIds.push(cliSpare.clientId);
  const cliHeaders = { authorization: `Bearer ${cli.accessToken}`, 'x-service-workspace': owner.workspace.slug };
  for (const url of [`/v1/cli/connections/${incidentConnectionId}/incidents?limit=1`, '/v1/cli/sessions?limit=1']) {
    const res = await ctx.app.inject({ method: 'GET', url, headers: cliHeaders });
    cliCursors.push(res.json().nextCursor as string);
  }
  const secondWorkspace = await bootstrapWorkspace(ctx, { email: owner.user.email, workspace: 'Second space' });
  const workspacePage = await ctx.app.inject({ method: 'GET', url: '/v1/cli/workspaces?limit=1', headers: cliHeaders });
  cliCursors.push(workspacePage.json().nextCursor as string);
  expect(secondWorkspace.workspace.id).not.toBe(owner.workspace.id);
  expect(cliCursors.every((cursor) => typeof cursor === 'string')).toBe(true);
});
afterAll(async () => {
  await ctx.close();
});

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

function queryValues(): fc.Arbitrary<string> {
  return fc.oneof(
    fc.string({ maxLength: 20 }),
    fc.constantFrom('sandbox', 'live', 'open', 'resolved', 'canonical', '1', '100', '101', ...realIds, ...incidentCursors),
  );
}

const bodies = fc.oneof(
  fc.constant(undefined),
  fc.jsonValue().map((value) => JSON.stringify(value)),
  fc
    .dictionary(
      fc.constantFrom(
        'name',
        'mode',
        'provider',
        'direction',
        'protocol',
        'expectedRevision',
        'email',
        'password',
        'scopes',
        'token',
        'slug',
        'billingAccountId',
        'connectionKey',
        'ingestToken',
        'expiresInSeconds',
        'operationId',
        'confirmName',
        'fingerprint',
        'extra',
        // The OAuth routes' parameters (management/oauth/).
        'client_id',
        'scope',
        'grant_type',
        'device_code',
        'refresh_token',
        'user_code',
        'decision',
        'token_type_hint',
      ),
      fc.oneof(
        fc.jsonValue(),
        fc.constantFrom('sandbox', 'live', 'outbound', 'http-api', 'all', 'integrations:read', 'x'.repeat(121)),
        fc.constantFrom(
          'service-management-cli',
          'service:cli:contracts:read offline_access',
          'urn:ietf:params:oauth:grant-type:device_code',
          'refresh_token',
          `svc_cli_dc_${'A'.repeat(43)}`,
          `svc_cli_rt_${'A'.repeat(43)}`,
          'BCDF-GHJK',
          'approve',
          'deny',
        ),
      ),
    )
    .map((v) => JSON.stringify(v)),
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
        fc.constantFrom<'none' | 'key' | 'strangerKey' | 'garbage' | 'session' | 'strangerSession' | 'cli'>(
          'none',
          'key',
          'strangerKey',
          'garbage',
          'session',
          'strangerSession',
          'cli',
        ),
        fc.option(fc.string({ maxLength: 140 }), { nil: undefined }),
        fc.constantFrom('application/json', 'text/plain', 'application/x-www-form-urlencoded', undefined),
        fc.option(
          fc.dictionary(fc.constantFrom('limit', 'cursor', 'view', 'environmentId', 'integrationId', 'mode', 'status', 'x'), queryValues()),
          { nil: undefined },
        ),
        async (route, ids, body, auth, idempotencyKey, contentType, query) => {
          const headers: Record<string, string> = {};
          if (auth === 'key') headers.authorization = `Bearer ${owner.apiKey.key}`;
          if (auth === 'strangerKey') headers.authorization = `Bearer ${stranger.apiKey.key}`;
          if (auth === 'garbage') headers.authorization = 'Bearer svc_api_garbage';
          if (auth === 'session') headers.cookie = `session=${owner.sessionToken}`;
          if (auth === 'strangerSession') headers.cookie = `session=${stranger.sessionToken}`;
          if (auth === 'cli') {
            // Logout revokes the calling client: the spare one, so that `cli` stays signed in.
            const session = route.method === 'DELETE' && route.url === '/v1/cli/session' ? cliSpare : cli;
            headers.authorization = `Bearer ${session.accessToken}`;
            headers['x-service-workspace'] = owner.workspace.slug;
          }
          headers.origin = ctx.deps.config.consoleOrigin;
          if (idempotencyKey !== undefined && /^[\x20-\x7e]*$/.test(idempotencyKey)) headers['idempotency-key'] = idempotencyKey;
          if (contentType && body !== undefined) headers['content-type'] = contentType;
          const search = query ? `?${new URLSearchParams(query).toString()}` : '';
          const res = await ctx.app.inject({
            method: route.method as 'GET',
            url: fillParams(route.url, ids) + search,
            headers,
            payload: body,
          });
          expect(res.statusCode, `${route.method} ${route.url} → ${res.statusCode} ${res.body}`).toBeLessThan(500);
          if (res.statusCode >= 400 && String(res.headers['content-type']).startsWith('text/html')) {
            // A console page answers a workspace the caller is not a member of with its HTML 404
            // page (management/console/consoleRoute.ts); every other error is a catalogue body.
            expect(`${route.method} ${route.url} ${res.statusCode}`).toMatch(/^GET \/console\/workspaces\/:workspaceSlug\/\S+ 404$/);
          } else if (res.statusCode >= 400) {
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

// The incident reads answer only the codes documented for them (03 CLI API errors, 00-decisions
// §5, docs/decisions/analysis.md "Incident reads"), plus the conventions' invalid_request.
const INCIDENT_ROUTE_CODES = new Map<string, string[]>([
  [
    '/v1/incidents',
    [
      'unauthenticated',
      'insufficient_scope',
      'connection_required',
      'invalid_incident_query',
      'invalid_incident_cursor',
      'connection_not_found',
      'invalid_request',
    ],
  ],
  [
    '/v1/incidents/:incidentId',
    ['unauthenticated', 'insufficient_scope', 'invalid_incident_query', 'incident_not_found', 'invalid_request'],
  ],
]);

describe('fuzz: incident reads', () => {
  it('registers both incident routes', () => {
    for (const url of INCIDENT_ROUTE_CODES.keys()) expect(routes).toContainEqual({ method: 'GET', url });
  });

  it('answers random queries, ids and keys only with the documented codes, and 200s uncached', async () => {
    // Mostly well-formed members, so that answers past validation (404s, cursor errors, 200s) are reached too.
    const member = (real: fc.Arbitrary<string>, freq = 4) =>
      fc.option(fc.oneof({ weight: 4, arbitrary: real }, { weight: 1, arbitrary: queryValues() }), { nil: undefined, freq });
    const queries = fc
      .record({
        integrationId: member(fc.constantFrom(incidentConnectionId, realIds[0], 'int_00000000000000000000000000')),
        mode: member(fc.constantFrom('sandbox', 'sandbox', 'live')),
        status: member(fc.constantFrom('open', 'resolved'), 2),
        limit: member(fc.constantFrom('1', '25', '100'), 2),
        cursor: member(fc.constantFrom(...incidentCursors), 2),
        x: fc.oneof({ weight: 9, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: queryValues() }),
      })
      .map((query) => Object.fromEntries(Object.entries(query).filter(([, value]) => value !== undefined)) as Record<string, string>);
    const ids = fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...incidentIds) }, { weight: 2, arbitrary: idCandidates() });
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...INCIDENT_ROUTE_CODES.keys()),
        ids.map((id) => [id]),
        queries,
        fc.constantFrom<'none' | 'key' | 'strangerKey' | 'garbage' | 'noScope'>(
          'none',
          'key',
          'key',
          'key',
          'strangerKey',
          'garbage',
          'noScope',
        ),
        fc.nat(7).map((n) => n === 0),
        async (url, ids, listQuery, auth, listMembersOnDetail) => {
          // The detail takes `mode` only; list members reach it now and then.
          const query =
            url === '/v1/incidents' || listMembersOnDetail
              ? listQuery
              : Object.fromEntries(Object.entries(listQuery).filter(([name]) => name === 'mode' || name === 'x'));
          // A dot segment (`..`, `%2e`) is resolved away by URL normalisation: that request names another route.
          fc.pre(!ids.some((id) => /^(\.|%2e){1,2}$/i.test(id)));
          const headers: Record<string, string> = {};
          if (auth === 'key') headers.authorization = `Bearer ${owner.apiKey.key}`;
          if (auth === 'strangerKey') headers.authorization = `Bearer ${stranger.apiKey.key}`;
          if (auth === 'garbage') headers.authorization = 'Bearer svc_api_garbage';
          if (auth === 'noScope') headers.authorization = `Bearer ${incidentReaderlessKey}`;
          const search = Object.keys(query).length > 0 ? `?${new URLSearchParams(query).toString()}` : '';
          const res = await ctx.app.inject({ method: 'GET', url: fillParams(url, ids) + search, headers });
          const label = `GET ${fillParams(url, ids) + search} → ${res.statusCode} ${res.body}`;
          expect(res.statusCode, label).toBeLessThan(500);
          if (res.statusCode >= 400) {
            const code = res.json().error as string;
            expect(INCIDENT_ROUTE_CODES.get(url), label).toContain(code);
            expect((ERROR_CATALOGUE as Record<string, { status: number }>)[code].status, label).toBe(res.statusCode);
          } else {
            expect(res.statusCode, label).toBe(200);
            expect(res.headers['cache-control'], label).toBe('no-store');
            expect(Object.keys(res.json()).sort(), label).toEqual(url === '/v1/incidents' ? ['items', 'mode', 'nextCursor'] : ['incident']);
          }
        },
      ),
      { numRuns: 1500 },
    );
  });
});

// The CLI reads answer only the codes of the CLI error table that apply to them (03 Errors, CLI
// API), plus the conventions' invalid_request.
const CLI_HOOK_CODES = ['unauthenticated', 'invalid_request'];
const CLI_WORKSPACE_CODES = [...CLI_HOOK_CODES, 'insufficient_scope', 'workspace_required', 'workspace_not_found'];
const CLI_ROUTE_CODES = new Map<string, string[]>([
  ['/v1/cli/me', [...CLI_HOOK_CODES, 'invalid_cli_query']],
  ['/v1/cli/workspaces', [...CLI_HOOK_CODES, 'invalid_workspace_query']],
  ['/v1/cli/sessions', [...CLI_HOOK_CODES, 'invalid_cli_session_query']],
  [
    '/v1/cli/connections/:connectionId/verify',
    [...CLI_WORKSPACE_CODES, 'invalid_evidence_query', 'connection_required', 'connection_not_found'],
  ],
  [
    '/v1/cli/connections/:connectionId/incidents',
    [...CLI_WORKSPACE_CODES, 'invalid_incident_query', 'invalid_incident_cursor', 'connection_required', 'connection_not_found'],
  ],
  [
    '/v1/cli/connections/:connectionId/incidents/:incidentId',
    [...CLI_WORKSPACE_CODES, 'invalid_incident_query', 'connection_required', 'connection_not_found', 'incident_not_found'],
  ],
]);

describe('fuzz: CLI reads', () => {
  it('registers every CLI read', () => {
    for (const url of CLI_ROUTE_CODES.keys()) expect(routes).toContainEqual({ method: 'GET', url });
  });

  it('answers random queries, ids, tokens and workspace headers only with the documented codes, and 200s uncached', async () => {
    const member = (real: fc.Arbitrary<string>, freq = 4) =>
      fc.option(fc.oneof({ weight: 4, arbitrary: real }, { weight: 1, arbitrary: queryValues() }), { nil: undefined, freq });
    const queries = fc
      .record({
        status: member(fc.constantFrom('open', 'resolved'), 2),
        limit: member(fc.constantFrom('1', '25', '100'), 2),
        cursor: member(fc.constantFrom(...cliCursors, ...incidentCursors), 2),
        x: fc.oneof({ weight: 9, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: queryValues() }),
      })
      .map((query) => Object.fromEntries(Object.entries(query).filter(([, value]) => value !== undefined)) as Record<string, string>);
    const connections = fc.oneof({ weight: 4, arbitrary: fc.constant(incidentConnectionId) }, { weight: 1, arbitrary: idCandidates() });
    const incidents = fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...incidentIds) }, { weight: 1, arbitrary: idCandidates() });
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...CLI_ROUTE_CODES.keys()),
        connections,
        incidents,
        queries,
        fc.constantFrom<'none' | 'cli' | 'observer' | 'apiKey' | 'session' | 'garbage'>(
          'none',
          'cli',
          'cli',
          'cli',
          'observer',
          'apiKey',
          'session',
          'garbage',
        ),
        fc.constantFrom<string | undefined>(
          owner.workspace.slug,
          owner.workspace.slug,
          stranger.workspace.slug,
          undefined,
          '',
          'Not A Slug',
        ),
        fc.nat(3).map((n) => n === 0),
        async (url, connectionId, incidentId, listQuery, auth, workspace, anyQueryMembers) => {
          fc.pre(![connectionId, incidentId].some((id) => /^(\.|%2e){1,2}$/i.test(id)));
          const isList = url.endsWith('/incidents') || url === '/v1/cli/workspaces' || url === '/v1/cli/sessions';
          const query = isList || anyQueryMembers ? listQuery : {};
          const headers: Record<string, string> = {};
          if (auth === 'cli') headers.authorization = `Bearer ${cli.accessToken}`;
          if (auth === 'observer') headers.authorization = `Bearer ${cliObserver.accessToken}`;
          if (auth === 'apiKey') headers.authorization = `Bearer ${owner.apiKey.key}`;
          if (auth === 'session') headers.cookie = `session=${owner.sessionToken}`;
          if (auth === 'garbage') headers.authorization = `Bearer ${cli.accessToken.slice(0, -1)}`;
          if (workspace !== undefined) headers['x-service-workspace'] = workspace;
          const path = url.replace(':connectionId', connectionId).replace(':incidentId', incidentId);
          const search = Object.keys(query).length > 0 ? `?${new URLSearchParams(query).toString()}` : '';
          const res = await ctx.app.inject({ method: 'GET', url: path + search, headers });
          const label = `GET ${path + search} (${auth}, ${workspace}) → ${res.statusCode} ${res.body}`;
          expect(res.statusCode, label).toBeLessThan(500);
          expect(res.headers['cache-control'], label).toBe('no-store');
          if (res.statusCode >= 400) {
            const code = res.json().error as string;
            expect(CLI_ROUTE_CODES.get(url), label).toContain(code);
            expect((ERROR_CATALOGUE as Record<string, { status: number }>)[code].status, label).toBe(res.statusCode);
          } else {
            expect(res.statusCode, label).toBe(200);
            expect(res.json().schemaVersion, label).toBe(1);
          }
        },
      ),
      { numRuns: 1500 },
    );
  });
});

// The CLI's OAuth endpoints answer only RFC 6749 / 8628 / 7009 codes of their own (docs/decisions/cli.md),
// with mostly well-formed parameters so that the grant's own answers are reached, in form and JSON bodies.
const OAUTH_ROUTE_CODES = new Map<string, string[]>([
  ['/oauth/device/code', ['invalid_request', 'invalid_client', 'invalid_scope', 'rate_limited']],
  [
    '/oauth/token',
    [
      'invalid_request',
      'invalid_client',
      'unsupported_grant_type',
      'invalid_grant',
      'invalid_scope',
      'authorization_pending',
      'slow_down',
      'expired_token',
      'access_denied',
    ],
  ],
  ['/oauth/revoke', ['invalid_request', 'invalid_client']],
]);
const OAUTH_200_KEYS = new Map<string, string[][]>([
  ['/oauth/device/code', [['device_code', 'expires_in', 'interval', 'user_code', 'verification_uri', 'verification_uri_complete']]],
  [
    '/oauth/token',
    [
      ['access_token', 'expires_in', 'refresh_token', 'scope', 'token_type'],
      ['access_token', 'expires_in', 'scope', 'token_type'],
    ],
  ],
  ['/oauth/revoke', [[]]],
]);

describe('fuzz: the CLI OAuth endpoints', () => {
  it('answer random parameters only with their own codes', async () => {
    const origin = `http://127.0.0.1:${port}`;
    // A session of its own: the route-wide fuzz may have logged the owner's out.
    const login = await cliLogin(origin, (await createConsoleUser(ctx)).sessionToken, ['service:cli:contracts:read']);
    const pending = (
      await ctx.app.inject({
        method: 'POST',
        url: '/oauth/device/code',
        payload: { client_id: CLI_OAUTH_CLIENT_ID, scope: 'service:cli:incidents:read offline_access' },
      })
    ).json().device_code as string;
    const member = (real: fc.Arbitrary<string>) =>
      fc.option(fc.oneof({ weight: 4, arbitrary: real }, { weight: 1, arbitrary: fc.string({ maxLength: 60 }) }), {
        nil: undefined,
        freq: 4,
      });
    const parameters = fc
      .record({
        client_id: member(fc.constantFrom(CLI_OAUTH_CLIENT_ID, CLI_OAUTH_CLIENT_ID, 'other-client')),
        scope: member(
          fc.constantFrom('service:cli:contracts:read', 'service:cli:repairs:export offline_access', 'offline_access', 'openid'),
        ),
        grant_type: member(fc.constantFrom('urn:ietf:params:oauth:grant-type:device_code', 'refresh_token', 'password')),
        device_code: member(fc.constantFrom(pending, `svc_cli_dc_${'B'.repeat(43)}`)),
        refresh_token: member(fc.constantFrom(login.refreshToken, `svc_cli_rt_${'B'.repeat(43)}`)),
        token: member(fc.constantFrom(login.accessToken, login.refreshToken, owner.apiKey.key)),
        token_type_hint: member(fc.constantFrom('access_token', 'refresh_token')),
        extra: fc.option(fc.string({ maxLength: 20 }), { nil: undefined, freq: 8 }),
      })
      .map((record) => Object.fromEntries(Object.entries(record).filter(([, value]) => value !== undefined)) as Record<string, string>);
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...OAUTH_ROUTE_CODES.keys()), parameters, fc.boolean(), async (url, params, asForm) => {
        const res = await ctx.app.inject({
          method: 'POST',
          url,
          ...(asForm
            ? { headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: new URLSearchParams(params).toString() }
            : { payload: params }),
        });
        const label = `POST ${url} ${JSON.stringify(params)} → ${res.statusCode} ${res.body}`;
        expect(res.headers['cache-control'], label).toBe('no-store');
        if (res.statusCode >= 400) {
          const code = res.json().error as string;
          expect(OAUTH_ROUTE_CODES.get(url), label).toContain(code);
          expect((ERROR_CATALOGUE as Record<string, { status: number }>)[code].status, label).toBe(res.statusCode);
        } else {
          expect(res.statusCode, label).toBe(200);
          expect(OAUTH_200_KEYS.get(url), label).toContainEqual(Object.keys(res.json()).sort());
        }
      }),
      { numRuns: 600 },
    );
  });
});

describe('fuzz: protocol-level malformations over raw sockets', () => {
  it('answers every malformed request, only with catalogue answers, and HEAD without a body', async () => {
    const paths = fc
      .tuple(
        fc.constantFrom(...routes, { method: 'GET', url: '/healthz' }, { method: 'GET', url: '/nowhere' }),
        fc.array(idCandidates(), { minLength: 1, maxLength: 3 }),
      )
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
          // A console workspace page's 404 is its HTML page (management/console/consoleRoute.ts).
          const consolePage404 = response.status === 404 && /^text\/html/.test(response.headers['content-type'] ?? '');
          if (consolePage404) expect(request.bytes.toString('latin1'), sent).toMatch(/^GET \/console\/workspaces\//);
          else expect(catalogueViolation(response, { head: request.head }), sent).toBeNull();
        }
        expect(exchange.rest.toString('latin1'), `bytes after the answer to ${sent}`).toBe('');
      }),
      { numRuns: 400 },
    );
  });
});
