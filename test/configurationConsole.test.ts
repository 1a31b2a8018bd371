import type { LightMyRequestResponse } from 'fastify';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { BootstrapResult } from '../management/admin/bootstrap.js';
import { csrfTokenFor } from '../management/auth/sessionAuth.js';
import { PREVIEWS_PER_MINUTE } from '../management/configuration/configurationService.js';
import { setWritePause } from '../management/maintenance.js';
import { newId } from '../shared/ids.js';
import { RedisKeys } from '../shared/redis.js';
import { expectedProof, type ConfigurationReceipt, type ConfigurationReview, type SetupReview } from './helpers/configuration.js';
import { insertConnections, readConnectionRow, type ConnectionFixture } from './helpers/connections.js';
import { addWorkspaceMember, createConsoleUser, REFUSED_CONSOLE_CALLERS, type ConsoleUser } from './helpers/consoleUsers.js';
import {
  advanceClock,
  bootstrapWorkspace,
  callWithKey,
  callWithSession,
  countRows,
  createTestContext,
  expectError,
  newIdempotencyKey,
  resetClockAndHooks,
  type CallOptions,
  type TestContext,
} from './helpers/context.js';
import { openApiRegistration, registerDraft } from './helpers/contracts.js';
import { createIntegration } from './helpers/integrations.js';
import { createRuleWithKey } from './helpers/rules.js';

// 02 "Browser session adapters" of second-mode setup, configuration copy and compensation, through
// the real management app, PostgreSQL and Redis: the same flows under /workspaces/{workspaceSlug}
// for a current owner or admin, reviews owned by the user who made them, the archived-workspace
// rules, the authority re-check and the preview minute shared with API keys.

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(async () => {
  await ctx.close();
});
afterEach(() => resetClockAndHooks(ctx));

type Method = 'GET' | 'POST';

const copyPreviewUrl = (slug: string, connectionId: string) => `/workspaces/${slug}/connections/${connectionId}/configuration-copy/preview`;
const operationUrl = (slug: string, operationId: string) => `/workspaces/${slug}/configuration-operations/${operationId}`;
const setupPreviewUrl = (slug: string, integrationId: string) => `/workspaces/${slug}/integrations/${integrationId}/connections/preview`;
const setupUrl = (slug: string, operationId: string) => `/workspaces/${slug}/connection-setup/${operationId}`;

const call = (token: string | null, method: Method, url: string, options: CallOptions = {}) =>
  callWithSession(ctx, token, method, url, options);
const applyAs = (token: string | null, url: string, approvalFingerprint: string, idempotencyKey: string = newIdempotencyKey()) =>
  call(token, 'POST', `${url}/apply`, { body: { approvalFingerprint }, idempotencyKey });

/**
 * A workspace (owner with a session and an API key) with an admin, and two Integrations: one with
 * both mode connections (copy), one with its Sandbox connection only (setup). Each Sandbox
 * connection holds a draft and a rule to select.
 */
interface World {
  boot: BootstrapResult;
  slug: string;
  admin: ConsoleUser;
  copy: { sandbox: ConnectionFixture; live: ConnectionFixture; versionId: string; ruleId: string };
  setup: { integrationId: string; sourceId: string; versionId: string; ruleId: string };
}

async function createRule(key: string, connectionId: string): Promise<string> {
  const receipt = await createRuleWithKey(ctx, key, connectionId, {
    sourceEventType: 'order.paid',
    expectedObjectType: 'shipment',
    maxDelayMs: 60_000,
    enabled: true,
  });
  return receipt.rule.id;
}

async function world(): Promise<World> {
  const boot = await bootstrapWorkspace(ctx);
  const admin = await createConsoleUser(ctx);
  await addWorkspaceMember(ctx, boot.workspace.id, admin.userId, 'admin');
  const key = boot.apiKey.key;
  const { sandbox, live } = await insertConnections(ctx, boot, ['sandbox', 'live']);
  const copyDraft = await registerDraft(ctx, key, sandbox.connectionId, openApiRegistration('2024-01'));
  const created = await createIntegration(ctx, key, { mode: 'sandbox', name: 'Refunds feed' });
  const sourceId = created.integration.connectionId;
  const setupDraft = await registerDraft(ctx, key, sourceId, openApiRegistration('2024-01'));
  return {
    boot,
    slug: boot.workspace.slug,
    admin,
    copy: { sandbox, live, versionId: copyDraft.contract.id, ruleId: await createRule(key, sandbox.connectionId) },
    setup: { integrationId: created.integration.id, sourceId, versionId: setupDraft.contract.id, ruleId: await createRule(key, sourceId) },
  };
}

const copySelection = (w: World) => ({
  sourceConnectionId: w.copy.sandbox.connectionId,
  contractVersionIds: [w.copy.versionId],
  ruleIds: [w.copy.ruleId],
});
/** What is left to copy once `copiedBy` copied the rule. */
const contractOnly = (w: World) => ({ sourceConnectionId: w.copy.sandbox.connectionId, contractVersionIds: [w.copy.versionId] });
const setupSelection = (w: World) => ({
  destinationMode: 'live',
  sourceConnectionId: w.setup.sourceId,
  contractVersionIds: [w.setup.versionId],
  ruleIds: [w.setup.ruleId],
});

