import type { LightMyRequestResponse } from 'fastify';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { BootstrapResult } from '../management/admin/bootstrap.js';
import { insertApiKey } from '../management/apiKeys/apiKeyStore.js';
import { PREVIEWS_PER_MINUTE, REVIEW_LIFETIME_MS } from '../management/connectionSetup/setupService.js';
import { setWritePause } from '../management/maintenance.js';
import { resetTestClock } from '../shared/clock.js';
import { fingerprint } from '../shared/fingerprint.js';
import { newId } from '../shared/ids.js';
import { RedisKeys } from '../shared/redis.js';
import { decryptSecret, sha256Hex } from '../shared/secrets.js';
import {
  expectedProof,
  markRulesEvaluated,
  seedSelectableArtifacts,
  SELECTION_LIMIT,
  type SetupReceipt,
  type SetupReview,
} from './helpers/configuration.js';
import { readConnectionRow } from './helpers/connections.js';
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
  type TestContext,
} from './helpers/context.js';
import { openApiRegistration, ordersOpenApi, registerDraft } from './helpers/contracts.js';
import { createIntegration, insertIntegrationRow, insertSlotConnection, type CreatedIntegration } from './helpers/integrations.js';
import { createRuleWithKey, ruleLastEvaluatedAt, type RuleReceipt } from './helpers/rules.js';

// 02 "Second-mode setup" through the real management app, PostgreSQL and Redis: preview, apply and
// status read, the setup rows of "States and transitions", the race of competing reviews, and
// every code of the Setup error table.

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(async () => {
  await ctx.close();
});
afterEach(() => resetClockAndHooks(ctx));

const previewUrl = (integrationId: string) => `/v1/integrations/${integrationId}/connections/preview`;
const applyUrl = (operationId: string) => `/v1/connection-setup/${operationId}/apply`;
const statusUrl = (operationId: string) => `/v1/connection-setup/${operationId}`;

const preview = (key: string | null, integrationId: string, body: unknown) =>
  callWithKey(ctx, key, 'POST', previewUrl(integrationId), { body });
const apply = (key: string | null, operationId: string, approvalFingerprint: string, idempotencyKey: string = newIdempotencyKey()) =>
  callWithKey(ctx, key, 'POST', applyUrl(operationId), { body: { approvalFingerprint }, idempotencyKey });
const status = (key: string | null, operationId: string) => callWithKey(ctx, key, 'GET', statusUrl(operationId));

/** The two fingerprints of a review: the snapshot's over its content, the approval's over the review. */
function expectFingerprints(review: SetupReview): void {
  const { fingerprint: configurationFingerprint, ...content } = review.snapshot;
  expect(configurationFingerprint).toBe(fingerprint(content));
  expect(review.fingerprint).toBe(
    fingerprint({ operationId: review.operationId, action: 'connection.setup', expiresAt: review.expiresAt, configurationFingerprint }),
  );
}

/** An Integration with its Sandbox connection, one draft contract and one enabled rule there. */
interface World {
  boot: BootstrapResult;
  created: CreatedIntegration;
  integrationId: string;
  sourceId: string;
  contractVersionId: string;
  ruleId: string;
}

const createRule = (key: string, connectionId: string, n = 0): Promise<RuleReceipt> =>
  createRuleWithKey(ctx, key, connectionId, {
    sourceEventType: `order.paid.${n}`,
    expectedObjectType: 'shipment',
    maxDelayMs: 60_000,
    enabled: true,
  });

async function world(boot?: BootstrapResult): Promise<World> {
  const owner = boot ?? (await bootstrapWorkspace(ctx));
  const created = await createIntegration(ctx, owner.apiKey.key, { mode: 'sandbox' });
  const sourceId = created.integration.connectionId;
  const draft = await registerDraft(ctx, owner.apiKey.key, sourceId, openApiRegistration('2024-01'));
  const rule = await createRule(owner.apiKey.key, sourceId);
  return {
    boot: owner,
    created,
    integrationId: created.integration.id,
    sourceId,
    contractVersionId: draft.contract.id,
    ruleId: rule.rule.id,
  };
}

const fullSelection = (w: World) => ({
  destinationMode: 'live',
  sourceConnectionId: w.sourceId,
  contractVersionIds: [w.contractVersionId],
  ruleIds: [w.ruleId],
});

async function previewed(w: World, body: unknown = fullSelection(w), key = w.boot.apiKey.key): Promise<SetupReview> {
  const res = await preview(key, w.integrationId, body);
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
}

/** The parts of a World whose rows an apply could write. */
type Written = Pick<World, 'boot' | 'integrationId' | 'sourceId'>;

/** Everything an apply writes; all of it must read back unchanged after a refused apply. */
async function writes(w: Written) {
  const ws = w.boot.workspace.id;
  const integration = await ctx.deps.pool.query<{ revision: string }>('SELECT revision FROM integrations WHERE id = $1', [w.integrationId]);
  return {
    connections: await countRows(ctx, 'connections', 'integration_id = $1', [w.integrationId]),
    credentials: await countRows(ctx, 'credentials', 'connection_id IN (SELECT id FROM connections WHERE integration_id = $1)', [
      w.integrationId,
    ]),
    contractVersions: await countRows(ctx, 'contract_versions', 'workspace_id = $1', [ws]),
    rules: await countRows(ctx, 'reconciliation_rules', 'workspace_id = $1', [ws]),
    operations: await countRows(ctx, 'operations', 'workspace_id = $1', [ws]),
    audit: await countRows(ctx, 'audit_events', "workspace_id = $1 AND action = 'connection.setup'", [ws]),
    completedReviews: await countRows(ctx, 'connection_setups', 'workspace_id = $1 AND completed_at IS NOT NULL', [ws]),
    integrationRevision: integration.rows[0].revision,
    sourceRevision: (await readConnectionRow(ctx, w.sourceId)).revision,
  };
}

/** A refused apply: the answer, and nothing written. */
async function expectRefused(w: Written, run: () => Promise<LightMyRequestResponse>, code: number, error: string): Promise<void> {
  const before = await writes(w);
  expectError(await run(), code, error);
  expect(await writes(w)).toEqual(before);
}

