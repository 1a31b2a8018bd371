import type { LightMyRequestResponse } from 'fastify';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { BootstrapResult } from '../management/admin/bootstrap.js';
import { csrfTokenFor } from '../management/auth/sessionAuth.js';
import { RULE_MUTATIONS_PER_MINUTE } from '../management/rules/ruleService.js';
import { newId } from '../shared/ids.js';
import { insertConnection, readConnectionRow, type ConnectionFixture } from './helpers/connections.js';
import { addWorkspaceMember, createConsoleUser, REFUSED_CONSOLE_CALLERS, type ConsoleUser } from './helpers/consoleUsers.js';
import {
  bootstrapWorkspace,
  callWithKey,
  callWithSession,
  countRows,
  createTestContext,
  expectError,
  newIdempotencyKey,
  type CallOptions,
  type TestContext,
} from './helpers/context.js';
import { insertIntegrationRow, insertSlotConnection } from './helpers/integrations.js';
import { ruleChangeJobs, type RuleReceipt } from './helpers/rules.js';

// 02 "Console rule routes (browser session)" through the real management app, PostgreSQL and
// Redis: the expected-outcomes read, mutations by owners and admins with receipts owned by the
// user, archived and legacy workspaces, the authority re-check and the deprecated writer.

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(async () => {
  await ctx.close();
});
afterEach(() => {
  ctx.hooks.beforeAuthorityRecheck = undefined;
});

type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';

const outcomesUrl = (slug: string, connectionId: string) => `/workspaces/${slug}/integrations/${connectionId}/expected-outcomes`;
const outcomeUrl = (slug: string, connectionId: string, ruleId: string) => `${outcomesUrl(slug, connectionId)}/${ruleId}`;
const operationUrl = (slug: string, operationId: string) => `/workspaces/${slug}/rule-operations/${operationId}`;
const definition = (n = 0) => ({ sourceEventType: `order.paid.${n}`, expectedObjectType: 'shipment', maxDelayMs: 60_000 });

const call = (token: string | null, method: Method, url: string, options: CallOptions = {}) =>
  callWithSession(ctx, token, method, url, options);
const keyed = (token: string, method: Method, url: string, body: unknown, idempotencyKey: string = newIdempotencyKey()) =>
  call(token, method, url, { body, idempotencyKey });

interface Fixture {
  boot: BootstrapResult;
  slug: string;
  connection: ConnectionFixture;
  admin: ConsoleUser;
}

async function setup(): Promise<Fixture> {
  const boot = await bootstrapWorkspace(ctx);
  const admin = await createConsoleUser(ctx);
  await addWorkspaceMember(ctx, boot.workspace.id, admin.userId, 'admin');
  return { boot, slug: boot.workspace.slug, connection: await insertConnection(ctx, boot), admin };
}

/** Everything a mutation writes: all of it must stay unchanged after a refused one. */
async function writes(f: Fixture) {
  return {
    revision: (await readConnectionRow(ctx, f.connection.connectionId)).revision,
    rules: await countRows(ctx, 'reconciliation_rules', 'connection_id = $1', [f.connection.connectionId]),
    operations: await countRows(ctx, 'operations', 'workspace_id = $1', [f.boot.workspace.id]),
    audit: await countRows(ctx, 'audit_events', "workspace_id = $1 AND action LIKE 'rule.%'", [f.boot.workspace.id]),
    analysisJobs: (await ruleChangeJobs(ctx, f.connection.connectionId)).length,
  };
}

/** Creates a rule through the console as `token` and returns the 201 body. */
async function createdBy(
  f: Fixture,
  token: string,
  expectedRevision: string,
  n = 0,
): Promise<{ expectedOutcome: RuleReceipt['rule']; operation: RuleReceipt }> {
  const res = await keyed(token, 'POST', outcomesUrl(f.slug, f.connection.connectionId), { expectedRevision, ...definition(n) });
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
}