async function previewCopy(w: World, token: string, body: unknown = copySelection(w)): Promise<ConfigurationReview> {
  const res = await call(token, 'POST', copyPreviewUrl(w.slug, w.copy.live.connectionId), { body });
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
}

async function previewSetup(w: World, token: string, body: unknown = setupSelection(w)): Promise<SetupReview> {
  const res = await call(token, 'POST', setupPreviewUrl(w.slug, w.setup.integrationId), { body });
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
}

/** A copy of the rule only, previewed and applied by `token`. */
async function copiedBy(
  w: World,
  token: string,
): Promise<{ review: ConfigurationReview; receipt: ConfigurationReceipt; idempotencyKey: string }> {
  const review = await previewCopy(w, token, { sourceConnectionId: w.copy.sandbox.connectionId, ruleIds: [w.copy.ruleId] });
  const idempotencyKey = newIdempotencyKey();
  const res = await applyAs(token, operationUrl(w.slug, review.operationId), review.fingerprint, idempotencyKey);
  expect(res.statusCode, res.body).toBe(201);
  return { review, receipt: res.json(), idempotencyKey };
}

/** Everything previews and applies write in the workspace: all of it unchanged after a refused request. */
async function writes(w: World) {
  const ws = [w.boot.workspace.id];
  const connections = await ctx.deps.pool.query(
    'SELECT id, revision, credential_epoch FROM connections WHERE workspace_id = $1 ORDER BY id',
    ws,
  );
  return {
    connections: connections.rows,
    credentials: await countRows(ctx, 'credentials', 'connection_id IN (SELECT id FROM connections WHERE workspace_id = $1)', ws),
    contractVersions: await countRows(ctx, 'contract_versions', 'workspace_id = $1', ws),
    rules: await countRows(ctx, 'reconciliation_rules', 'workspace_id = $1', ws),
    operations: await countRows(ctx, 'operations', 'workspace_id = $1', ws),
    configurationReviews: await countRows(ctx, 'configuration_reviews', 'workspace_id = $1', ws),
    setupReviews: await countRows(ctx, 'connection_setups', 'workspace_id = $1 AND completed_at IS NULL', ws),
    audit: await countRows(ctx, 'audit_events', 'workspace_id = $1', ws),
  };
}

async function actorOf(table: 'configuration_reviews' | 'connection_setups' | 'operations', id: string): Promise<unknown> {
  return (await ctx.deps.pool.query(`SELECT api_key_id, user_id FROM ${table} WHERE id = $1`, [id])).rows[0];
}

async function auditActors(workspaceId: string, action: string): Promise<unknown[]> {
  return (
    await ctx.deps.pool.query('SELECT actor_type, actor_id FROM audit_events WHERE workspace_id = $1 AND action = $2', [
      workspaceId,
      action,
    ])
  ).rows;
}

/**
 * Another actor's copy review, completed copy and setup review: `token` can neither apply, read
 * nor compensate them (404 `operation_not_found`).
 */
async function expectNotFoundTo(
  token: string,
  w: World,
  reviews: { copy: ConfigurationReview; done: ConfigurationReview; setup: SetupReview },
): Promise<void> {
  const { copy, done, setup } = reviews;
  expectError(await applyAs(token, operationUrl(w.slug, copy.operationId), copy.fingerprint), 404, 'operation_not_found');
  expectError(await call(token, 'GET', operationUrl(w.slug, copy.operationId)), 404, 'operation_not_found');
  expectError(await call(token, 'GET', operationUrl(w.slug, done.operationId)), 404, 'operation_not_found');
  expectError(
    await call(token, 'POST', `${operationUrl(w.slug, done.operationId)}/compensation-preview`, { body: {} }),
    404,
    'operation_not_found',
  );
  expectError(await applyAs(token, setupUrl(w.slug, setup.operationId), setup.fingerprint), 404, 'operation_not_found');
  expectError(await call(token, 'GET', setupUrl(w.slug, setup.operationId)), 404, 'operation_not_found');
}

const roles: ['owner' | 'admin', (w: World) => { token: string; userId: string }][] = [
  ['owner', (w) => ({ token: w.boot.sessionToken, userId: w.boot.user.id })],
  ['admin', (w) => ({ token: w.admin.sessionToken, userId: w.admin.userId })],
];