describe('preview and apply', () => {
  it('sets up an empty Live connection: review, then the connection, its own token shown once, and a credential-free receipt', async () => {
    const boot = await bootstrapWorkspace(ctx);
    const created = await createIntegration(ctx, boot.apiKey.key, { mode: 'sandbox' });
    const w: World = {
      boot,
      created,
      integrationId: created.integration.id,
      sourceId: created.integration.connectionId,
      contractVersionId: '',
      ruleId: '',
    };
    const before = await writes(w);
    const sentAt = Date.now();
    const review = await previewed(w, { destinationMode: 'live' });
    expect(review.operationId).toMatch(/^consetup_[0-9a-z]{26}$/);
    expect(review).toMatchObject({
      action: 'connection.setup',
      status: 'previewed',
      workspaceIntegrationId: w.integrationId,
      mode: 'live',
    });
    expectFingerprints(review);
    const live = (
      await ctx.deps.pool.query("SELECT id FROM environments WHERE workspace_id = $1 AND category = 'live'", [boot.workspace.id])
    ).rows[0].id;
    expect(review.snapshot).toEqual({
      identity: {
        id: w.integrationId,
        revision: expect.any(String),
        tenantId: boot.workspace.tenantId,
        name: 'Orders sync',
        provider: 'Acme',
        direction: 'outbound',
        protocol: 'http-api',
      },
      source: null,
      destination: { mode: 'live', environmentId: live },
      contracts: [],
      rules: [],
      fingerprint: expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
    });
    expect(await writes(w)).toEqual(before);

    const idempotencyKey = newIdempotencyKey();
    const res = await apply(boot.apiKey.key, review.operationId, review.fingerprint, idempotencyKey);
    expect(res.statusCode, res.body).toBe(201);
    expect(res.headers['cache-control']).toBe('no-store');
    const body = res.json();
    expect(body).toMatchObject({
      operationId: review.operationId,
      action: 'connection.setup',
      status: 'completed',
      workspaceIntegrationId: w.integrationId,
      mode: 'live',
      proof: expectedProof(review),
      copiedArtifacts: { contracts: [], rules: [] },
      replayed: false,
      historical: false,
      credentialRecoveryRequired: false,
      connection: {
        id: body.connectionId,
        workspaceIntegrationId: w.integrationId,
        environment: { id: live, category: 'live', mode: 'live' },
        credentialStatus: 'active',
        activeContractVersionId: null,
        revision: body.revision,
      },
      collectorConfiguration: { integrationKey: created.collectorConfiguration.integrationKey },
    });
    expect(body.connectionId).toMatch(/^int_/);
    expect(body.integration).toMatchObject({
      id: w.integrationId,
      connections: { sandbox: { status: 'configured' }, live: { status: 'configured', connectionId: body.connectionId } },
    });
    expect(BigInt(body.integration.revision)).toBeGreaterThan(BigInt(review.snapshot.identity.revision));

    // The new token is separate from the Sandbox token, works for its own connection only, and is
    // stored sealed and hashed.
    const token = body.collectorConfiguration.ingestToken as string;
    expect(token).toMatch(/^svc_ing_/);
    expect(token).not.toBe(created.collectorConfiguration.ingestToken);
    expect(body.collectorConfiguration.connectionKey).not.toBe(created.collectorConfiguration.connectionKey);
    const stored = (
      await ctx.deps.pool.query('SELECT token_hash, token_sealed FROM credentials WHERE connection_id = $1', [body.connectionId])
    ).rows;
    expect(stored).toHaveLength(1);
    expect(stored[0].token_hash).toBe(sha256Hex(token));
    expect(stored[0].token_sealed).not.toContain(token);
    expect(decryptSecret(stored[0].token_sealed, ctx.deps.config.secretEncryptionKey)).toBe(token);
    const verify = (connectionId: string) =>
      callWithKey(ctx, boot.apiKey.key, 'POST', `/v1/connections/${connectionId}/credentials/verify`, {
        body: { connectionKey: body.collectorConfiguration.connectionKey, ingestToken: token },
      });
    expect((await verify(body.connectionId)).statusCode).toBe(200);
    expect((await verify(w.sourceId)).statusCode).toBe(409);
    // The ingest edge's epoch of the new connection, under its account's hash tag, moved before and after COMMIT.
    expect(await ctx.deps.redis.get(RedisKeys.credentialEpoch(boot.account.id, body.connectionId))).toBe('2');

    // Identical retry and status read: the receipt, never the token.
    const { ingestToken: _token, ...configuration } = body.collectorConfiguration;
    const receipt = { ...body, collectorConfiguration: configuration, replayed: true, credentialRecoveryRequired: true };
    const replay = await apply(boot.apiKey.key, review.operationId, review.fingerprint, idempotencyKey);
    expect(replay.statusCode).toBe(200);
    expect(replay.json()).toEqual(receipt);
    expect(replay.body).not.toContain(token);
    const read = await status(boot.apiKey.key, review.operationId);
    expect(read.statusCode).toBe(200);
    expect(read.headers['cache-control']).toBe('no-store');
    expect(read.json()).toEqual(receipt);

    const after = await writes(w);
    expect(after).toMatchObject({ connections: 2, credentials: 2, operations: before.operations + 1, audit: 1, completedReviews: 1 });
    // The receipt turns historical once the new connection's configuration moves on.
    await createRule(boot.apiKey.key, body.connectionId);
    expect((await status(boot.apiKey.key, review.operationId)).json()).toEqual({ ...receipt, historical: true });
    expect(sentAt).toBeLessThanOrEqual(Date.parse(review.expiresAt) - REVIEW_LIFETIME_MS);
  });

  it('copies the selected contracts as drafts and the selected rules as disabled rules, and activates nothing', async () => {
    const w = await world();
    const active = await registerDraft(ctx, w.boot.apiKey.key, w.sourceId, openApiRegistration('2024-02', ordersOpenApi(1)));
    const activation = await callWithKey(
      ctx,
      w.boot.apiKey.key,
      'POST',
      `/v1/integrations/${w.sourceId}/contracts/${active.contract.id}/activate`,
      {
        body: { expectedActiveContractVersionId: null, reason: 'promote' },
      },
    );
    expect(activation.statusCode, activation.body).toBe(200);
    const second = await createRule(w.boot.apiKey.key, w.sourceId, 1);
    const review = await previewed(w, {
      ...fullSelection(w),
      contractVersionIds: [active.contract.id, w.contractVersionId],
      ruleIds: [second.rule.id, w.ruleId],
    });
    expect(review.snapshot.source).toEqual({
      connectionId: w.sourceId,
      environmentId: w.created.integration.environmentId,
      revision: (await readConnectionRow(ctx, w.sourceId)).revision,
    });
    expect(review.snapshot.contracts.map((c) => [c.sourceContractVersionId, c.declaredVersion, c.lifecycleStatus])).toEqual([
      [active.contract.id, '2024-02', 'draft'],
      [w.contractVersionId, '2024-01', 'draft'],
    ]);
    expect(review.snapshot.contracts[0].operations.length).toBeGreaterThan(0);
    expect(review.snapshot.rules).toEqual([
      { sourceRuleId: second.rule.id, sourceEventType: 'order.paid.1', expectedObjectType: 'shipment', maxDelayMs: 60_000, enabled: false },
      { sourceRuleId: w.ruleId, sourceEventType: 'order.paid.0', expectedObjectType: 'shipment', maxDelayMs: 60_000, enabled: false },
    ]);
    const sourceBefore = await readConnectionRow(ctx, w.sourceId);

    const res = await apply(w.boot.apiKey.key, review.operationId, review.fingerprint);
    expect(res.statusCode, res.body).toBe(201);
    const body = res.json();
    const destination = body.connectionId as string;
    const versions = (
      await ctx.deps.pool.query(
        'SELECT id, declared_version, lifecycle_status, fingerprint, content_signature FROM contract_versions WHERE connection_id = $1 ORDER BY declared_version',
        [destination],
      )
    ).rows;
    expect(versions.map((v) => [v.declared_version, v.lifecycle_status])).toEqual([
      ['2024-01', 'draft'],
      ['2024-02', 'draft'],
    ]);
    expect(body.copiedArtifacts.contracts).toEqual([
      { sourceContractVersionId: active.contract.id, destinationContractVersionId: versions[1].id },
      { sourceContractVersionId: w.contractVersionId, destinationContractVersionId: versions[0].id },
    ]);
    expect(versions[1].fingerprint).toBe(review.snapshot.contracts[0].fingerprint);
    const rules = (
      await ctx.deps.pool.query(
        'SELECT id, source_event_type, enabled FROM reconciliation_rules WHERE connection_id = $1 ORDER BY source_event_type',
        [destination],
      )
    ).rows;
    expect(rules.map((r) => [r.source_event_type, r.enabled])).toEqual([
      ['order.paid.0', false],
      ['order.paid.1', false],
    ]);
    expect(body.copiedArtifacts.rules).toEqual([
      { sourceRuleId: second.rule.id, destinationRuleId: rules[1].id },
      { sourceRuleId: w.ruleId, destinationRuleId: rules[0].id },
    ]);
    expect(body.connection.activeContractVersionId).toBeNull();
    // The source is read, never changed.
    expect(await readConnectionRow(ctx, w.sourceId)).toEqual(sourceBefore);
  });
});