describe('the expected-outcomes read', () => {
  it('shows the revision, mode, Integration name, management permission and the rules the API shows, paged', async () => {
    const f = await setup();
    let revision = f.connection.revision;
    for (let n = 0; n < 3; n++) {
      const res = await callWithKey(ctx, f.boot.apiKey.key, 'POST', `/v1/connections/${f.connection.connectionId}/reconciliation-rules`, {
        body: { expectedRevision: revision, ...definition(n) },
        idempotencyKey: newIdempotencyKey(),
      });
      revision = res.json().revision;
    }
    const api = (
      await callWithKey(ctx, f.boot.apiKey.key, 'GET', `/v1/connections/${f.connection.connectionId}/reconciliation-rules`)
    ).json();

    for (const token of [f.boot.sessionToken, f.admin.sessionToken]) {
      const res = await call(token, 'GET', outcomesUrl(f.slug, f.connection.connectionId));
      expect(res.statusCode, res.body).toBe(200);
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.json()).toEqual({
        connectionId: f.connection.connectionId,
        workspaceIntegrationId: f.connection.integrationId,
        integrationName: 'Orders sync',
        mode: 'sandbox',
        environment: { id: f.connection.environmentId, category: 'sandbox', mode: 'sandbox' },
        revision,
        managementPermission: true,
        expectedOutcomes: api.rules,
        nextCursor: null,
      });
    }

    const first = (await call(f.admin.sessionToken, 'GET', `${outcomesUrl(f.slug, f.connection.connectionId)}?limit=2`)).json();
    expect(first.expectedOutcomes).toEqual(api.rules.slice(0, 2));
    const second = (
      await call(f.admin.sessionToken, 'GET', `${outcomesUrl(f.slug, f.connection.connectionId)}?limit=2&cursor=${first.nextCursor}`)
    ).json();
    expect(second).toMatchObject({ expectedOutcomes: api.rules.slice(2), nextCursor: null });
    for (const query of ['limit=0', 'limit=101', 'view=all']) {
      expectError(
        await call(f.admin.sessionToken, 'GET', `${outcomesUrl(f.slug, f.connection.connectionId)}?${query}`),
        400,
        'invalid_rule_request',
      );
    }
    expectError(
      await call(
        f.admin.sessionToken,
        'GET',
        `${outcomesUrl(f.slug, f.connection.connectionId)}?cursor=${first.nextCursor.slice(0, -2)}xx`,
      ),
      400,
      'invalid_rule_cursor',
    );
  });

  it('keeps a legacy environment record readable with its actual mode and management disabled; its mutations are refused', async () => {
    const legacy = await bootstrapWorkspace(ctx, { legacy: true });
    const integrationId = await insertIntegrationRow(ctx, legacy.workspace.id, 'Legacy feed');
    const staging = await insertSlotConnection(ctx, { workspaceId: legacy.workspace.id, integrationId, category: 'staging' });
    const res = await call(legacy.sessionToken, 'GET', outcomesUrl(legacy.workspace.slug, staging.connectionId));
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({
      connectionId: staging.connectionId,
      workspaceIntegrationId: integrationId,
      integrationName: 'Legacy feed',
      mode: 'sandbox',
      environment: { id: staging.environmentId, category: 'staging', mode: 'sandbox' },
      revision: staging.revision,
      managementPermission: false,
      expectedOutcomes: [],
      nextCursor: null,
    });
    const post = await keyed(legacy.sessionToken, 'POST', outcomesUrl(legacy.workspace.slug, staging.connectionId), {
      expectedRevision: staging.revision,
      ...definition(),
    });
    expectError(post, 409, 'workspace_modes_unavailable');
    expect(await countRows(ctx, 'reconciliation_rules', 'connection_id = $1', [staging.connectionId])).toBe(0);
  });

  it('answers 404 for another workspace’s connection, a wint_ id and a malformed slug', async () => {
    const f = await setup();
    const other = await bootstrapWorkspace(ctx, { email: f.boot.user.email, workspace: 'Second workspace' });
    const foreign = await insertConnection(ctx, other);
    expectError(await call(f.boot.sessionToken, 'GET', outcomesUrl(f.slug, foreign.connectionId)), 404, 'connection_not_found');
    expectError(await call(f.boot.sessionToken, 'GET', outcomesUrl(f.slug, f.connection.integrationId)), 404, 'connection_not_found');
    expectError(await call(f.boot.sessionToken, 'GET', outcomesUrl('Not_A_Slug', f.connection.connectionId)), 404, 'workspace_not_found');
  });
});