describe.each(roles)('an %s through the browser session', (_role, as) => {
  it('previews, applies, replays and reads a configuration copy, then compensates it the same way; everything names the user', async () => {
    const w = await world();
    const { token, userId } = as(w);
    const before = await writes(w);
    const res = await call(token, 'POST', copyPreviewUrl(w.slug, w.copy.live.connectionId), { body: copySelection(w) });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.headers['cache-control']).toBe('no-store');
    const review = res.json();
    expect(review).toMatchObject({ action: 'configuration.copy', status: 'previewed', originalOperationId: null, copiedArtifacts: null });
    expect(review.operationId).toMatch(/^concopy_/);
    expect(review.snapshot.identity.tenantId).toBe(w.boot.workspace.tenantId);
    expect(review.snapshot.destination).toEqual({
      mode: 'live',
      environmentId: w.copy.live.environmentId,
      connectionId: w.copy.live.connectionId,
      revision: w.copy.live.revision,
    });
    expect(await actorOf('configuration_reviews', review.operationId)).toEqual({ api_key_id: null, user_id: userId });
    expect(await auditActors(w.boot.workspace.id, 'configuration.copy.preview')).toEqual([{ actor_type: 'user', actor_id: userId }]);
    expect(await writes(w)).toMatchObject({ ...before, configurationReviews: 1, audit: before.audit + 1 });
    expect((await call(token, 'GET', operationUrl(w.slug, review.operationId))).json()).toEqual(review);

    const idempotencyKey = newIdempotencyKey();
    const applied = await applyAs(token, operationUrl(w.slug, review.operationId), review.fingerprint, idempotencyKey);
    expect(applied.statusCode, applied.body).toBe(201);
    expect(applied.headers['cache-control']).toBe('no-store');
    const receipt = applied.json();
    expect(receipt).toMatchObject({
      operationId: review.operationId,
      action: 'configuration.copy',
      status: 'completed',
      connectionId: w.copy.live.connectionId,
      mode: 'live',
      revision: (await readConnectionRow(ctx, w.copy.live.connectionId)).revision,
      replayed: false,
      historical: false,
      proof: expectedProof(review),
    });
    expect(await actorOf('operations', review.operationId)).toEqual({ api_key_id: null, user_id: userId });
    expect(await auditActors(w.boot.workspace.id, 'configuration.copy')).toEqual([{ actor_type: 'user', actor_id: userId }]);
    const draftId = receipt.copiedArtifacts.contracts[0].destinationContractVersionId;
    expect((await ctx.deps.pool.query('SELECT api_key_id, lifecycle_status FROM contract_versions WHERE id = $1', [draftId])).rows).toEqual(
      [{ api_key_id: null, lifecycle_status: 'draft' }],
    );

    const afterCopy = await writes(w);
    const retry = await applyAs(token, operationUrl(w.slug, review.operationId), review.fingerprint, idempotencyKey);
    expect(retry.statusCode).toBe(200);
    expect(retry.json()).toEqual({ ...receipt, replayed: true });
    expect((await call(token, 'GET', operationUrl(w.slug, review.operationId))).json()).toEqual({ ...receipt, replayed: true });
    expect(await writes(w)).toEqual(afterCopy);

    const compensation = await call(token, 'POST', `${operationUrl(w.slug, review.operationId)}/compensation-preview`, { body: {} });
    expect(compensation.statusCode, compensation.body).toBe(201);
    const comp = compensation.json();
    expect(comp).toMatchObject({
      action: 'configuration.compensate',
      status: 'previewed',
      originalOperationId: review.operationId,
      copiedArtifacts: receipt.copiedArtifacts,
    });
    expect(comp.operationId).toMatch(/^concomp_/);
    expect(await actorOf('configuration_reviews', comp.operationId)).toEqual({ api_key_id: null, user_id: userId });
    const compKey = newIdempotencyKey();
    const removal = await applyAs(token, operationUrl(w.slug, comp.operationId), comp.fingerprint, compKey);
    expect(removal.statusCode, removal.body).toBe(201);
    expect(removal.json()).toMatchObject({
      action: 'configuration.compensate',
      originalOperationId: review.operationId,
      copiedArtifacts: receipt.copiedArtifacts,
      replayed: false,
    });
    expect(await writes(w)).toMatchObject({ contractVersions: before.contractVersions, rules: before.rules });
    const removedRetry = await applyAs(token, operationUrl(w.slug, comp.operationId), comp.fingerprint, compKey);
    expect(removedRetry.statusCode).toBe(200);
    expect(removedRetry.json()).toEqual({ ...removal.json(), replayed: true });
    expect((await call(token, 'GET', operationUrl(w.slug, comp.operationId))).json()).toEqual({ ...removal.json(), replayed: true });
    // The copy receipt stays readable, now historical.
    expect((await call(token, 'GET', operationUrl(w.slug, review.operationId))).json()).toEqual({
      ...receipt,
      replayed: true,
      historical: true,
    });
  });

  it('previews and applies a second-mode setup: the token once, then the credential-free receipt on retry and status', async () => {
    const w = await world();
    const { token, userId } = as(w);
    const res = await call(token, 'POST', setupPreviewUrl(w.slug, w.setup.integrationId), { body: setupSelection(w) });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.headers['cache-control']).toBe('no-store');
    const review = res.json();
    expect(review).toMatchObject({
      action: 'connection.setup',
      status: 'previewed',
      workspaceIntegrationId: w.setup.integrationId,
      mode: 'live',
    });
    expect(review.snapshot.identity.tenantId).toBe(w.boot.workspace.tenantId);
    expect(await actorOf('connection_setups', review.operationId)).toEqual({ api_key_id: null, user_id: userId });
    expect(await auditActors(w.boot.workspace.id, 'connection.setup.preview')).toEqual([{ actor_type: 'user', actor_id: userId }]);
    expect((await call(token, 'GET', setupUrl(w.slug, review.operationId))).json()).toEqual(review);

    const idempotencyKey = newIdempotencyKey();
    const applied = await applyAs(token, setupUrl(w.slug, review.operationId), review.fingerprint, idempotencyKey);
    expect(applied.statusCode, applied.body).toBe(201);
    const body = applied.json();
    expect(body).toMatchObject({
      operationId: review.operationId,
      action: 'connection.setup',
      status: 'completed',
      workspaceIntegrationId: w.setup.integrationId,
      mode: 'live',
      replayed: false,
      historical: false,
      credentialRecoveryRequired: false,
      connection: { id: body.connectionId, credentialStatus: 'active', activeContractVersionId: null },
    });
    expect(body.copiedArtifacts.contracts).toHaveLength(1);
    expect(body.copiedArtifacts.rules).toHaveLength(1);
    const token1 = body.collectorConfiguration.ingestToken as string;
    expect(token1).toMatch(/^svc_ing_/);
    // The ingest edge's epoch of the new connection, under its account's hash tag, moved before and after COMMIT.
    expect(await ctx.deps.redis.get(RedisKeys.credentialEpoch(w.boot.account.id, body.connectionId))).toBe('2');
    expect(await actorOf('operations', review.operationId)).toEqual({ api_key_id: null, user_id: userId });
    expect(await auditActors(w.boot.workspace.id, 'connection.setup')).toEqual([{ actor_type: 'user', actor_id: userId }]);

    const { ingestToken: _shown, ...configuration } = body.collectorConfiguration;
    const receipt = { ...body, collectorConfiguration: configuration, replayed: true, credentialRecoveryRequired: true };
    const afterApply = await writes(w);
    const retry = await applyAs(token, setupUrl(w.slug, review.operationId), review.fingerprint, idempotencyKey);
    expect(retry.statusCode).toBe(200);
    expect(retry.json()).toEqual(receipt);
    expect(retry.body).not.toContain(token1);
    const read = await call(token, 'GET', setupUrl(w.slug, review.operationId));
    expect(read.statusCode).toBe(200);
    expect(read.headers['cache-control']).toBe('no-store');
    expect(read.json()).toEqual(receipt);
    expect(await writes(w)).toEqual(afterApply);
  });
});