/** 02 "States and transitions", the rows that concern setup. */
interface TransitionRow {
  state: string;
  trigger: string;
  condition: string;
  next: string;
  run(): Promise<void>;
}

/** Changes since the review that must make its apply stale, each also restored where it can be. */
const staleChanges: { condition: string; change(w: World, review: SetupReview): Promise<void> }[] = [
  {
    condition: 'a source rule created and deleted again (configuration restored)',
    async change(w) {
      const created = await createRule(w.boot.apiKey.key, w.sourceId, 7);
      const res = await callWithKey(
        ctx,
        w.boot.apiKey.key,
        'DELETE',
        `/v1/connections/${w.sourceId}/reconciliation-rules/${created.rule.id}`,
        {
          idempotencyKey: newIdempotencyKey(),
          body: { expectedRevision: created.revision },
        },
      );
      expect(res.statusCode, res.body).toBe(200);
    },
  },
  {
    condition: 'a new contract registered on the source',
    async change(w) {
      await registerDraft(ctx, w.boot.apiKey.key, w.sourceId, openApiRegistration('2025-01', ordersOpenApi(2)));
    },
  },
  {
    condition: 'the workspace archived and restored (authority changed, then restored)',
    async change(w) {
      for (const action of ['archive', 'restore']) {
        expect((await callWithSession(ctx, w.boot.sessionToken, 'POST', `/workspaces/${w.boot.workspace.slug}/${action}`)).statusCode).toBe(
          200,
        );
      }
    },
  },
  {
    condition: 'the source connection deleted',
    async change(w) {
      await ctx.deps.pool.query('UPDATE connections SET deleted_at = now() WHERE id = $1', [w.sourceId]);
    },
  },
  {
    condition: 'the shared Integration took a new revision',
    async change(w) {
      await ctx.deps.pool.query("UPDATE integrations SET revision = nextval('revision_seq')::text WHERE id = $1", [w.integrationId]);
    },
  },
  {
    condition: 'the destination slot filled without the shared revision moving',
    async change(w) {
      await insertSlotConnection(ctx, { workspaceId: w.boot.workspace.id, integrationId: w.integrationId, category: 'live' });
    },
  },
  {
    condition: 'a competing review filled the destination',
    async change(w) {
      const other = await previewed(w);
      expect((await apply(w.boot.apiKey.key, other.operationId, other.fingerprint)).statusCode).toBe(201);
    },
  },
];