describe('roles (02 Authentication 4)', () => {
  // Every console rule route, and what a refused caller gets on it.
  const routes: [string, (f: Fixture, ruleId: string, operationId: string) => [Method, string, unknown?]][] = [
    ['read', (f) => ['GET', outcomesUrl(f.slug, f.connection.connectionId)]],
    ['create', (f) => ['POST', outcomesUrl(f.slug, f.connection.connectionId), { expectedRevision: '1', ...definition(9) }]],
    ['update', (f, ruleId) => ['PATCH', outcomeUrl(f.slug, f.connection.connectionId, ruleId), { expectedRevision: '1', enabled: true }]],
    ['delete', (f, ruleId) => ['DELETE', outcomeUrl(f.slug, f.connection.connectionId, ruleId), { expectedRevision: '1' }]],
    ['receipt', (f, _r, operationId) => ['GET', operationUrl(f.slug, operationId)]],
  ];
  for (const [caller, tokenFor, status, code] of REFUSED_CONSOLE_CALLERS) {
    it(`refuses ${caller} on every route with ${status} ${code}, writing nothing`, async () => {
      const f = await setup();
      const created = await createdBy(f, f.boot.sessionToken, f.connection.revision);
      const token = await tokenFor(ctx, f.boot.workspace.id);
      const before = await writes(f);
      for (const [label, request] of routes) {
        const [method, url, body] = request(f, created.expectedOutcome.id, created.operation.operationId);
        const res = await call(token, method, url, body === undefined ? {} : { body, idempotencyKey: newIdempotencyKey() });
        expect(res.statusCode, `${label}: ${res.body}`).toBe(status);
        expect(res.json(), label).toMatchObject({ error: code });
      }
      expect(await writes(f)).toEqual(before);
    });
  }

  it('refuses a cross-site write without the CSRF token (403 forbidden) and accepts the session’s X-CSRF-Token', async () => {
    const f = await setup();
    const body = { expectedRevision: f.connection.revision, ...definition() };
    const crossSite = await call(f.admin.sessionToken, 'POST', outcomesUrl(f.slug, f.connection.connectionId), {
      body,
      idempotencyKey: newIdempotencyKey(),
      headers: { origin: 'https://evil.example' },
    });
    expectError(crossSite, 403, 'forbidden');
    expect(await countRows(ctx, 'reconciliation_rules', 'connection_id = $1', [f.connection.connectionId])).toBe(0);
    const { rows } = await ctx.deps.pool.query<{ id: string }>('SELECT id FROM sessions WHERE user_id = $1', [f.admin.userId]);
    const withToken = await call(f.admin.sessionToken, 'POST', outcomesUrl(f.slug, f.connection.connectionId), {
      body,
      idempotencyKey: newIdempotencyKey(),
      headers: { origin: 'https://evil.example', 'x-csrf-token': csrfTokenFor(rows[0].id, ctx.deps.config.secretEncryptionKey) },
    });
    expect(withToken.statusCode, withToken.body).toBe(201);
  });
});

