import type { LightMyRequestResponse } from 'fastify';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { BootstrapResult } from '../management/admin/bootstrap.js';
import { CLI_SCOPE_SUFFIXES } from '../management/auth/scopes.js';
import { callCli, loginCli, serveOnLoopback, type CliSession } from './helpers/cli.js';
import { bootstrapWorkspace, createTestContext, expectError, newIdempotencyKey, type TestContext } from './helpers/context.js';
import { insertConnections, readConnectionRow, type ConnectionFixture } from './helpers/connections.js';
import { activateOk, openApiRegistration, registerDraft } from './helpers/contracts.js';
import { createRuleWithKey } from './helpers/rules.js';

// 03 Reviewed repairs 5: the management writes a CLI token may make, end to end through the real
// routes, PostgreSQL and Redis: reconciliation rule update and delete, configuration compensation
// apply, and reviewed connection deletion (preview and confirm). Each needs exactly
// `service:cli:integrations:manage` (the scope of its own route, `integrations:manage`); a token
// with every other CLI scope is 403 `insufficient_scope` and writes nothing. What a CLI token
// writes is the user's, with the client (03 Account CLI OAuth; issue 28 item 7): the operation
// row names user and client, the audit row is the user's with `actorClientId`.

const MANAGE = 'integrations:manage';

let ctx: TestContext;
let baseUrl: string;

beforeAll(async () => {
  ctx = await createTestContext();
  baseUrl = await serveOnLoopback(ctx);
});
afterAll(async () => {
  await ctx.close();
});

interface Workspace {
  boot: BootstrapResult;
  slug: string;
  sandbox: ConnectionFixture;
  live: ConnectionFixture;
  /** A CLI session with `integrations:manage` only. */
  manager: CliSession;
  /** A CLI session with every CLI scope but `integrations:manage`. */
  lacking: CliSession;
}

/** A fresh workspace with one Integration of two connections, and two CLI sessions of its owner. */
async function freshWorkspace(): Promise<Workspace> {
  const boot = await bootstrapWorkspace(ctx);
  const { sandbox, live } = await insertConnections(ctx, boot, ['sandbox', 'live']);
  return {
    boot,
    slug: boot.workspace.slug,
    sandbox,
    live,
    manager: await loginCli(baseUrl, boot.sessionToken, [MANAGE]),
    lacking: await loginCli(
      baseUrl,
      boot.sessionToken,
      CLI_SCOPE_SUFFIXES.filter((suffix) => suffix !== MANAGE),
    ),
  };
}

/** Everything these writes change in a workspace: equal before and after proves a refusal wrote nothing. */
async function writeState(workspaceId: string): Promise<unknown> {
  const { rows } = await ctx.deps.pool.query(
    `SELECT (SELECT count(*) FROM operations WHERE workspace_id = $1) AS operations,
            (SELECT max(id) FROM audit_events WHERE workspace_id = $1) AS audit,
            (SELECT count(*) FROM configuration_reviews WHERE workspace_id = $1) AS configuration_reviews,
            (SELECT count(*) FROM deletion_reviews WHERE workspace_id = $1) AS deletion_reviews,
            (SELECT json_agg(json_build_array(id, source_event_type, max_delay_ms, enabled, updated_at) ORDER BY id)
               FROM reconciliation_rules WHERE workspace_id = $1) AS rules,
            (SELECT count(*) FROM contract_versions WHERE workspace_id = $1) AS contracts,
            (SELECT json_agg(json_build_array(id, revision, deleted_at, credential_status) ORDER BY id)
               FROM connections WHERE workspace_id = $1) AS connections,
            (SELECT json_agg(json_build_array(id, revision, deleted_at) ORDER BY id) FROM integrations WHERE workspace_id = $1) AS integrations`,
    [workspaceId],
  );
  return rows[0];
}

/** The audit rows of `action` in the workspace, oldest first. */
async function auditRows(workspaceId: string, action: string) {
  const { rows } = await ctx.deps.pool.query<{
    actor_type: string;
    actor_id: string;
    target_id: string;
    metadata: Record<string, unknown>;
  }>('SELECT actor_type, actor_id, target_id, metadata FROM audit_events WHERE workspace_id = $1 AND action = $2 ORDER BY id', [
    workspaceId,
    action,
  ]);
  return rows;
}