describe('who may use the routes (02 Authentication 4)', () => {
  interface Ids {
    pending: ConfigurationReview;
    completed: ConfigurationReview;
    setup: SetupReview;
  }
  // Every console route of this feature, as [label, method, url, body, keyed].
  const routes = (w: World, ids: Ids): [string, Method, string, unknown, boolean][] => [
    ['copy preview', 'POST', copyPreviewUrl(w.slug, w.copy.live.connectionId), contractOnly(w), false],
    ['compensation preview', 'POST', `${operationUrl(w.slug, ids.completed.operationId)}/compensation-preview`, {}, false],
    [
      'copy apply',
      'POST',
      `${operationUrl(w.slug, ids.pending.operationId)}/apply`,
      { approvalFingerprint: ids.pending.fingerprint },
      true,
    ],
    ['copy status', 'GET', operationUrl(w.slug, ids.pending.operationId), undefined, false],
    ['setup preview', 'POST', setupPreviewUrl(w.slug, w.setup.integrationId), setupSelection(w), false],
    ['setup apply', 'POST', `${setupUrl(w.slug, ids.setup.operationId)}/apply`, { approvalFingerprint: ids.setup.fingerprint }, true],
    ['setup status', 'GET', setupUrl(w.slug, ids.setup.operationId), undefined, false],
  ];

  async function withReviews(): Promise<{ w: World; ids: Ids }> {
    const w = await world();
    const { review: completed } = await copiedBy(w, w.boot.sessionToken);
    const pending = await previewCopy(w, w.boot.sessionToken, contractOnly(w));
    return { w, ids: { pending, completed, setup: await previewSetup(w, w.boot.sessionToken) } };
  }

  it.each(REFUSED_CONSOLE_CALLERS)('refuses %s on every route, writing nothing', async (_caller, tokenFor, status, code) => {
    const { w, ids } = await withReviews();
    const token = await tokenFor(ctx, w.boot.workspace.id);
    const before = await writes(w);
    for (const [label, method, url, body, keyed] of routes(w, ids)) {
      const res = await call(token, method, url, {
        ...(body === undefined ? {} : { body }),
        ...(keyed ? { idempotencyKey: newIdempotencyKey() } : {}),
      });
      expect(res.statusCode, `${label}: ${res.body}`).toBe(status);
      expect(res.json(), label).toEqual({ error: code });
    }
    expect(await writes(w)).toEqual(before);
  });

  it('refuses cross-site writes (403 forbidden) and accepts the session’s X-CSRF-Token', async () => {
    const { w, ids } = await withReviews();
    const before = await writes(w);
    for (const [label, method, url, body, keyed] of routes(w, ids).filter(([, method]) => method === 'POST')) {
      const res = await call(w.boot.sessionToken, method, url, {
        body,
        headers: { origin: 'https://evil.example' },
        ...(keyed ? { idempotencyKey: newIdempotencyKey() } : {}),
      });
      expect(res.statusCode, `${label}: ${res.body}`).toBe(403);
      expect(res.json(), label).toEqual({ error: 'forbidden' });
    }
    expect(await writes(w)).toEqual(before);
    const { rows } = await ctx.deps.pool.query<{ id: string }>('SELECT id FROM sessions WHERE user_id = $1', [w.boot.user.id]);
    const withToken = await call(w.boot.sessionToken, 'POST', copyPreviewUrl(w.slug, w.copy.live.connectionId), {
      body: contractOnly(w),
      headers: { origin: 'https://evil.example', 'x-csrf-token': csrfTokenFor(rows[0].id, ctx.deps.config.secretEncryptionKey) },
    });
    expect(withToken.statusCode, withToken.body).toBe(201);
  });

  it('checks the body and Idempotency-Key with the routes’ own codes, then the workspace, the pause and the topology', async () => {
    const { w, ids } = await withReviews();
    const before = await writes(w);
    const copyApply = `${operationUrl(w.slug, ids.pending.operationId)}/apply`;
    const setupApply = `${setupUrl(w.slug, ids.setup.operationId)}/apply`;
    const cases: [string, () => Promise<LightMyRequestResponse>, number, string][] = [
      [
        'copy preview, unknown member',
        () =>
          call(w.admin.sessionToken, 'POST', copyPreviewUrl(w.slug, w.copy.live.connectionId), {
            body: { ...copySelection(w), enabled: true },
          }),
        400,
        'invalid_configuration_request',
      ],
      [
        'copy preview, query',
        () =>
          call(w.admin.sessionToken, 'POST', `${copyPreviewUrl(w.slug, w.copy.live.connectionId)}?dryRun=1`, { body: copySelection(w) }),
        400,
        'invalid_configuration_request',
      ],
      [
        'compensation preview, a body member',
        () =>
          call(w.admin.sessionToken, 'POST', `${operationUrl(w.slug, ids.completed.operationId)}/compensation-preview`, { body: { x: 1 } }),
        400,
        'invalid_configuration_request',
      ],
      [
        'copy apply, no Idempotency-Key',
        () => call(w.boot.sessionToken, 'POST', copyApply, { body: { approvalFingerprint: ids.pending.fingerprint } }),
        400,
        'idempotency_key_required',
      ],
      [
        'copy apply, malformed fingerprint',
        () =>
          call(w.boot.sessionToken, 'POST', copyApply, { body: { approvalFingerprint: 'sha256:x' }, idempotencyKey: newIdempotencyKey() }),
        400,
        'invalid_configuration_request',
      ],
      [
        'setup preview, a selection without source',
        () =>
          call(w.admin.sessionToken, 'POST', setupPreviewUrl(w.slug, w.setup.integrationId), {
            body: { destinationMode: 'live', ruleIds: [w.setup.ruleId] },
          }),
        400,
        'invalid_connection_setup',
      ],
      [
        'setup apply, no Idempotency-Key',
        () => call(w.boot.sessionToken, 'POST', setupApply, { body: { approvalFingerprint: ids.setup.fingerprint } }),
        400,
        'idempotency_key_required',
      ],
      [
        'setup apply, unknown member',
        () =>
          call(w.boot.sessionToken, 'POST', setupApply, {
            body: { approvalFingerprint: ids.setup.fingerprint, mode: 'live' },
            idempotencyKey: newIdempotencyKey(),
          }),
        400,
        'invalid_connection_setup',
      ],
      [
        'copy preview, an unknown workspace',
        () => call(w.admin.sessionToken, 'POST', copyPreviewUrl('no-such-workspace', w.copy.live.connectionId), { body: copySelection(w) }),
        404,
        'workspace_not_found',
      ],
      [
        'copy preview, a wint_ destination',
        () => call(w.admin.sessionToken, 'POST', copyPreviewUrl(w.slug, w.copy.live.integrationId), { body: copySelection(w) }),
        404,
        'connection_not_found',
      ],
      [
        'setup preview, an int_ id',
        () => call(w.admin.sessionToken, 'POST', setupPreviewUrl(w.slug, w.setup.sourceId), { body: setupSelection(w) }),
        404,
        'integration_not_found',
      ],
      [
        'copy status, unknown id',
        () => call(w.admin.sessionToken, 'GET', operationUrl(w.slug, newId('concopy_'))),
        404,
        'operation_not_found',
      ],
      [
        'setup status, unknown id',
        () => call(w.admin.sessionToken, 'GET', setupUrl(w.slug, newId('consetup_'))),
        404,
        'operation_not_found',
      ],
    ];
    for (const [label, run, status, code] of cases) {
      const res = await run();
      expect(res.statusCode, `${label}: ${res.body}`).toBe(status);
      expect(res.json(), label).toEqual({ error: code });
    }
    await setWritePause(ctx.deps.redis, true);
    try {
      expectError(
        await call(w.admin.sessionToken, 'POST', setupPreviewUrl(w.slug, w.setup.integrationId), { body: setupSelection(w) }),
        503,
        'mode_cutover_write_paused',
      );
    } finally {
      await setWritePause(ctx.deps.redis, false);
    }
    expect(await writes(w)).toEqual(before);

    const legacy = await bootstrapWorkspace(ctx, { legacy: true });
    const legacyCases: [string, string, unknown][] = [
      ['copy', copyPreviewUrl(legacy.workspace.slug, newId('int_')), { sourceConnectionId: newId('int_'), ruleIds: [newId('rule_')] }],
      ['setup', setupPreviewUrl(legacy.workspace.slug, newId('wint_')), { destinationMode: 'live' }],
    ];
    for (const [label, url, body] of legacyCases) {
      const res = await call(legacy.sessionToken, 'POST', url, { body });
      expect(res.statusCode, `${label}: ${res.body}`).toBe(409);
      expect(res.json(), label).toEqual({ error: 'workspace_modes_unavailable' });
    }
  });
});