const transitions: TransitionRow[] = [
  {
    state: '(none)',
    trigger: 'preview',
    condition: 'authorized, valid selection, fits 1 MiB',
    next: 'previewed',
    async run() {
      const w = await world();
      const before = await writes(w);
      const previews = () =>
        countRows(ctx, 'audit_events', "workspace_id = $1 AND action = 'connection.setup.preview'", [w.boot.workspace.id]);
      const start = ctx.deps.clock.nowMs();
      const review = await previewed(w);
      expect(review.status).toBe('previewed');
      expectFingerprints(review);
      expect(Date.parse(review.expiresAt) - start).toBeGreaterThanOrEqual(REVIEW_LIFETIME_MS);
      expect(Date.parse(review.expiresAt) - ctx.deps.clock.nowMs()).toBeLessThanOrEqual(REVIEW_LIFETIME_MS);
      expect(await previews()).toBe(1);
      expect(await writes(w)).toEqual(before);
      expect((await status(w.boot.apiKey.key, review.operationId)).json()).toEqual(review);
    },
  },
  {
    state: 'previewed',
    trigger: 'apply with matching approvalFingerprint',
    condition: 'before expiry; everything rechecked in the write transaction',
    next: 'completed',
    async run() {
      const w = await world();
      const review = await previewed(w);
      await advanceClock(ctx, REVIEW_LIFETIME_MS - 5_000);
      const before = await writes(w);
      const res = await apply(w.boot.apiKey.key, review.operationId, review.fingerprint);
      expect(res.statusCode, res.body).toBe(201);
      expect(await writes(w)).toMatchObject({
        connections: before.connections + 1,
        credentials: before.credentials + 1,
        contractVersions: before.contractVersions + 1,
        rules: before.rules + 1,
        operations: before.operations + 1,
        audit: before.audit + 1,
        completedReviews: 1,
      });
      expect((await status(w.boot.apiKey.key, review.operationId)).json()).toMatchObject({ status: 'completed', replayed: true });
    },
  },
  {
    state: 'previewed',
    trigger: 'time passes',
    condition: 'ten minutes elapse',
    next: 'expired',
    async run() {
      const w = await world();
      const review = await previewed(w);
      await advanceClock(ctx, REVIEW_LIFETIME_MS - 1_000);
      expect((await status(w.boot.apiKey.key, review.operationId)).json().status).toBe('previewed');
      await advanceClock(ctx, 2_000);
      const read = await status(w.boot.apiKey.key, review.operationId);
      expect(read.statusCode).toBe(200);
      expect(read.json()).toEqual({ ...review, status: 'expired' });
      await expectRefused(w, () => apply(w.boot.apiKey.key, review.operationId, review.fingerprint), 409, 'connection_preview_expired');
      // Expiry is answered before the state is rechecked: a changed source does not make it stale.
      await createRule(w.boot.apiKey.key, w.sourceId, 9);
      await expectRefused(w, () => apply(w.boot.apiKey.key, review.operationId, review.fingerprint), 409, 'connection_preview_expired');
      // As in configuration copy, the fingerprint is checked before the review's state.
      await expectRefused(w, () => apply(w.boot.apiKey.key, review.operationId, `sha256:${'0'.repeat(64)}`), 409, 'approval_mismatch');
      expect((await status(w.boot.apiKey.key, review.operationId)).json().status).toBe('expired');
    },
  },
  ...staleChanges.map(
    (stale): TransitionRow => ({
      state: 'previewed',
      trigger: 'apply',
      condition: `configuration or authority changed since review: ${stale.condition}`,
      next: 'unchanged (connection_preview_stale)',
      async run() {
        const w = await world();
        const review = await previewed(w);
        await stale.change(w, review);
        await expectRefused(w, () => apply(w.boot.apiKey.key, review.operationId, review.fingerprint), 409, 'connection_preview_stale');
        expect((await status(w.boot.apiKey.key, review.operationId)).json()).toEqual(review);
      },
    }),
  ),
  {
    // 02 Reconciliation rule: `lastEvaluatedAt` "does not invalidate a configuration review".
    state: 'previewed',
    trigger: 'apply with matching approvalFingerprint',
    condition: "only the selected source rule's lastEvaluatedAt moved since review",
    next: 'completed',
    async run() {
      const w = await world();
      const review = await previewed(w);
      const before = await writes(w);
      expect(await ruleLastEvaluatedAt(ctx, w.boot.apiKey.key, w.sourceId, w.ruleId)).toBeNull();
      await markRulesEvaluated(ctx, [w.ruleId]);
      expect(await ruleLastEvaluatedAt(ctx, w.boot.apiKey.key, w.sourceId, w.ruleId)).toEqual(expect.any(String));
      expect(await writes(w)).toEqual(before);
      const res = await apply(w.boot.apiKey.key, review.operationId, review.fingerprint);
      expect(res.statusCode, res.body).toBe(201);
      expect(res.json().copiedArtifacts.rules).toEqual([{ sourceRuleId: w.ruleId, destinationRuleId: expect.stringMatching(/^rule_/) }]);
    },
  },
  {
    state: 'previewed',
    trigger: 'apply',
    condition: 'wrong fingerprint',
    next: 'unchanged (approval_mismatch)',
    async run() {
      const w = await world();
      const review = await previewed(w);
      // Another review of the very same state: same snapshot, but its approval is its own.
      const other = await previewed(w);
      expect(other.snapshot).toEqual(review.snapshot);
      const idempotencyKey = newIdempotencyKey();
      await expectRefused(
        w,
        () => apply(w.boot.apiKey.key, review.operationId, other.fingerprint, idempotencyKey),
        409,
        'approval_mismatch',
      );
      await expectRefused(w, () => apply(w.boot.apiKey.key, review.operationId, `sha256:${'0'.repeat(64)}`), 409, 'approval_mismatch');
      expect((await status(w.boot.apiKey.key, review.operationId)).json()).toEqual(review);
      // Unchanged: the right fingerprint still applies (a refused attempt stored nothing under its key).
      expect((await apply(w.boot.apiKey.key, review.operationId, review.fingerprint, idempotencyKey)).statusCode).toBe(201);
    },
  },
  {
    state: 'completed',
    trigger: 'identical retry with original key',
    condition: '',
    next: 'completed (200, replayed, same proof and mappings)',
    async run() {
      const w = await world();
      const review = await previewed(w);
      const idempotencyKey = newIdempotencyKey();
      const first = (await apply(w.boot.apiKey.key, review.operationId, review.fingerprint, idempotencyKey)).json();
      const before = await writes(w);
      const retry = await apply(w.boot.apiKey.key, review.operationId, review.fingerprint, idempotencyKey);
      expect(retry.statusCode).toBe(200);
      const body = retry.json();
      expect(body).toMatchObject({
        replayed: true,
        credentialRecoveryRequired: true,
        proof: first.proof,
        copiedArtifacts: first.copiedArtifacts,
        connectionId: first.connectionId,
      });
      expect(body.collectorConfiguration).toEqual({
        integrationKey: first.collectorConfiguration.integrationKey,
        connectionKey: first.collectorConfiguration.connectionKey,
      });
      expect(await writes(w)).toEqual(before);
      // Another key for the completed review applies nothing: the review no longer describes the destination.
      await expectRefused(w, () => apply(w.boot.apiKey.key, review.operationId, review.fingerprint), 409, 'connection_preview_stale');
    },
  },
];

describe('02 States and transitions (setup rows)', () => {
  for (const row of transitions) {
    it(`${row.state} --[${row.trigger}${row.condition ? `; ${row.condition}` : ''}]--> ${row.next}`, async () => {
      await row.run();
    });
  }
});