/** The actor columns of an operation row. */
async function operationActor(operationId: string) {
  const { rows } = await ctx.deps.pool.query('SELECT api_key_id, user_id, cli_client_id FROM operations WHERE id = $1', [operationId]);
  return rows[0];
}

/** A refused write: the status and code, and nothing written in the workspace. */
async function expectRefused(w: Workspace, send: () => Promise<LightMyRequestResponse>, status: number, code: string) {
  const before = await writeState(w.boot.workspace.id);
  expectError(await send(), status, code);
  expect(await writeState(w.boot.workspace.id)).toEqual(before);
}

/** The user and the client, as every row of a CLI write names them. */
const cliActor = (w: Workspace, session: CliSession) => ({
  audit: { actor_type: 'user', actor_id: w.boot.user.id, metadata: expect.objectContaining({ actorClientId: session.clientId }) },
  operation: { api_key_id: null, user_id: w.boot.user.id, cli_client_id: session.clientId },
});

type Send = (session: CliSession) => Promise<LightMyRequestResponse>;

const ruleDefinition = { sourceEventType: 'order.paid', expectedObjectType: 'shipment', maxDelayMs: 60_000 };
const ruleUrl = (w: Workspace, ruleId: string) => `/v1/connections/${w.sandbox.connectionId}/reconciliation-rules/${ruleId}`;

/** POST with the workspace header, a body and, when given, an Idempotency-Key. */
const post = (w: Workspace, session: CliSession, url: string, body: unknown, idempotencyKey?: string) =>
  callCli(ctx, session.accessToken, 'POST', url, { workspace: w.slug, body, ...(idempotencyKey ? { idempotencyKey } : {}) });

/** A rule made with the workspace's API key, and a PATCH of it (a new Idempotency-Key each call). */
async function prepareRuleUpdate(w: Workspace): Promise<{ ruleId: string; send: Send }> {
  const rule = (await createRuleWithKey(ctx, w.boot.apiKey.key, w.sandbox.connectionId, ruleDefinition)).rule;
  const { revision } = await readConnectionRow(ctx, w.sandbox.connectionId);
  const body = { expectedRevision: revision, maxDelayMs: 120_000, enabled: true };
  return {
    ruleId: rule.id,
    send: (session) =>
      callCli(ctx, session.accessToken, 'PATCH', ruleUrl(w, rule.id), { workspace: w.slug, body, idempotencyKey: newIdempotencyKey() }),
  };
}

/** A rule made with the workspace's API key, and a DELETE of it. */
async function prepareRuleDelete(w: Workspace): Promise<{ ruleId: string; send: Send }> {
  const rule = (await createRuleWithKey(ctx, w.boot.apiKey.key, w.sandbox.connectionId, ruleDefinition)).rule;
  const { revision } = await readConnectionRow(ctx, w.sandbox.connectionId);
  return {
    ruleId: rule.id,
    send: (session) =>
      callCli(ctx, session.accessToken, 'DELETE', ruleUrl(w, rule.id), {
        workspace: w.slug,
        body: { expectedRevision: revision },
        idempotencyKey: newIdempotencyKey(),
      }),
  };
}

/**
 * A Sandbox contract and rule copied to Live by the manager's CLI session, then its compensation
 * previewed by it: the apply of that review.
 */
async function prepareCompensationApply(w: Workspace): Promise<{ operationId: string; send: Send }> {
  const key = w.boot.apiKey.key;
  const version = await registerDraft(ctx, key, w.sandbox.connectionId, openApiRegistration('2024-01'));
  await activateOk(ctx, key, w.sandbox.connectionId, version.contract.id, { expectedActiveContractVersionId: null, reason: 'promote' });
  const rule = await createRuleWithKey(ctx, key, w.sandbox.connectionId, ruleDefinition);
  const copy = await post(w, w.manager, `/v1/connections/${w.live.connectionId}/configuration-copy/preview`, {
    sourceConnectionId: w.sandbox.connectionId,
    contractVersionIds: [version.contract.id],
    ruleIds: [rule.rule.id],
  });
  expect(copy.statusCode, copy.body).toBe(201);
  const copyUrl = `/v1/configuration-operations/${copy.json().operationId}`;
  const copied = await post(w, w.manager, `${copyUrl}/apply`, { approvalFingerprint: copy.json().fingerprint }, newIdempotencyKey());
  expect(copied.statusCode, copied.body).toBe(201);

  await expectRefused(w, () => post(w, w.lacking, `${copyUrl}/compensation-preview`, {}), 403, 'insufficient_scope');
  const review = await post(w, w.manager, `${copyUrl}/compensation-preview`, {});
  expect(review.statusCode, review.body).toBe(201);
  const { operationId, fingerprint } = review.json();
  return {
    operationId,
    send: (session) =>
      post(w, session, `/v1/configuration-operations/${operationId}/apply`, { approvalFingerprint: fingerprint }, newIdempotencyKey()),
  };
}