describe('the user who previewed is the user who applies and recovers', () => {
  it('gives another admin, the owner and the API key 404 on a user’s reviews and receipts, and a reused Idempotency-Key 409', async () => {
    const w = await world();
    const other = await createConsoleUser(ctx);
    await addWorkspaceMember(ctx, w.boot.workspace.id, other.userId, 'admin');
    const { review: done, idempotencyKey } = await copiedBy(w, w.admin.sessionToken);
    const copy = await previewCopy(w, w.admin.sessionToken, contractOnly(w));
    const setup = await previewSetup(w, w.admin.sessionToken);
    const before = await writes(w);

    for (const token of [other.sessionToken, w.boot.sessionToken]) {
      await expectNotFoundTo(token, w, { copy, done, setup });
      // The key of the user's apply, reused by anyone else, replays nothing.
      expectError(
        await applyAs(token, operationUrl(w.slug, done.operationId), done.fingerprint, idempotencyKey),
        409,
        'idempotency_conflict',
      );
    }
    const key = w.boot.apiKey.key;
    const v1 = (path: string) => `/v1/${path}`;
    expectError(
      await callWithKey(ctx, key, 'POST', v1(`configuration-operations/${copy.operationId}/apply`), {
        body: { approvalFingerprint: copy.fingerprint },
        idempotencyKey: newIdempotencyKey(),
      }),
      404,
      'operation_not_found',
    );
    expectError(await callWithKey(ctx, key, 'GET', v1(`configuration-operations/${done.operationId}`)), 404, 'operation_not_found');
    expectError(
      await callWithKey(ctx, key, 'POST', v1(`configuration-operations/${done.operationId}/compensation-preview`), { body: {} }),
      404,
      'operation_not_found',
    );
    expectError(
      await callWithKey(ctx, key, 'POST', v1(`connection-setup/${setup.operationId}/apply`), {
        body: { approvalFingerprint: setup.fingerprint },
        idempotencyKey: newIdempotencyKey(),
      }),
      404,
      'operation_not_found',
    );
    expectError(await callWithKey(ctx, key, 'GET', v1(`connection-setup/${setup.operationId}`)), 404, 'operation_not_found');
    // Not another workspace's either, where the same user is owner.
    const own = await bootstrapWorkspace(ctx, { email: w.admin.email, workspace: 'Admin own workspace' });
    expectError(await call(w.admin.sessionToken, 'GET', operationUrl(own.workspace.slug, copy.operationId)), 404, 'operation_not_found');
    expect(await writes(w)).toEqual(before);

    // The user still completes both.
    expect((await applyAs(w.admin.sessionToken, operationUrl(w.slug, copy.operationId), copy.fingerprint)).statusCode).toBe(201);
    expect((await applyAs(w.admin.sessionToken, setupUrl(w.slug, setup.operationId), setup.fingerprint)).statusCode).toBe(201);
  });

  it('gives a user 404 on an API key’s reviews and receipts', async () => {
    const w = await world();
    const key = w.boot.apiKey.key;
    const preview = async (url: string, body: unknown) => {
      const res = await callWithKey(ctx, key, 'POST', url, { body });
      expect(res.statusCode, res.body).toBe(201);
      return res.json();
    };
    const done = await preview(`/v1/connections/${w.copy.live.connectionId}/configuration-copy/preview`, {
      sourceConnectionId: w.copy.sandbox.connectionId,
      ruleIds: [w.copy.ruleId],
    });
    const applied = await callWithKey(ctx, key, 'POST', `/v1/configuration-operations/${done.operationId}/apply`, {
      body: { approvalFingerprint: done.fingerprint },
      idempotencyKey: newIdempotencyKey(),
    });
    expect(applied.statusCode, applied.body).toBe(201);
    const copy = await preview(`/v1/connections/${w.copy.live.connectionId}/configuration-copy/preview`, contractOnly(w));
    const setup = await preview(`/v1/integrations/${w.setup.integrationId}/connections/preview`, setupSelection(w));
    const before = await writes(w);
    // The owner's session is not the owner's key.
    for (const token of [w.boot.sessionToken, w.admin.sessionToken]) {
      await expectNotFoundTo(token, w, { copy, done, setup });
    }
    expect(await writes(w)).toEqual(before);
  });
});