describe('competing reviews', () => {
  it('10 parallel applies of 10 reviews of one destination create exactly one connection and one token; the others must review again', async () => {
    const w = await world();
    const reviews: SetupReview[] = [];
    for (let n = 0; n < 10; n++) reviews.push(await previewed(w));
    const before = await writes(w);
    const responses = await Promise.all(reviews.map((review) => apply(w.boot.apiKey.key, review.operationId, review.fingerprint)));
    const codes = responses.map((res) => res.statusCode).sort();
    expect(codes).toEqual([201, ...Array(9).fill(409)]);
    for (const res of responses.filter((r) => r.statusCode === 409)) expect(res.json()).toEqual({ error: 'connection_preview_stale' });
    const winner = responses.find((res) => res.statusCode === 201)!.json();
    expect(await writes(w)).toMatchObject({
      connections: before.connections + 1,
      credentials: before.credentials + 1,
      contractVersions: before.contractVersions + 1,
      rules: before.rules + 1,
      operations: before.operations + 1,
      audit: before.audit + 1,
      completedReviews: 1,
    });
    expect(await countRows(ctx, 'connections', "integration_id = $1 AND mode = 'live'", [w.integrationId])).toBe(1);
    expect(await countRows(ctx, 'credentials', 'connection_id = $1', [winner.connectionId])).toBe(1);
    // A new review of the filled slot points to configuration copy.
    expectError(await preview(w.boot.apiKey.key, w.integrationId, fullSelection(w)), 409, 'connection_already_configured');
  });
});

/** A json-schema contract of about 330 KB, so that four of them exceed the 1 MiB snapshot bound. */
function bulkyRegistration(declaredVersion: string): Record<string, unknown> {
  const properties = Object.fromEntries(Array.from({ length: 2_500 }, (_, i) => [`field_${i}_${'x'.repeat(100)}`, { type: 'string' }]));
  return {
    declaredVersion,
    format: 'json-schema',
    document: { type: 'object', properties },
    operation: { method: 'GET', routeTemplate: '/v1/orders', payloadLocation: 'response', statusSelector: '200' },
  };
}

const reviewCount = (w: World) => countRows(ctx, 'connection_setups', 'workspace_id = $1', [w.boot.workspace.id]);