/** The Sandbox connection's deletion previewed by the manager's CLI session: the confirmation of that review. */
async function prepareConnectionDeletion(w: Workspace): Promise<{ operationId: string; send: Send }> {
  const path = `/v1/integrations/${w.sandbox.integrationId}/connections/${w.sandbox.connectionId}`;
  await expectRefused(w, () => post(w, w.lacking, `${path}/deletion-preview`, {}), 403, 'insufficient_scope');
  const previewed = await post(w, w.manager, `${path}/deletion-preview`, {});
  expect(previewed.statusCode, previewed.body).toBe(201);
  const review = previewed.json();
  const confirmation = { operationId: review.operationId, confirmName: review.snapshot.integration.name, fingerprint: review.fingerprint };
  return { operationId: review.operationId, send: (session) => post(w, session, `${path}/deletion`, confirmation, newIdempotencyKey()) };
}

describe('reconciliation rules through a CLI token', () => {
  it('updates a rule with exactly service:cli:integrations:manage, audited as the user with the client', async () => {
    const w = await freshWorkspace();
    const { ruleId, send } = await prepareRuleUpdate(w);
    await expectRefused(w, () => send(w.lacking), 403, 'insufficient_scope');

    const updated = await send(w.manager);
    expect(updated.statusCode, updated.body).toBe(200);
    const receipt = updated.json();
    expect(receipt).toMatchObject({ action: 'rule.update', rule: { id: ruleId, maxDelayMs: 120_000, enabled: true }, replayed: false });
    const read = await callCli(ctx, w.manager.accessToken, 'GET', `/v1/rule-operations/${receipt.operationId}`, { workspace: w.slug });
    expect(read.statusCode, read.body).toBe(200);
    expect(read.json()).toMatchObject({ operationId: receipt.operationId, replayed: true });

    const actor = cliActor(w, w.manager);
    const [row, ...others] = await auditRows(w.boot.workspace.id, 'rule.update');
    expect(others).toEqual([]);
    expect(row).toEqual({ ...actor.audit, target_id: ruleId });
    expect(row.metadata.operationId).toBe(receipt.operationId);
    expect(await operationActor(receipt.operationId)).toEqual(actor.operation);
  });

  it('deletes a rule with exactly service:cli:integrations:manage, audited as the user with the client', async () => {
    const w = await freshWorkspace();
    const { ruleId, send } = await prepareRuleDelete(w);
    await expectRefused(w, () => send(w.lacking), 403, 'insufficient_scope');

    const deleted = await send(w.manager);
    expect(deleted.statusCode, deleted.body).toBe(200);
    const receipt = deleted.json();
    expect(receipt).toMatchObject({ action: 'rule.delete', rule: { id: ruleId } });
    expect((await ctx.deps.pool.query('SELECT id FROM reconciliation_rules WHERE id = $1', [ruleId])).rows).toEqual([]);
    const actor = cliActor(w, w.manager);
    expect(await auditRows(w.boot.workspace.id, 'rule.delete')).toEqual([{ ...actor.audit, target_id: ruleId }]);
    expect(await operationActor(receipt.operationId)).toEqual(actor.operation);
  });
});