describe('an archived workspace', () => {
  it('refuses previews and applies (409 workspace_unavailable) and lets only the original user read completed receipts', async () => {
    const w = await world();
    const user = w.admin.sessionToken;
    const { review: copyDone, receipt: copyReceipt, idempotencyKey: copyKey } = await copiedBy(w, user);
    const copyPending = await previewCopy(w, user, contractOnly(w));
    const setupDone = await previewSetup(w, user);
    const setupPending = await previewSetup(w, user, { destinationMode: 'live' });
    const setupKey = newIdempotencyKey();
    const setupApplied = await applyAs(user, setupUrl(w.slug, setupDone.operationId), setupDone.fingerprint, setupKey);
    expect(setupApplied.statusCode, setupApplied.body).toBe(201);
    const setupReceipt = (await call(user, 'GET', setupUrl(w.slug, setupDone.operationId))).json();
    const created = await createIntegration(ctx, w.boot.apiKey.key, { mode: 'sandbox', name: 'Payouts feed' });

    const archived = await call(w.boot.sessionToken, 'POST', `/workspaces/${w.slug}/archive`);
    expect(archived.statusCode, archived.body).toBe(200);
    const before = await writes(w);
    const refused: [string, () => Promise<LightMyRequestResponse>][] = [
      ['copy preview', () => call(user, 'POST', copyPreviewUrl(w.slug, w.copy.live.connectionId), { body: copySelection(w) })],
      [
        'compensation preview',
        () => call(user, 'POST', `${operationUrl(w.slug, copyDone.operationId)}/compensation-preview`, { body: {} }),
      ],
      ['copy apply', () => applyAs(user, operationUrl(w.slug, copyPending.operationId), copyPending.fingerprint)],
      ['copy apply retried', () => applyAs(user, operationUrl(w.slug, copyDone.operationId), copyDone.fingerprint, copyKey)],
      ['setup preview', () => call(user, 'POST', setupPreviewUrl(w.slug, created.integration.id), { body: { destinationMode: 'live' } })],
      ['setup apply', () => applyAs(user, setupUrl(w.slug, setupPending.operationId), setupPending.fingerprint)],
      ['setup apply retried', () => applyAs(user, setupUrl(w.slug, setupDone.operationId), setupDone.fingerprint, setupKey)],
      ['pending copy review read', () => call(user, 'GET', operationUrl(w.slug, copyPending.operationId))],
      ['pending setup review read', () => call(user, 'GET', setupUrl(w.slug, setupPending.operationId))],
    ];
    for (const [label, run] of refused) {
      const res = await run();
      expect(res.statusCode, `${label}: ${res.body}`).toBe(409);
      expect(res.json(), label).toEqual({ error: 'workspace_unavailable' });
    }

    const copyRead = await call(user, 'GET', operationUrl(w.slug, copyDone.operationId));
    expect(copyRead.statusCode, copyRead.body).toBe(200);
    expect(copyRead.json()).toEqual({ ...copyReceipt, replayed: true });
    const setupRead = await call(user, 'GET', setupUrl(w.slug, setupDone.operationId));
    expect(setupRead.statusCode, setupRead.body).toBe(200);
    expect(setupRead.json()).toEqual(setupReceipt);
    // Only the original user; an expired review stays refused like a pending one.
    expectError(await call(w.boot.sessionToken, 'GET', operationUrl(w.slug, copyDone.operationId)), 404, 'operation_not_found');
    expectError(await call(w.boot.sessionToken, 'GET', setupUrl(w.slug, setupDone.operationId)), 404, 'operation_not_found');
    await advanceClock(ctx, 10 * 60_000);
    expectError(await call(user, 'GET', operationUrl(w.slug, copyPending.operationId)), 409, 'workspace_unavailable');
    expectError(await call(user, 'GET', setupUrl(w.slug, setupPending.operationId)), 409, 'workspace_unavailable');
    expect(await writes(w)).toEqual(before);
  });
});