describe('the Setup error table', () => {
  it('400 invalid_connection_setup: fields, unknown members and query parameters, a selection without a source, the fingerprint format', async () => {
    const w = await world();
    const invalid: unknown[] = [
      {},
      { destinationMode: 'staging' },
      { destinationMode: 'live', tenantId: 'ten_x' },
      { destinationMode: 'live', contractVersionIds: w.contractVersionId },
      { destinationMode: 'live', ruleIds: [1] },
      { destinationMode: 'live', sourceConnectionId: 5 },
      { destinationMode: 'live', contractVersionIds: [w.contractVersionId] },
      { destinationMode: 'live', ruleIds: [w.ruleId], contractVersionIds: [] },
    ];
    for (const body of invalid) expectError(await preview(w.boot.apiKey.key, w.integrationId, body), 400, 'invalid_connection_setup');
    expectError(
      await callWithKey(ctx, w.boot.apiKey.key, 'POST', `${previewUrl(w.integrationId)}?dryRun=1`, { body: { destinationMode: 'live' } }),
      400,
      'invalid_connection_setup',
    );
    expect(await reviewCount(w)).toBe(0);

    const review = await previewed(w);
    for (const body of [
      {},
      { approvalFingerprint: 'sha256:abc' },
      { approvalFingerprint: review.fingerprint.toUpperCase() },
      { approvalFingerprint: review.fingerprint, force: true },
    ]) {
      await expectRefused(
        w,
        () => callWithKey(ctx, w.boot.apiKey.key, 'POST', applyUrl(review.operationId), { body, idempotencyKey: newIdempotencyKey() }),
        400,
        'invalid_connection_setup',
      );
    }
    await expectRefused(
      w,
      () =>
        callWithKey(ctx, w.boot.apiKey.key, 'POST', `${applyUrl(review.operationId)}?force=1`, {
          body: { approvalFingerprint: review.fingerprint },
          idempotencyKey: newIdempotencyKey(),
        }),
      400,
      'invalid_connection_setup',
    );
    expectError(
      await callWithKey(ctx, w.boot.apiKey.key, 'GET', `${statusUrl(review.operationId)}?verbose=1`),
      400,
      'invalid_connection_setup',
    );
  });

  it('400 configuration_scope_mismatch: a source that is not the other canonical mode connection of the same Integration and workspace', async () => {
    const w = await world();
    const otherIntegration = await createIntegration(ctx, w.boot.apiKey.key, { mode: 'sandbox', name: 'Refunds' });
    const stranger = await world();
    for (const sourceConnectionId of [
      otherIntegration.integration.connectionId,
      stranger.sourceId,
      'int_nope',
      w.integrationId,
      newId('int_'),
    ]) {
      expectError(
        await preview(w.boot.apiKey.key, w.integrationId, { ...fullSelection(w), sourceConnectionId }),
        400,
        'configuration_scope_mismatch',
      );
    }
    // A deleted source is no source.
    await ctx.deps.pool.query('UPDATE connections SET deleted_at = now() WHERE id = $1', [w.sourceId]);
    expectError(await preview(w.boot.apiKey.key, w.integrationId, fullSelection(w)), 400, 'configuration_scope_mismatch');
    expect(await reviewCount(w)).toBe(0);
  });

  it('400 configuration_selection_invalid: duplicates, unknown or foreign ids, ids of the wrong form, more than 100', async () => {
    const w = await world();
    const other = await world(w.boot);
    const selections = [
      { contractVersionIds: [w.contractVersionId, w.contractVersionId] },
      { ruleIds: [w.ruleId, w.ruleId] },
      { contractVersionIds: [newId('cv_')] },
      { ruleIds: [newId('rule_')] },
      { contractVersionIds: ['cv_nope'] },
      { contractVersionIds: [w.ruleId] },
      { contractVersionIds: [other.contractVersionId] },
      { ruleIds: [other.ruleId] },
      { ruleIds: Array.from({ length: 101 }, () => newId('rule_')) },
    ];
    for (const selection of selections) {
      expectError(
        await preview(w.boot.apiKey.key, w.integrationId, { destinationMode: 'live', sourceConnectionId: w.sourceId, ...selection }),
        400,
        'configuration_selection_invalid',
      );
    }
    expect(await reviewCount(w)).toBe(0);
  });

  it(`accepts exactly ${SELECTION_LIMIT} contract ids and ${SELECTION_LIMIT} rule ids and copies them into the new connection; ${SELECTION_LIMIT + 1} of either is configuration_selection_invalid`, async () => {
    const boot = await bootstrapWorkspace(ctx);
    const created = await createIntegration(ctx, boot.apiKey.key, { mode: 'sandbox' });
    const w: World = {
      boot,
      created,
      integrationId: created.integration.id,
      sourceId: created.integration.connectionId,
      contractVersionId: '',
      ruleId: '',
    };
    const all = await seedSelectableArtifacts(ctx, boot.apiKey.key, w.sourceId, SELECTION_LIMIT + 1);
    // The last 100 of each: every id of the 101 is selectable on its own, so only the count refuses.
    const contractVersionIds = all.contractVersionIds.slice(1);
    const ruleIds = all.ruleIds.slice(1);
    const base = { destinationMode: 'live', sourceConnectionId: w.sourceId };
    for (const selection of [
      { contractVersionIds: all.contractVersionIds, ruleIds },
      { contractVersionIds, ruleIds: all.ruleIds },
      { contractVersionIds: all.contractVersionIds },
      { ruleIds: all.ruleIds },
    ]) {
      expectError(await preview(boot.apiKey.key, w.integrationId, { ...base, ...selection }), 400, 'configuration_selection_invalid');
    }
    expect(await reviewCount(w)).toBe(0);

    const review = await previewed(w, { ...base, contractVersionIds, ruleIds });
    expect(review.snapshot.contracts.map((c) => c.sourceContractVersionId)).toEqual(contractVersionIds);
    expect(review.snapshot.rules.map((r) => r.sourceRuleId)).toEqual(ruleIds);
    const res = await apply(boot.apiKey.key, review.operationId, review.fingerprint);
    expect(res.statusCode, res.body).toBe(201);
    const body = res.json<SetupReceipt>();
    expect(body.copiedArtifacts.contracts.map((c) => c.sourceContractVersionId)).toEqual(contractVersionIds);
    expect(body.copiedArtifacts.rules.map((r) => r.sourceRuleId)).toEqual(ruleIds);
    expect(await countRows(ctx, 'contract_versions', "connection_id = $1 AND lifecycle_status = 'draft'", [body.connectionId])).toBe(
      SELECTION_LIMIT,
    );
    expect(await countRows(ctx, 'reconciliation_rules', 'connection_id = $1 AND NOT enabled', [body.connectionId])).toBe(SELECTION_LIMIT);
  });

  it('400 idempotency_key_required, before the body', async () => {
    const w = await world();
    const review = await previewed(w);
    for (const idempotencyKey of [undefined, 'short', 'has space inside', 'x'.repeat(129)]) {
      await expectRefused(
        w,
        () =>
          callWithKey(ctx, w.boot.apiKey.key, 'POST', applyUrl(review.operationId), {
            body: { approvalFingerprint: 'not a fingerprint' },
            ...(idempotencyKey === undefined ? {} : { idempotencyKey }),
          }),
        400,
        'idempotency_key_required',
      );
    }
  });

  it('401 unauthenticated and 403 insufficient_scope on every route', async () => {
    const w = await world();
    const review = await previewed(w);
    const reader = await insertApiKey(ctx.deps.pool, {
      workspaceId: w.boot.workspace.id,
      scopes: ['integrations:read', 'contracts:read'],
      expiresAt: null,
      createdBy: 'test',
      now: new Date(),
    });
    for (const key of [null, 'svc_api_not-a-key']) {
      expectError(await preview(key, w.integrationId, { destinationMode: 'live' }), 401, 'unauthenticated');
      await expectRefused(w, () => apply(key, review.operationId, review.fingerprint), 401, 'unauthenticated');
      expectError(await status(key, review.operationId), 401, 'unauthenticated');
    }
    expectError(await preview(reader.key, w.integrationId, { destinationMode: 'live' }), 403, 'insufficient_scope');
    await expectRefused(w, () => apply(reader.key, review.operationId, review.fingerprint), 403, 'insufficient_scope');
    expectError(await status(reader.key, review.operationId), 403, 'insufficient_scope');
  });

  it("404 integration_not_found: unknown, malformed, a connection id, another workspace's, deleted", async () => {
    const w = await world();
    const stranger = await world();
    const deleted = await createIntegration(ctx, w.boot.apiKey.key, { mode: 'sandbox', name: 'Gone' });
    await ctx.deps.pool.query('UPDATE integrations SET deleted_at = now() WHERE id = $1', [deleted.integration.id]);
    for (const id of [newId('wint_'), 'wint_nope', w.sourceId, stranger.integrationId, deleted.integration.id]) {
      expectError(await preview(w.boot.apiKey.key, id, { destinationMode: 'live' }), 404, 'integration_not_found');
    }
    expect(await reviewCount(w)).toBe(0);
    // An Integration deleted after the review is not found at apply either.
    const review = await previewed(w);
    await ctx.deps.pool.query('UPDATE integrations SET deleted_at = now() WHERE id = $1', [w.integrationId]);
    await expectRefused(w, () => apply(w.boot.apiKey.key, review.operationId, review.fingerprint), 404, 'integration_not_found');
  });

  it("404 operation_not_found: unknown or malformed ids, another key's review, another workspace's", async () => {
    const w = await world();
    const review = await previewed(w);
    const sibling = await insertApiKey(ctx.deps.pool, {
      workspaceId: w.boot.workspace.id,
      scopes: ['integrations:manage'],
      expiresAt: null,
      createdBy: 'test',
      now: new Date(),
    });
    const stranger = await bootstrapWorkspace(ctx);
    for (const [key, id] of [
      [w.boot.apiKey.key, newId('consetup_')],
      [w.boot.apiKey.key, 'consetup_nope'],
      [w.boot.apiKey.key, newId('concopy_')],
      [sibling.key, review.operationId],
      [stranger.apiKey.key, review.operationId],
    ] as const) {
      await expectRefused(w, () => apply(key, id, review.fingerprint), 404, 'operation_not_found');
      expectError(await status(key, id), 404, 'operation_not_found');
    }
    // The completed receipt stays the original key's alone.
    expect((await apply(w.boot.apiKey.key, review.operationId, review.fingerprint)).statusCode).toBe(201);
    expectError(await status(sibling.key, review.operationId), 404, 'operation_not_found');
  });

  it('409 workspace_modes_unavailable in a legacy workspace (after the body checks), nothing written', async () => {
    const legacy = await bootstrapWorkspace(ctx, { legacy: true });
    // A legacy Integration with its Development connection, so the read-back watches real rows.
    const integrationId = await insertIntegrationRow(ctx, legacy.workspace.id);
    const { connectionId } = await insertSlotConnection(ctx, { workspaceId: legacy.workspace.id, integrationId, category: 'development' });
    const w: Written = { boot: legacy, integrationId, sourceId: connectionId };
    const before = await writes(w);
    expectError(await preview(legacy.apiKey.key, integrationId, { destinationMode: 'moon' }), 400, 'invalid_connection_setup');
    expectError(await preview(legacy.apiKey.key, integrationId, { destinationMode: 'live' }), 409, 'workspace_modes_unavailable');
    expect(await countRows(ctx, 'connection_setups', 'workspace_id = $1', [legacy.workspace.id])).toBe(0);
    await expectRefused(
      w,
      () => apply(legacy.apiKey.key, newId('consetup_'), `sha256:${'a'.repeat(64)}`),
      409,
      'workspace_modes_unavailable',
    );
    expectError(await status(legacy.apiKey.key, newId('consetup_')), 409, 'workspace_modes_unavailable');
    expect(await writes(w)).toEqual(before);
  });

  it('409 configuration_snapshot_too_large over 1 MiB; the same selection minus one contract fits', async () => {
    const w = await world();
    const ids: string[] = [];
    for (let n = 0; n < 4; n++)
      ids.push((await registerDraft(ctx, w.boot.apiKey.key, w.sourceId, bulkyRegistration(`bulk-${n}`))).contract.id);
    expectError(
      await preview(w.boot.apiKey.key, w.integrationId, {
        destinationMode: 'live',
        sourceConnectionId: w.sourceId,
        contractVersionIds: ids,
      }),
      409,
      'configuration_snapshot_too_large',
    );
    expect(await reviewCount(w)).toBe(0);
    const fits = await previewed(w, { destinationMode: 'live', sourceConnectionId: w.sourceId, contractVersionIds: ids.slice(1) });
    expect(Buffer.byteLength(JSON.stringify(fits.snapshot))).toBeLessThanOrEqual(1024 * 1024);
  });

  it('409 connection_already_configured when the destination mode has a connection', async () => {
    const w = await world();
    expectError(await preview(w.boot.apiKey.key, w.integrationId, { destinationMode: 'sandbox' }), 409, 'connection_already_configured');
    expect(await reviewCount(w)).toBe(0);
  });

  it('409 idempotency_conflict: a key already used by another review, by another body or by another kind of operation', async () => {
    const w = await world();
    const first = await previewed(w);
    const second = await previewed(w, { destinationMode: 'live' });
    const idempotencyKey = newIdempotencyKey();
    expect((await apply(w.boot.apiKey.key, first.operationId, first.fingerprint, idempotencyKey)).statusCode).toBe(201);
    await expectRefused(
      w,
      () => apply(w.boot.apiKey.key, second.operationId, second.fingerprint, idempotencyKey),
      409,
      'idempotency_conflict',
    );
    await expectRefused(
      w,
      () => apply(w.boot.apiKey.key, first.operationId, second.fingerprint, idempotencyKey),
      409,
      'idempotency_conflict',
    );
    const ruleKey = newIdempotencyKey();
    await createRuleWithKey(
      ctx,
      w.boot.apiKey.key,
      w.sourceId,
      { sourceEventType: 'refund.created', expectedObjectType: 'credit_note', maxDelayMs: 5_000 },
      ruleKey,
    );
    const third = await previewed(await world(w.boot), { destinationMode: 'live' });
    await expectRefused(w, () => apply(w.boot.apiKey.key, third.operationId, third.fingerprint, ruleKey), 409, 'idempotency_conflict');
  });

  it(`429 rate_limited after ${PREVIEWS_PER_MINUTE} previews a minute in the workspace, with Retry-After; refused previews take no slot`, async () => {
    const w = await world();
    for (let n = 0; n < PREVIEWS_PER_MINUTE; n++) {
      if (n % 10 === 0)
        expectError(await preview(w.boot.apiKey.key, newId('wint_'), { destinationMode: 'live' }), 404, 'integration_not_found');
      expect((await preview(w.boot.apiKey.key, w.integrationId, { destinationMode: 'live' })).statusCode).toBe(201);
    }
    const limited = await preview(w.boot.apiKey.key, w.integrationId, { destinationMode: 'live' });
    expectError(limited, 429, 'rate_limited');
    const retryAfter = Number(limited.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(await reviewCount(w)).toBe(PREVIEWS_PER_MINUTE);
    // The window slides: a minute later previews are accepted again.
    await advanceClock(ctx, 60_000);
    expect((await preview(w.boot.apiKey.key, w.integrationId, { destinationMode: 'live' })).statusCode).toBe(201);
  });
});

describe('authority and expiry during the apply roll everything back', () => {
  const during = (change: () => Promise<void>) => {
    ctx.hooks.beforeAuthorityRecheck = async (kind) => {
      if (kind === 'connection.setup') await change();
    };
  };

  it('the key expiring during the apply: 403 insufficient_scope, nothing written', async () => {
    const w = await world();
    const shortLived = await insertApiKey(ctx.deps.pool, {
      workspaceId: w.boot.workspace.id,
      scopes: ['integrations:manage'],
      expiresAt: new Date(Date.now() + 60_000),
      createdBy: 'test',
      now: new Date(),
    });
    const review = await previewed(w, fullSelection(w), shortLived.key);
    during(() => advanceClock(ctx, 120_000));
    await expectRefused(w, () => apply(shortLived.key, review.operationId, review.fingerprint), 403, 'insufficient_scope');
  });

  it('the review expiring during the apply: 409 connection_preview_expired, nothing written', async () => {
    const w = await world();
    const review = await previewed(w);
    await advanceClock(ctx, REVIEW_LIFETIME_MS - 1_000);
    during(() => advanceClock(ctx, 2_000));
    await expectRefused(w, () => apply(w.boot.apiKey.key, review.operationId, review.fingerprint), 409, 'connection_preview_expired');
  });

  it('the workspace archived during the apply: 409 workspace_unavailable, nothing written', async () => {
    const w = await world();
    const review = await previewed(w);
    during(async () => {
      await ctx.deps.pool.query("UPDATE workspaces SET status = 'archived', archived_at = now() WHERE id = $1", [w.boot.workspace.id]);
    });
    const res = await apply(w.boot.apiKey.key, review.operationId, review.fingerprint);
    ctx.hooks.beforeAuthorityRecheck = undefined;
    await ctx.deps.pool.query("UPDATE workspaces SET status = 'active', archived_at = NULL WHERE id = $1", [w.boot.workspace.id]);
    expectError(res, 409, 'workspace_unavailable');
    expect(await writes(w)).toMatchObject({ connections: 1, credentials: 1, completedReviews: 0, audit: 0 });
  });

  it('the authorization epoch moving during the apply: 409 connection_preview_stale, nothing written', async () => {
    const w = await world();
    const review = await previewed(w);
    const before = await writes(w);
    during(async () => {
      await ctx.deps.pool.query('UPDATE workspaces SET auth_epoch = auth_epoch + 1 WHERE id = $1', [w.boot.workspace.id]);
    });
    const res = await apply(w.boot.apiKey.key, review.operationId, review.fingerprint);
    ctx.hooks.beforeAuthorityRecheck = undefined;
    expectError(res, 409, 'connection_preview_stale');
    expect(await writes(w)).toEqual(before);
  });
});

describe('maintenance pause', () => {
  it('refuses previews and applies with 503 mode_cutover_write_paused; status reads still answer', async () => {
    const w = await world();
    const review = await previewed(w);
    await setWritePause(ctx.deps.redis, true);
    try {
      expectError(await preview(w.boot.apiKey.key, w.integrationId, { destinationMode: 'live' }), 503, 'mode_cutover_write_paused');
      await expectRefused(w, () => apply(w.boot.apiKey.key, review.operationId, review.fingerprint), 503, 'mode_cutover_write_paused');
      expect((await status(w.boot.apiKey.key, review.operationId)).statusCode).toBe(200);
    } finally {
      await setWritePause(ctx.deps.redis, false);
    }
  });
});

describe('status and recovery', () => {
  it('stay with the original key: revoked, expired, stripped of its scope, or an archived workspace prevent recovery', async () => {
    const w = await world();
    const make = (expiresAt: Date | null = null) =>
      insertApiKey(ctx.deps.pool, {
        workspaceId: w.boot.workspace.id,
        scopes: ['integrations:manage'],
        expiresAt,
        createdBy: 'test',
        now: new Date(),
      });
    const completedBy = async (key: string) => {
      const other = await world(w.boot);
      const review = await previewed(other, { destinationMode: 'live' }, key);
      expect((await apply(key, review.operationId, review.fingerprint)).statusCode).toBe(201);
      expect((await status(key, review.operationId)).json().status).toBe('completed');
      return review.operationId as string;
    };

    const revoked = await make();
    const revokedOp = await completedBy(revoked.key);
    await ctx.deps.pool.query('UPDATE api_keys SET revoked_at = now() WHERE id = $1', [revoked.id]);
    expectError(await status(revoked.key, revokedOp), 401, 'unauthenticated');

    const expiring = await make(new Date(Date.now() + 60_000));
    const expiringOp = await completedBy(expiring.key);
    await advanceClock(ctx, 120_000);
    expectError(await status(expiring.key, expiringOp), 401, 'unauthenticated');
    await resetTestClock(ctx.deps.redis);

    const stripped = await make();
    const strippedOp = await completedBy(stripped.key);
    await ctx.deps.pool.query("UPDATE api_keys SET scopes = '{integrations:read}' WHERE id = $1", [stripped.id]);
    expectError(await status(stripped.key, strippedOp), 403, 'insufficient_scope');

    const pending = await previewed(w);
    expect(await callWithSession(ctx, w.boot.sessionToken, 'POST', `/workspaces/${w.boot.workspace.slug}/archive`)).toMatchObject({
      statusCode: 200,
    });
    expectError(await status(w.boot.apiKey.key, pending.operationId), 401, 'unauthenticated');
    await expectRefused(w, () => apply(w.boot.apiKey.key, pending.operationId, pending.fingerprint), 401, 'unauthenticated');
    expect(await countRows(ctx, 'connection_setups', 'id = $1 AND completed_at IS NULL', [pending.operationId])).toBe(1);
  });

  /** [what happened after the setup, whether its receipt is historical then (02: computed from current state), the change]. */
  const afterSetup: [string, boolean, (w: World, connectionId: string) => Promise<void>][] = [
    ['nothing', false, async () => undefined],
    [
      'the source changed (a rule created there)',
      false,
      async (w) => {
        await createRule(w.boot.apiKey.key, w.sourceId, 8);
      },
    ],
    [
      "the new connection's revision moved (a rule created there)",
      true,
      async (w, connectionId) => {
        await createRule(w.boot.apiKey.key, connectionId, 8);
      },
    ],
    [
      'the new connection was deleted',
      true,
      async (_w, connectionId) => {
        await ctx.deps.pool.query('UPDATE connections SET deleted_at = now() WHERE id = $1', [connectionId]);
      },
    ],
    [
      'the Integration was deleted',
      true,
      async (w) => {
        await ctx.deps.pool.query('UPDATE integrations SET deleted_at = now() WHERE id = $1', [w.integrationId]);
      },
    ],
  ];

  it.each(afterSetup)(
    'when %s, the receipt read by status and by the identical retry says historical %s',
    async (_label, historical, change) => {
      const w = await world();
      const review = await previewed(w);
      const idempotencyKey = newIdempotencyKey();
      const first = await apply(w.boot.apiKey.key, review.operationId, review.fingerprint, idempotencyKey);
      expect(first.statusCode, first.body).toBe(201);
      const receipt = (await status(w.boot.apiKey.key, review.operationId)).json();
      expect(receipt).toMatchObject({ status: 'completed', replayed: true, historical: false });
      await change(w, first.json().connectionId);
      const read = await status(w.boot.apiKey.key, review.operationId);
      expect(read.statusCode, read.body).toBe(200);
      expect(read.json()).toEqual({ ...receipt, historical });
      const before = await writes(w);
      const retry = await apply(w.boot.apiKey.key, review.operationId, review.fingerprint, idempotencyKey);
      expect(retry.statusCode, retry.body).toBe(200);
      expect(retry.json()).toEqual({ ...receipt, historical });
      expect(await writes(w)).toEqual(before);
    },
  );

  it('uses server time: a review read after its expiry is expired, however early the request was made', async () => {
    const w = await world();
    const review = await previewed(w);
    await advanceClock(ctx, REVIEW_LIFETIME_MS);
    expect((await status(w.boot.apiKey.key, review.operationId)).json()).toEqual({ ...review, status: 'expired' });
    // Reads never extend a review.
    await resetTestClock(ctx.deps.redis);
    expect((await status(w.boot.apiKey.key, review.operationId)).json()).toEqual(review);
  });
});