describe('mutations', () => {
  it('creates (201, then 200 on the identical retry), updates and deletes with the rule and its completed operation', async () => {
    const f = await setup();
    const key = newIdempotencyKey();
    const body = { expectedRevision: f.connection.revision, ...definition() };
    const res = await keyed(f.admin.sessionToken, 'POST', outcomesUrl(f.slug, f.connection.connectionId), body, key);
    expect(res.statusCode, res.body).toBe(201);
    expect(res.headers['cache-control']).toBe('no-store');
    const created = res.json();
    expect(created.expectedOutcome).toMatchObject({ ...definition(), enabled: false, lastEvaluatedAt: null });
    expect(created.operation).toMatchObject({
      connectionId: f.connection.connectionId,
      workspaceIntegrationId: f.connection.integrationId,
      mode: 'sandbox',
      action: 'rule.create',
      status: 'completed',
      expectedRevision: f.connection.revision,
      rule: created.expectedOutcome,
      replayed: false,
      historical: false,
    });
    expect(created.operation.operationId).toMatch(/^ruleop_/);
    // The operation and its audit row name the user, not a key.
    const { rows } = await ctx.deps.pool.query('SELECT api_key_id, user_id FROM operations WHERE id = $1', [created.operation.operationId]);
    expect(rows).toEqual([{ api_key_id: null, user_id: f.admin.userId }]);
    expect(
      await countRows(ctx, 'audit_events', "workspace_id = $1 AND action = 'rule.create' AND actor_type = 'user' AND actor_id = $2", [
        f.boot.workspace.id,
        f.admin.userId,
      ]),
    ).toBe(1);

    const before = await writes(f);
    const retry = await keyed(f.admin.sessionToken, 'POST', outcomesUrl(f.slug, f.connection.connectionId), body, key);
    expect(retry.statusCode).toBe(200);
    expect(retry.json()).toEqual({ expectedOutcome: created.expectedOutcome, operation: { ...created.operation, replayed: true } });
    expect(await writes(f)).toEqual(before);

    const ruleId = created.expectedOutcome.id as string;
    const updated = await keyed(f.boot.sessionToken, 'PATCH', outcomeUrl(f.slug, f.connection.connectionId, ruleId), {
      expectedRevision: created.operation.revision,
      enabled: true,
    });
    expect(updated.statusCode, updated.body).toBe(200);
    expect(updated.json()).toMatchObject({
      expectedOutcome: { id: ruleId, enabled: true },
      operation: { action: 'rule.update', expectedRevision: created.operation.revision },
    });
    const removed = await keyed(f.boot.sessionToken, 'DELETE', outcomeUrl(f.slug, f.connection.connectionId, ruleId), {
      expectedRevision: updated.json().operation.revision,
    });
    expect(removed.statusCode, removed.body).toBe(200);
    expect(removed.json()).toMatchObject({
      expectedOutcome: updated.json().expectedOutcome,
      operation: { action: 'rule.delete', rule: updated.json().expectedOutcome },
    });
    expect((await call(f.admin.sessionToken, 'GET', outcomesUrl(f.slug, f.connection.connectionId))).json()).toMatchObject({
      revision: removed.json().operation.revision,
      expectedOutcomes: [],
    });
  });

  it('requires expectedRevision (400 invalid_rule_request) and an Idempotency-Key (400 idempotency_key_required, checked first)', async () => {
    const f = await setup();
    const created = await createdBy(f, f.admin.sessionToken, f.connection.revision);
    const ruleUrl = outcomeUrl(f.slug, f.connection.connectionId, created.expectedOutcome.id);
    const cases: [Method, string, Record<string, unknown>][] = [
      ['POST', outcomesUrl(f.slug, f.connection.connectionId), definition(1)],
      ['PATCH', ruleUrl, { enabled: true }],
      ['DELETE', ruleUrl, {}],
    ];
    const before = await writes(f);
    for (const [method, url, body] of cases) {
      expectError(await keyed(f.admin.sessionToken, method, url, body), 400, 'invalid_rule_request');
      const complete = { expectedRevision: created.operation.revision, ...body };
      expectError(await call(f.admin.sessionToken, method, url, { body: complete }), 400, 'idempotency_key_required');
      expectError(await call(f.admin.sessionToken, method, url, { body }), 400, 'idempotency_key_required');
      expectError(await keyed(f.admin.sessionToken, method, url, { ...complete, tenantId: 'ten_x' }), 400, 'invalid_rule_request');
    }
    expect(await writes(f)).toEqual(before);
  });

  it('shares the API’s revision rule, uniqueness, key scope and not-found answers', async () => {
    const f = await setup();
    const created = await createdBy(f, f.admin.sessionToken, f.connection.revision);
    const url = outcomesUrl(f.slug, f.connection.connectionId);
    const before = await writes(f);
    expectError(
      await keyed(f.admin.sessionToken, 'POST', url, { expectedRevision: f.connection.revision, ...definition(1) }),
      409,
      'connection_configuration_changed',
    );
    expectError(
      await keyed(f.admin.sessionToken, 'POST', url, { expectedRevision: created.operation.revision, ...definition() }),
      409,
      'expected_outcome_already_exists',
    );
    expectError(
      await keyed(f.admin.sessionToken, 'PATCH', outcomeUrl(f.slug, f.connection.connectionId, newId('rule_')), {
        expectedRevision: created.operation.revision,
        enabled: true,
      }),
      404,
      'expected_outcome_not_found',
    );
    // An Idempotency-Key is scoped to the workspace: the API key cannot reuse the user's, nor another user.
    const key = newIdempotencyKey();
    const body = { expectedRevision: created.operation.revision, ...definition(2) };
    expect((await keyed(f.admin.sessionToken, 'POST', url, body, key)).statusCode).toBe(201);
    const afterSecond = await writes(f);
    expectError(
      await callWithKey(ctx, f.boot.apiKey.key, 'POST', `/v1/connections/${f.connection.connectionId}/reconciliation-rules`, {
        body,
        idempotencyKey: key,
      }),
      409,
      'idempotency_conflict',
    );
    expectError(await keyed(f.boot.sessionToken, 'POST', url, body, key), 409, 'idempotency_conflict');
    expect(await writes(f)).toEqual(afterSecond);
    expect(afterSecond.rules).toBe(before.rules + 1);
  });

  it(`counts console and API mutations in one workspace rate of ${RULE_MUTATIONS_PER_MINUTE} a minute`, async () => {
    const f = await setup();
    let revision = f.connection.revision;
    for (let n = 0; n < RULE_MUTATIONS_PER_MINUTE; n++) {
      const body = { expectedRevision: revision, ...definition(n) };
      const res =
        n % 2 === 0
          ? await keyed(f.admin.sessionToken, 'POST', outcomesUrl(f.slug, f.connection.connectionId), body)
          : await callWithKey(ctx, f.boot.apiKey.key, 'POST', `/v1/connections/${f.connection.connectionId}/reconciliation-rules`, {
              body,
              idempotencyKey: newIdempotencyKey(),
            });
      expect(res.statusCode, res.body).toBe(201);
      revision = n % 2 === 0 ? res.json().operation.revision : res.json().revision;
    }
    const before = await writes(f);
    const limited = await keyed(f.admin.sessionToken, 'POST', outcomesUrl(f.slug, f.connection.connectionId), {
      expectedRevision: revision,
      ...definition(1_000),
    });
    expectError(limited, 429, 'rate_limited');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(await writes(f)).toEqual(before);
  });
});