describe('the authority re-check inside the apply transaction', () => {
  const losses: [string, (w: World) => Promise<unknown>, number, string | null][] = [
    [
      'the user demoted to viewer',
      (w) =>
        ctx.deps.pool.query("UPDATE workspace_members SET role = 'viewer' WHERE workspace_id = $1 AND user_id = $2", [
          w.boot.workspace.id,
          w.admin.userId,
        ]),
      403,
      'forbidden',
    ],
    [
      'the session signed out',
      (w) => ctx.deps.pool.query('UPDATE sessions SET revoked_at = now() WHERE user_id = $1', [w.admin.userId]),
      401,
      'unauthenticated',
    ],
    [
      'the workspace archived',
      (w) => ctx.deps.pool.query("UPDATE workspaces SET status = 'archived', archived_at = now() WHERE id = $1", [w.boot.workspace.id]),
      409,
      'workspace_unavailable',
    ],
    // null: the flow's own stale code.
    [
      'the authorization epoch moved',
      (w) => ctx.deps.pool.query('UPDATE workspaces SET auth_epoch = auth_epoch + 1 WHERE id = $1', [w.boot.workspace.id]),
      409,
      null,
    ],
  ];
  const flows: [string, string, string, (w: World) => Promise<{ url: string; fingerprint: string }>][] = [
    [
      'copy',
      'configuration.copy',
      'configuration_preview_stale',
      async (w) => {
        const review = await previewCopy(w, w.admin.sessionToken);
        return { url: operationUrl(w.slug, review.operationId), fingerprint: review.fingerprint };
      },
    ],
    [
      'setup',
      'connection.setup',
      'connection_preview_stale',
      async (w) => {
        const review = await previewSetup(w, w.admin.sessionToken);
        return { url: setupUrl(w.slug, review.operationId), fingerprint: review.fingerprint };
      },
    ],
  ];

  for (const [flow, kind, staleCode, reviewed] of flows) {
    it.each(losses)(`rolls back a ${flow} apply when %s`, async (_label, change, status, code) => {
      const w = await world();
      const { url, fingerprint } = await reviewed(w);
      const before = await writes(w);
      const kinds: string[] = [];
      ctx.hooks.beforeAuthorityRecheck = async (k) => {
        kinds.push(k);
        await change(w);
      };
      const res = await applyAs(w.admin.sessionToken, url, fingerprint);
      expect(kinds).toEqual([kind]);
      expectError(res, status, code ?? staleCode);
      ctx.hooks.beforeAuthorityRecheck = undefined;
      expect(await writes(w)).toEqual(before);
    });
  }

  it('refuses a review made before a membership change as stale, and its user once demoted with 403', async () => {
    const w = await world();
    const review = await previewCopy(w, w.admin.sessionToken);
    // As a membership change through the console does.
    await ctx.deps.pool.query('UPDATE workspaces SET auth_epoch = auth_epoch + 1 WHERE id = $1', [w.boot.workspace.id]);
    expectError(
      await applyAs(w.admin.sessionToken, operationUrl(w.slug, review.operationId), review.fingerprint),
      409,
      'configuration_preview_stale',
    );
    await ctx.deps.pool.query("UPDATE workspace_members SET role = 'viewer' WHERE workspace_id = $1 AND user_id = $2", [
      w.boot.workspace.id,
      w.admin.userId,
    ]);
    expectError(await applyAs(w.admin.sessionToken, operationUrl(w.slug, review.operationId), review.fingerprint), 403, 'forbidden');
  });
});