describe('configuration compensation through a CLI token', () => {
  it('applies a compensation with exactly service:cli:integrations:manage, audited as the user with the client', async () => {
    const w = await freshWorkspace();
    const { operationId, send } = await prepareCompensationApply(w);
    await expectRefused(w, () => send(w.lacking), 403, 'insufficient_scope');

    const applied = await send(w.manager);
    expect(applied.statusCode, applied.body).toBe(201);
    expect(applied.json()).toMatchObject({ operationId, action: 'configuration.compensate', status: 'completed' });
    // What the copy created on the Live connection is gone again.
    const left = await ctx.deps.pool.query(
      `SELECT (SELECT count(*)::int FROM reconciliation_rules WHERE connection_id = $1) AS rules,
              (SELECT count(*)::int FROM contract_versions WHERE connection_id = $1) AS contracts`,
      [w.live.connectionId],
    );
    expect(left.rows).toEqual([{ rules: 0, contracts: 0 }]);

    const actor = cliActor(w, w.manager);
    expect(await auditRows(w.boot.workspace.id, 'configuration.compensate.preview')).toEqual([{ ...actor.audit, target_id: operationId }]);
    expect(await auditRows(w.boot.workspace.id, 'configuration.compensate')).toEqual([{ ...actor.audit, target_id: operationId }]);
    expect(await operationActor(operationId)).toEqual(actor.operation);
  });
});

describe('reviewed connection deletion through a CLI token', () => {
  it('previews and confirms with exactly service:cli:integrations:manage, audited as the user with the client', async () => {
    const w = await freshWorkspace();
    const { operationId, send } = await prepareConnectionDeletion(w);
    await expectRefused(w, () => send(w.lacking), 403, 'insufficient_scope');

    const confirmed = await send(w.manager);
    expect(confirmed.statusCode, confirmed.body).toBe(201);
    expect(confirmed.json()).toMatchObject({
      operationId,
      action: 'connection.delete',
      connectionId: w.sandbox.connectionId,
      integrationDeleted: false,
    });
    const { rows } = await ctx.deps.pool.query(
      'SELECT id, deleted_at IS NOT NULL AS deleted FROM connections WHERE integration_id = $1 ORDER BY id',
      [w.sandbox.integrationId],
    );
    expect(Object.fromEntries(rows.map((row) => [row.id, row.deleted]))).toEqual({
      [w.sandbox.connectionId]: true,
      [w.live.connectionId]: false,
    });

    const actor = cliActor(w, w.manager);
    const target = { ...actor.audit, target_id: w.sandbox.connectionId };
    expect(await auditRows(w.boot.workspace.id, 'connection.delete.preview')).toEqual([target]);
    expect(await auditRows(w.boot.workspace.id, 'connection.delete')).toEqual([target]);
    expect(await operationActor(operationId)).toEqual(actor.operation);
    const reviewer = await ctx.deps.pool.query('SELECT api_key_id, user_id, cli_client_id FROM deletion_reviews WHERE id = $1', [
      operationId,
    ]);
    expect(reviewer.rows).toEqual([actor.operation]);
  });
});

describe('authority lost between authentication and commit', () => {
  afterEach(() => {
    ctx.hooks.beforeAuthorityRecheck = undefined;
  });

  const writes: [string, string, (w: Workspace) => Promise<{ send: Send }>][] = [
    ['a rule update', 'rule.update', prepareRuleUpdate],
    ['a rule deletion', 'rule.delete', prepareRuleDelete],
    ['a compensation apply', 'configuration.compensate', prepareCompensationApply],
    ['a connection deletion', 'connection.delete', prepareConnectionDeletion],
  ];
  for (const [label, kind, prepare] of writes) {
    it(`rolls back ${label} when the user becomes a viewer (403 insufficient_scope)`, async () => {
      const w = await freshWorkspace();
      const { send } = await prepare(w);
      const kinds: string[] = [];
      ctx.hooks.beforeAuthorityRecheck = async (operationKind) => {
        kinds.push(operationKind);
        await ctx.deps.pool.query("UPDATE workspace_members SET role = 'viewer' WHERE workspace_id = $1 AND user_id = $2", [
          w.boot.workspace.id,
          w.boot.user.id,
        ]);
      };
      const before = await writeState(w.boot.workspace.id);
      expectError(await send(w.manager), 403, 'insufficient_scope');
      expect(kinds).toEqual([kind]);
      expect(await writeState(w.boot.workspace.id)).toEqual(before);
    });
  }
});