describe('receipts belong to the user who performed the operation', () => {
  it('lets the performer read it; another admin, the owner and the workspace API key get 404, and the user cannot read a key’s receipt', async () => {
    const f = await setup();
    const created = await createdBy(f, f.admin.sessionToken, f.connection.revision);
    const operationId = created.operation.operationId as string;
    const res = await call(f.admin.sessionToken, 'GET', operationUrl(f.slug, operationId));
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.json()).toEqual({ ...created.operation, replayed: true, historical: false });

    const otherAdmin = await createConsoleUser(ctx);
    await addWorkspaceMember(ctx, f.boot.workspace.id, otherAdmin.userId, 'admin');
    expectError(await call(otherAdmin.sessionToken, 'GET', operationUrl(f.slug, operationId)), 404, 'operation_not_found');
    expectError(await call(f.boot.sessionToken, 'GET', operationUrl(f.slug, operationId)), 404, 'operation_not_found');
    expectError(await callWithKey(ctx, f.boot.apiKey.key, 'GET', `/v1/rule-operations/${operationId}`), 404, 'operation_not_found');

    const byKey = await callWithKey(ctx, f.boot.apiKey.key, 'POST', `/v1/connections/${f.connection.connectionId}/reconciliation-rules`, {
      body: { expectedRevision: created.operation.revision, ...definition(1) },
      idempotencyKey: newIdempotencyKey(),
    });
    expect(byKey.statusCode).toBe(201);
    expectError(await call(f.boot.sessionToken, 'GET', operationUrl(f.slug, byKey.json().operationId)), 404, 'operation_not_found');
    expect((await callWithKey(ctx, f.boot.apiKey.key, 'GET', `/v1/rule-operations/${byKey.json().operationId}`)).statusCode).toBe(200);
    // The user's receipt is now historical: the revision moved on.
    expect((await call(f.admin.sessionToken, 'GET', operationUrl(f.slug, operationId))).json()).toMatchObject({ historical: true });
    // Not the receipt of another workspace, nor an id of another kind.
    const other = await bootstrapWorkspace(ctx, { email: f.admin.email, workspace: 'Admin own workspace' });
    expectError(await call(f.admin.sessionToken, 'GET', operationUrl(other.workspace.slug, operationId)), 404, 'operation_not_found');
    expectError(await call(f.admin.sessionToken, 'GET', operationUrl(f.slug, newId('credop_'))), 404, 'operation_not_found');
  });
});

describe('an archived workspace', () => {
  it('accepts no mutation (409 workspace_unavailable), stays readable without management, and keeps the performer’s receipt readable', async () => {
    const f = await setup();
    const created = await createdBy(f, f.admin.sessionToken, f.connection.revision);
    const ruleId = created.expectedOutcome.id as string;
    const archived = await call(f.boot.sessionToken, 'POST', `/workspaces/${f.slug}/archive`);
    expect(archived.statusCode, archived.body).toBe(200);
    const revision = created.operation.revision as string;

    const before = await writes(f);
    const mutations: [Method, string, unknown][] = [
      ['POST', outcomesUrl(f.slug, f.connection.connectionId), { expectedRevision: revision, ...definition(1) }],
      ['PATCH', outcomeUrl(f.slug, f.connection.connectionId, ruleId), { expectedRevision: revision, enabled: true }],
      ['DELETE', outcomeUrl(f.slug, f.connection.connectionId, ruleId), { expectedRevision: revision }],
    ];
    for (const token of [f.admin.sessionToken, f.boot.sessionToken]) {
      for (const [method, url, body] of mutations) expectError(await keyed(token, method, url, body), 409, 'workspace_unavailable');
    }
    expect(await writes(f)).toEqual(before);

    const read = await call(f.admin.sessionToken, 'GET', outcomesUrl(f.slug, f.connection.connectionId));
    expect(read.statusCode, read.body).toBe(200);
    expect(read.json()).toMatchObject({ managementPermission: false, revision, expectedOutcomes: [created.expectedOutcome] });

    const receipt = await call(f.admin.sessionToken, 'GET', operationUrl(f.slug, created.operation.operationId));
    expect(receipt.statusCode, receipt.body).toBe(200);
    expect(receipt.json()).toEqual({ ...created.operation, replayed: true, historical: false });
    expectError(await call(f.boot.sessionToken, 'GET', operationUrl(f.slug, created.operation.operationId)), 404, 'operation_not_found');
  });
});

describe('the authority re-check inside the transaction', () => {
  // Each change commits on another connection while the mutation's transaction is open.
  const cases: [string, (f: Fixture) => Promise<unknown>, number, string][] = [
    [
      'the user demoted to viewer',
      (f) =>
        ctx.deps.pool.query("UPDATE workspace_members SET role = 'viewer' WHERE workspace_id = $1 AND user_id = $2", [
          f.boot.workspace.id,
          f.admin.userId,
        ]),
      403,
      'forbidden',
    ],
    [
      'the user removed from the workspace',
      (f) =>
        ctx.deps.pool.query('DELETE FROM workspace_members WHERE workspace_id = $1 AND user_id = $2', [
          f.boot.workspace.id,
          f.admin.userId,
        ]),
      403,
      'forbidden',
    ],
    [
      'the session signed out',
      (f) => ctx.deps.pool.query('UPDATE sessions SET revoked_at = now() WHERE user_id = $1', [f.admin.userId]),
      401,
      'unauthenticated',
    ],
    [
      'the workspace archived',
      (f) => ctx.deps.pool.query("UPDATE workspaces SET status = 'archived', archived_at = now() WHERE id = $1", [f.boot.workspace.id]),
      409,
      'workspace_unavailable',
    ],
    [
      'the authorization epoch moved',
      (f) => ctx.deps.pool.query('UPDATE workspaces SET auth_epoch = auth_epoch + 1 WHERE id = $1', [f.boot.workspace.id]),
      409,
      'connection_configuration_changed',
    ],
  ];

  for (const [label, change, status, code] of cases) {
    it(`rolls back the rule, revision, receipt and audit for ${label} (${status} ${code})`, async () => {
      const f = await setup();
      const before = await writes(f);
      const kinds: string[] = [];
      ctx.hooks.beforeAuthorityRecheck = async (kind) => {
        kinds.push(kind);
        await change(f);
      };
      const res = await keyed(f.admin.sessionToken, 'POST', outcomesUrl(f.slug, f.connection.connectionId), {
        expectedRevision: f.connection.revision,
        ...definition(),
      });
      expect(kinds).toEqual(['rule.create']);
      expectError(res, status, code);
      expect(await writes(f)).toEqual(before);
    });
  }
});