describe(`the preview minute (${PREVIEWS_PER_MINUTE} per workspace, shared by setup, copy and compensation, keys and sessions)`, () => {
  it('counts session and API-key previews together; refused previews give their slot back', async () => {
    const w = await world();
    const key = w.boot.apiKey.key;
    const { review: done } = await copiedBy(w, w.admin.sessionToken);
    expectError(
      await call(w.admin.sessionToken, 'POST', copyPreviewUrl(w.slug, w.copy.live.connectionId), {
        body: { sourceConnectionId: w.copy.sandbox.connectionId },
      }),
      400,
      'configuration_selection_invalid',
    );
    const previews: (() => Promise<LightMyRequestResponse>)[] = [
      () => call(w.admin.sessionToken, 'POST', copyPreviewUrl(w.slug, w.copy.live.connectionId), { body: contractOnly(w) }),
      () =>
        callWithKey(ctx, key, 'POST', `/v1/connections/${w.copy.live.connectionId}/configuration-copy/preview`, { body: contractOnly(w) }),
      () => call(w.boot.sessionToken, 'POST', setupPreviewUrl(w.slug, w.setup.integrationId), { body: setupSelection(w) }),
      () => callWithKey(ctx, key, 'POST', `/v1/integrations/${w.setup.integrationId}/connections/preview`, { body: setupSelection(w) }),
      () => call(w.admin.sessionToken, 'POST', `${operationUrl(w.slug, done.operationId)}/compensation-preview`, { body: {} }),
    ];
    for (let n = 2; n <= PREVIEWS_PER_MINUTE; n++) {
      const res = await previews[n % previews.length]();
      expect(res.statusCode, `preview ${n}: ${res.body}`).toBe(201);
    }
    const before = await writes(w);
    for (const [index, preview] of previews.entries()) {
      const limited = await preview();
      expect(limited.statusCode, `preview kind ${index}: ${limited.body}`).toBe(429);
      expect(limited.json()).toEqual({ error: 'rate_limited' });
      const retryAfter = Number(limited.headers['retry-after']);
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(60);
    }
    expect(await writes(w)).toEqual(before);
  });
});