describe('the deprecated POST /integrations/{connectionId}/reconciliation-rules', () => {
  const deprecatedUrl = (connectionId: string) => `/integrations/${connectionId}/reconciliation-rules`;

  it('answers an owner or admin with 409 canonical_lifecycle_required, Deprecation: true, and writes nothing', async () => {
    const f = await setup();
    const before = await writes(f);
    for (const token of [f.boot.sessionToken, f.admin.sessionToken]) {
      for (const body of [{ ...definition(), enabled: true }, {}]) {
        const res = await call(token, 'POST', deprecatedUrl(f.connection.connectionId), { body });
        expectError(res, 409, 'canonical_lifecycle_required');
        expect(res.headers.deprecation).toBe('true');
      }
    }
    const bare = await ctx.app.inject({
      method: 'POST',
      url: deprecatedUrl(f.connection.connectionId),
      headers: { cookie: `session=${f.boot.sessionToken}`, origin: ctx.deps.config.consoleOrigin },
    });
    expectError(bare, 409, 'canonical_lifecycle_required');
    expect(await writes(f)).toEqual(before);
  });

  it('answers unknown, unowned and malformed connections with 404, and keeps the header on authentication and CSRF errors', async () => {
    const f = await setup();
    const viewer = await createConsoleUser(ctx);
    await addWorkspaceMember(ctx, f.boot.workspace.id, viewer.userId, 'viewer');
    const stranger = await bootstrapWorkspace(ctx);
    const cases: [string, () => Promise<LightMyRequestResponse>, number, string][] = [
      [
        'a viewer',
        () => call(viewer.sessionToken, 'POST', deprecatedUrl(f.connection.connectionId), { body: {} }),
        404,
        'connection_not_found',
      ],
      [
        'another workspace’s owner',
        () => call(stranger.sessionToken, 'POST', deprecatedUrl(f.connection.connectionId), { body: {} }),
        404,
        'connection_not_found',
      ],
      ['an unknown id', () => call(f.boot.sessionToken, 'POST', deprecatedUrl(newId('int_')), { body: {} }), 404, 'connection_not_found'],
      [
        'a wint_ id',
        () => call(f.boot.sessionToken, 'POST', deprecatedUrl(f.connection.integrationId), { body: {} }),
        404,
        'connection_not_found',
      ],
      ['no session', () => call(null, 'POST', deprecatedUrl(f.connection.connectionId), { body: {} }), 401, 'unauthenticated'],
      [
        'an API key',
        () => callWithKey(ctx, f.boot.apiKey.key, 'POST', deprecatedUrl(f.connection.connectionId), { body: {} }),
        401,
        'unauthenticated',
      ],
      [
        'a cross-site origin',
        () =>
          call(f.boot.sessionToken, 'POST', deprecatedUrl(f.connection.connectionId), {
            body: {},
            headers: { origin: 'https://evil.example' },
          }),
        403,
        'forbidden',
      ],
      [
        'a non-object body',
        () => call(f.boot.sessionToken, 'POST', deprecatedUrl(f.connection.connectionId), { body: ['x'] }),
        400,
        'invalid_rule_request',
      ],
    ];
    for (const [label, run, status, code] of cases) {
      const res = await run();
      expect(res.statusCode, `${label}: ${res.body}`).toBe(status);
      expect(res.json(), label).toMatchObject({ error: code });
      expect(res.headers.deprecation, label).toBe('true');
    }
  });
});

// 02 Conventions: `Cache-Control: no-store` on all responses, errors included.
describe('Cache-Control: no-store on the errors of every 02 route', () => {
  const fingerprint = `sha256:${'0'.repeat(64)}`;
  /** A request to one route: its caller (API key or session), method, path and, for writes, body and Idempotency-Key. */
  interface RouteRequest {
    by: 'key' | 'session';
    method: Method;
    url: string;
    body?: unknown;
    keyed?: boolean;
  }
  interface Ids {
    slug: string;
    connectionId: string;
    sourceConnectionId: string;
    integrationId: string;
  }
  const setupBody = (ids: Ids) => ({ destinationMode: 'live', sourceConnectionId: ids.sourceConnectionId, ruleIds: [newId('rule_')] });
  const copyBody = (ids: Ids) => ({ sourceConnectionId: ids.sourceConnectionId, ruleIds: [newId('rule_')] });
  const ruleBody = { expectedRevision: '1', ...definition(5) };

  const RULE = 'invalid_rule_request';
  const SETUP = 'invalid_connection_setup';
  const COPY = 'invalid_configuration_request';

  // Every route of 02, with ids its caller cannot see (another workspace's connection and
  // Integration, unknown rule and operation ids), and the route's code for an unknown query parameter.
  const routes: [string, (ids: Ids) => RouteRequest, notFound: string, invalid: string][] = [
    [
      'GET /v1 rules',
      (ids) => ({ by: 'key', method: 'GET', url: `/v1/connections/${ids.connectionId}/reconciliation-rules` }),
      'connection_not_found',
      RULE,
    ],
    [
      'GET /v1 rule',
      (ids) => ({ by: 'key', method: 'GET', url: `/v1/connections/${ids.sourceConnectionId}/reconciliation-rules/${newId('rule_')}` }),
      'expected_outcome_not_found',
      RULE,
    ],
    [
      'POST /v1 rule',
      (ids) => ({
        by: 'key',
        method: 'POST',
        url: `/v1/connections/${ids.connectionId}/reconciliation-rules`,
        body: ruleBody,
        keyed: true,
      }),
      'connection_not_found',
      RULE,
    ],
    [
      'PATCH /v1 rule',
      (ids) => ({
        by: 'key',
        method: 'PATCH',
        url: `/v1/connections/${ids.sourceConnectionId}/reconciliation-rules/${newId('rule_')}`,
        body: { expectedRevision: '1', enabled: true },
        keyed: true,
      }),
      'expected_outcome_not_found',
      RULE,
    ],
    [
      'DELETE /v1 rule',
      (ids) => ({
        by: 'key',
        method: 'DELETE',
        url: `/v1/connections/${ids.connectionId}/reconciliation-rules/${newId('rule_')}`,
        body: { expectedRevision: '1' },
        keyed: true,
      }),
      'connection_not_found',
      RULE,
    ],
    [
      'GET /v1/rule-operations',
      () => ({ by: 'key', method: 'GET', url: `/v1/rule-operations/${newId('ruleop_')}` }),
      'operation_not_found',
      RULE,
    ],
    [
      'POST /v1 setup preview',
      (ids) => ({ by: 'key', method: 'POST', url: `/v1/integrations/${ids.integrationId}/connections/preview`, body: setupBody(ids) }),
      'integration_not_found',
      SETUP,
    ],
    [
      'POST /v1 setup apply',
      () => ({
        by: 'key',
        method: 'POST',
        url: `/v1/connection-setup/${newId('consetup_')}/apply`,
        body: { approvalFingerprint: fingerprint },
        keyed: true,
      }),
      'operation_not_found',
      SETUP,
    ],
    [
      'GET /v1 setup',
      () => ({ by: 'key', method: 'GET', url: `/v1/connection-setup/${newId('consetup_')}` }),
      'operation_not_found',
      SETUP,
    ],
    [
      'POST /v1 copy preview',
      (ids) => ({ by: 'key', method: 'POST', url: `/v1/connections/${ids.connectionId}/configuration-copy/preview`, body: copyBody(ids) }),
      'connection_not_found',
      COPY,
    ],
    [
      'POST /v1 copy apply',
      () => ({
        by: 'key',
        method: 'POST',
        url: `/v1/configuration-operations/${newId('concopy_')}/apply`,
        body: { approvalFingerprint: fingerprint },
        keyed: true,
      }),
      'operation_not_found',
      COPY,
    ],
    [
      'GET /v1 copy',
      () => ({ by: 'key', method: 'GET', url: `/v1/configuration-operations/${newId('concopy_')}` }),
      'operation_not_found',
      COPY,
    ],
    [
      'POST /v1 compensation preview',
      () => ({ by: 'key', method: 'POST', url: `/v1/configuration-operations/${newId('concopy_')}/compensation-preview`, body: {} }),
      'operation_not_found',
      COPY,
    ],
    [
      'GET console expected outcomes',
      (ids) => ({ by: 'session', method: 'GET', url: outcomesUrl(ids.slug, ids.connectionId) }),
      'connection_not_found',
      RULE,
    ],
    [
      'POST console expected outcome',
      (ids) => ({ by: 'session', method: 'POST', url: outcomesUrl(ids.slug, ids.connectionId), body: ruleBody, keyed: true }),
      'connection_not_found',
      RULE,
    ],
    [
      'PATCH console expected outcome',
      (ids) => ({
        by: 'session',
        method: 'PATCH',
        url: outcomeUrl(ids.slug, ids.sourceConnectionId, newId('rule_')),
        body: { expectedRevision: '1', enabled: true },
        keyed: true,
      }),
      'expected_outcome_not_found',
      RULE,
    ],
    [
      'DELETE console expected outcome',
      (ids) => ({
        by: 'session',
        method: 'DELETE',
        url: outcomeUrl(ids.slug, ids.connectionId, newId('rule_')),
        body: { expectedRevision: '1' },
        keyed: true,
      }),
      'connection_not_found',
      RULE,
    ],
    [
      'GET console rule-operations',
      (ids) => ({ by: 'session', method: 'GET', url: operationUrl(ids.slug, newId('ruleop_')) }),
      'operation_not_found',
      RULE,
    ],
    [
      'POST console setup preview',
      (ids) => ({
        by: 'session',
        method: 'POST',
        url: `/workspaces/${ids.slug}/integrations/${ids.integrationId}/connections/preview`,
        body: setupBody(ids),
      }),
      'integration_not_found',
      SETUP,
    ],
    [
      'POST console setup apply',
      (ids) => ({
        by: 'session',
        method: 'POST',
        url: `/workspaces/${ids.slug}/connection-setup/${newId('consetup_')}/apply`,
        body: { approvalFingerprint: fingerprint },
        keyed: true,
      }),
      'operation_not_found',
      SETUP,
    ],
    [
      'GET console setup',
      (ids) => ({ by: 'session', method: 'GET', url: `/workspaces/${ids.slug}/connection-setup/${newId('consetup_')}` }),
      'operation_not_found',
      SETUP,
    ],
    [
      'POST console copy preview',
      (ids) => ({
        by: 'session',
        method: 'POST',
        url: `/workspaces/${ids.slug}/connections/${ids.connectionId}/configuration-copy/preview`,
        body: copyBody(ids),
      }),
      'connection_not_found',
      COPY,
    ],
    [
      'POST console copy apply',
      (ids) => ({
        by: 'session',
        method: 'POST',
        url: `/workspaces/${ids.slug}/configuration-operations/${newId('concopy_')}/apply`,
        body: { approvalFingerprint: fingerprint },
        keyed: true,
      }),
      'operation_not_found',
      COPY,
    ],
    [
      'GET console copy',
      (ids) => ({ by: 'session', method: 'GET', url: `/workspaces/${ids.slug}/configuration-operations/${newId('concopy_')}` }),
      'operation_not_found',
      COPY,
    ],
    [
      'POST console compensation preview',
      (ids) => ({
        by: 'session',
        method: 'POST',
        url: `/workspaces/${ids.slug}/configuration-operations/${newId('concopy_')}/compensation-preview`,
        body: {},
      }),
      'operation_not_found',
      COPY,
    ],
    [
      'POST deprecated reconciliation-rules',
      (ids) => ({ by: 'session', method: 'POST', url: `/integrations/${ids.connectionId}/reconciliation-rules`, body: {} }),
      'connection_not_found',
      RULE,
    ],
  ];

  it.each(routes)(
    '%s: 401 without credentials, 404 for ids of another workspace or unknown ones, 400 for an unknown query parameter',
    async (label, requestFor, notFound, invalid) => {
      const f = await setup();
      const stranger = await insertConnection(ctx, await bootstrapWorkspace(ctx), 'live');
      const ids: Ids = {
        slug: f.slug,
        connectionId: stranger.connectionId,
        sourceConnectionId: f.connection.connectionId,
        integrationId: stranger.integrationId,
      };
      const send = (credential: 'none' | 'owner', request: RouteRequest) => {
        const options: CallOptions = {
          ...(request.body === undefined ? {} : { body: request.body }),
          ...(request.keyed ? { idempotencyKey: newIdempotencyKey() } : {}),
        };
        return request.by === 'key'
          ? callWithKey(ctx, credential === 'owner' ? f.boot.apiKey.key : null, request.method, request.url, options)
          : call(credential === 'owner' ? f.boot.sessionToken : null, request.method, request.url, options);
      };
      const request = requestFor(ids);
      const answers: [string, LightMyRequestResponse, number, string][] = [
        ['unauthenticated', await send('none', request), 401, 'unauthenticated'],
        ['not found', await send('owner', request), 404, notFound],
        ['invalid', await send('owner', { ...request, url: `${request.url}?bogus=1` }), 400, invalid],
      ];
      for (const [kind, res, status, code] of answers) {
        expect(res.statusCode, `${label} ${kind}: ${res.body}`).toBe(status);
        expect(res.json(), `${label} ${kind}`).toEqual({ error: code });
        expect(res.headers['cache-control'], `${label} ${kind}`).toBe('no-store');
      }
    },
  );
});
