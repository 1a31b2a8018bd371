import type { LightMyRequestResponse } from 'fastify';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { BootstrapResult } from '../management/admin/bootstrap.js';
import { PREVIEWS_PER_MINUTE } from '../management/configuration/configurationService.js';
import { setWritePause } from '../management/maintenance.js';
import { fingerprint } from '../shared/fingerprint.js';
import { newId } from '../shared/ids.js';
import { apiKeyAuthorityLosses } from './helpers/authority.js';
import {
  expectedProof,
  markRulesEvaluated,
  seedSelectableArtifacts,
  SELECTION_LIMIT,
  type ConfigurationReceipt,
  type ConfigurationReview,
} from './helpers/configuration.js';
import { insertConnections, readConnectionRow, type ConnectionFixture } from './helpers/connections.js';
import {
  advanceClock,
  bootstrapWorkspace,
  callWithKey,
  countRows,
  createTestContext,
  expectError,
  newIdempotencyKey,
  resetClockAndHooks,
  type TestContext,
} from './helpers/context.js';
import { activateOk, contractUrl, openApiRegistration, ordersOpenApi, registerDraft, registerVersion } from './helpers/contracts.js';
import { createRuleWithKey, ruleLastEvaluatedAt, type RuleReceipt } from './helpers/rules.js';

// 02 "Configuration copy and compensation (existing destination)" through the real management app,
// PostgreSQL and Redis: reviews, apply with receipts and proofs, status reads, compensation, the
// copy and compensation rows of "States and transitions", and the error table.

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(async () => {
  await ctx.close();
});
afterEach(() => resetClockAndHooks(ctx));

const TEN_MINUTES = 10 * 60_000;
const FINGERPRINT = /^sha256:[0-9a-f]{64}$/;

const previewUrl = (connectionId: string) => `/v1/connections/${connectionId}/configuration-copy/preview`;
const operationUrl = (operationId: string) => `/v1/configuration-operations/${operationId}`;

const previewCopy = (key: string | null, destinationId: string, body: unknown) =>
  callWithKey(ctx, key, 'POST', previewUrl(destinationId), { body });
const apply = (key: string | null, operationId: string, approvalFingerprint: unknown, idempotencyKey: string = newIdempotencyKey()) =>
  callWithKey(ctx, key, 'POST', `${operationUrl(operationId)}/apply`, { body: { approvalFingerprint }, idempotencyKey });
const status = (key: string | null, operationId: string) => callWithKey(ctx, key, 'GET', operationUrl(operationId));
const previewCompensation = (key: string | null, operationId: string, body: unknown = {}) =>
  callWithKey(ctx, key, 'POST', `${operationUrl(operationId)}/compensation-preview`, { body });

const ruleDefinition = (n: number) => ({ sourceEventType: `order.paid.${n}`, expectedObjectType: 'shipment', maxDelayMs: 60_000 + n });

interface Fixture {
  boot: BootstrapResult;
  sandbox: ConnectionFixture;
  live: ConnectionFixture;
  /** Source (Sandbox) versions `2024-01` (active) and `2024-02` (draft). */
  versions: string[];
  /** Source rules: the first enabled, the second disabled. */
  rules: string[];
}

async function currentRevision(connectionId: string): Promise<string> {
  return (await readConnectionRow(ctx, connectionId)).revision;
}

async function patchRule(key: string, connectionId: string, ruleId: string, body: Record<string, unknown>): Promise<void> {
  const res = await callWithKey(ctx, key, 'PATCH', `/v1/connections/${connectionId}/reconciliation-rules/${ruleId}`, {
    body: { expectedRevision: await currentRevision(connectionId), ...body },
    idempotencyKey: newIdempotencyKey(),
  });
  expect(res.statusCode, res.body).toBe(200);
}

async function credentialMutation(key: string, connectionId: string, action: 'issue' | 'rotate'): Promise<void> {
  const res = await callWithKey(ctx, key, 'POST', `/v1/connections/${connectionId}/credentials/${action}`, {
    body: { expectedRevision: await currentRevision(connectionId) },
    idempotencyKey: newIdempotencyKey(),
  });
  expect(res.statusCode, res.body).toBe(201);
}

const issueCredential = (key: string, connectionId: string) => credentialMutation(key, connectionId, 'issue');

/** The first version's document: served under `/api`, so its operations have a base path to copy. */
const servedOrders = () => ({ ...ordersOpenApi(0), servers: [{ url: 'https://orders.example.test/api' }] });

/** A workspace with both mode connections; the Sandbox one holds two versions and two rules. */
async function fixture(): Promise<Fixture> {
  const boot = await bootstrapWorkspace(ctx);
  const { sandbox, live } = await insertConnections(ctx, boot, ['sandbox', 'live']);
  const first = await registerDraft(ctx, boot.apiKey.key, sandbox.connectionId, openApiRegistration('2024-01', servedOrders()));
  const second = await registerDraft(ctx, boot.apiKey.key, sandbox.connectionId, openApiRegistration('2024-02', ordersOpenApi(1)));
  await activateOk(ctx, boot.apiKey.key, sandbox.connectionId, first.contract.id, {
    expectedActiveContractVersionId: null,
    reason: 'promote',
  });
  const enabled = await createRuleWithKey(ctx, boot.apiKey.key, sandbox.connectionId, { ...ruleDefinition(0), enabled: true });
  const disabled = await createRuleWithKey(ctx, boot.apiKey.key, sandbox.connectionId, ruleDefinition(1));
  return { boot, sandbox, live, versions: [first.contract.id, second.contract.id], rules: [enabled.rule.id, disabled.rule.id] };
}

const fullSelection = (f: Fixture) => ({ sourceConnectionId: f.sandbox.connectionId, contractVersionIds: f.versions, ruleIds: f.rules });

async function reviewed(f: Fixture, body: unknown = fullSelection(f), key = f.boot.apiKey.key): Promise<ConfigurationReview> {
  const res = await previewCopy(key, f.live.connectionId, body);
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
}

async function copied(f: Fixture): Promise<{ review: ConfigurationReview; receipt: ConfigurationReceipt; idempotencyKey: string }> {
  const review = await reviewed(f);
  const idempotencyKey = newIdempotencyKey();
  const res = await apply(f.boot.apiKey.key, review.operationId, review.fingerprint, idempotencyKey);
  expect(res.statusCode, res.body).toBe(201);
  return { review, receipt: res.json(), idempotencyKey };
}

/** 02 "Operation receipt (completed)": the first answer to an apply of `review` on the Live destination. */
function firstReceipt(
  f: Fixture,
  review: ConfigurationReview,
  fields: { action: string; revision: string; originalOperationId: string | null; copiedArtifacts: unknown },
) {
  return {
    operationId: review.operationId,
    action: fields.action,
    status: 'completed',
    connectionId: f.live.connectionId,
    workspaceIntegrationId: f.live.integrationId,
    mode: 'live',
    revision: fields.revision,
    completedAt: expect.any(String),
    originalOperationId: fields.originalOperationId,
    proof: expectedProof(review),
    copiedArtifacts: fields.copiedArtifacts,
    replayed: false,
    historical: false,
  };
}

/** Everything apply can write: all of it must be unchanged after a refused request. */
async function writes(f: Fixture) {
  const live = f.live.connectionId;
  return {
    destination: await readConnectionRow(ctx, live),
    source: await readConnectionRow(ctx, f.sandbox.connectionId),
    versions: await countRows(ctx, 'contract_versions', 'connection_id = $1', [live]),
    operations: await countRows(
      ctx,
      'contract_operations',
      'contract_version_id IN (SELECT id FROM contract_versions WHERE connection_id = $1)',
      [live],
    ),
    rules: await countRows(ctx, 'reconciliation_rules', 'connection_id = $1', [live]),
    credentials: await countRows(ctx, 'credentials', 'connection_id = $1', [live]),
    receipts: await countRows(ctx, 'operations', "workspace_id = $1 AND kind LIKE 'configuration.%'", [f.boot.workspace.id]),
    audit: await countRows(ctx, 'audit_events', "workspace_id = $1 AND action IN ('configuration.copy', 'configuration.compensate')", [
      f.boot.workspace.id,
    ]),
  };
}

async function expectNothingWritten(
  f: Fixture,
  before: Awaited<ReturnType<typeof writes>>,
  res: LightMyRequestResponse,
  statusCode: number,
  error: string,
): Promise<void> {
  expectError(res, statusCode, error);
  expect(await writes(f)).toEqual(before);
}

/** The owner key's apply of `review`, refused with this answer and writing nothing. */
async function expectApplyRefused(f: Fixture, review: ConfigurationReview, statusCode: number, error: string): Promise<void> {
  const before = await writes(f);
  await expectNothingWritten(f, before, await apply(f.boot.apiKey.key, review.operationId, review.fingerprint), statusCode, error);
}

describe('copy review, apply and status', () => {
  it('previews a whitelisted snapshot that creates nothing, then applies drafts and disabled rules with a receipt', async () => {
    const f = await fixture();
    const before = await writes(f);
    const res = await previewCopy(f.boot.apiKey.key, f.live.connectionId, fullSelection(f));
    expect(res.statusCode, res.body).toBe(201);
    expect(res.headers['cache-control']).toBe('no-store');
    const review = res.json<ConfigurationReview>();
    expect(Object.keys(review).sort()).toEqual([
      'action',
      'copiedArtifacts',
      'expiresAt',
      'fingerprint',
      'operationId',
      'originalOperationId',
      'snapshot',
      'status',
    ]);
    expect(review).toMatchObject({ action: 'configuration.copy', status: 'previewed', originalOperationId: null, copiedArtifacts: null });
    expect(review.operationId).toMatch(/^concopy_[0-9a-z]{26}$/);
    expect(review.fingerprint).toMatch(FINGERPRINT);
    expect(Math.abs(Date.parse(review.expiresAt) - Date.now() - TEN_MINUTES)).toBeLessThan(5_000);

    const { snapshot } = review;
    const { fingerprint: configurationFingerprint, ...snapshotBody } = snapshot;
    expect(configurationFingerprint).toBe(fingerprint(snapshotBody));
    expect(review.fingerprint).not.toBe(configurationFingerprint);
    expect(snapshot.identity).toEqual({
      id: f.live.integrationId,
      revision: expect.any(String),
      tenantId: f.boot.workspace.tenantId,
      name: 'Orders sync',
      provider: 'Acme',
      direction: 'outbound',
      protocol: 'http-api',
    });
    expect(snapshot.source).toEqual({
      connectionId: f.sandbox.connectionId,
      environmentId: f.sandbox.environmentId,
      revision: before.source.revision,
    });
    expect(snapshot.destination).toEqual({
      mode: 'live',
      environmentId: f.live.environmentId,
      connectionId: f.live.connectionId,
      revision: before.destination.revision,
    });
    expect(snapshot.contracts.map((c) => [c.sourceContractVersionId, c.declaredVersion, c.lifecycleStatus])).toEqual([
      [f.versions[0], '2024-01', 'draft'],
      [f.versions[1], '2024-02', 'draft'],
    ]);
    expect(snapshot.contracts[0].operations.length).toBeGreaterThan(0);
    expect(Object.keys(snapshot.contracts[0].operations[0]).sort()).toEqual([
      'basePaths',
      'eventType',
      'fingerprint',
      'method',
      'operationKey',
      'payloadLocation',
      'routeTemplate',
      'schema',
      'statusSelector',
      'unchecked',
    ]);
    expect(snapshot.rules).toEqual([
      { sourceRuleId: f.rules[0], ...ruleDefinition(0), enabled: false },
      { sourceRuleId: f.rules[1], ...ruleDefinition(1), enabled: false },
    ]);
    // Nothing created by a preview; it is audited.
    expect(await writes(f)).toEqual(before);
    expect(await countRows(ctx, 'audit_events', "action = 'configuration.copy.preview' AND target_id = $1", [review.operationId])).toBe(1);
    expect((await status(f.boot.apiKey.key, review.operationId)).json()).toEqual(review);

    const applied = await apply(f.boot.apiKey.key, review.operationId, review.fingerprint);
    expect(applied.statusCode, applied.body).toBe(201);
    expect(applied.headers['cache-control']).toBe('no-store');
    const receipt = applied.json<ConfigurationReceipt>();
    const after = await writes(f);
    expect(receipt).toEqual(
      firstReceipt(f, review, {
        action: 'configuration.copy',
        revision: after.destination.revision,
        originalOperationId: null,
        copiedArtifacts: {
          contracts: f.versions.map((id) => ({ sourceContractVersionId: id, destinationContractVersionId: expect.stringMatching(/^cv_/) })),
          rules: f.rules.map((id) => ({ sourceRuleId: id, destinationRuleId: expect.stringMatching(/^rule_/) })),
        },
      }),
    );
    expect(BigInt(receipt.revision)).toBeGreaterThan(BigInt(before.destination.revision));
    // Drafts and disabled rules only: no credential, no activation; the source is untouched.
    expect(after).toMatchObject({ source: before.source, versions: 2, rules: 2, credentials: 0, receipts: 1, audit: 1 });
    expect(after.destination).toMatchObject({ credential_status: 'not_issued', credential_epoch: '0' });
    const connection = (await callWithKey(ctx, f.boot.apiKey.key, 'GET', `/v1/connections/${f.live.connectionId}`)).json();
    expect(connection.activeContractVersionId).toBeNull();

    const [firstCopy] = receipt.copiedArtifacts.contracts;
    const draft = (
      await callWithKey(ctx, f.boot.apiKey.key, 'GET', contractUrl(f.live.connectionId, firstCopy.destinationContractVersionId))
    ).json().contract;
    const original = (await callWithKey(ctx, f.boot.apiKey.key, 'GET', contractUrl(f.sandbox.connectionId, f.versions[0]))).json().contract;
    expect(original.lifecycleStatus).toBe('active');
    expect(draft).toMatchObject({
      declaredVersion: '2024-01',
      lifecycleStatus: 'draft',
      fingerprint: original.fingerprint,
      importedFrom: original.importedFrom,
      activatedAt: null,
    });
    const withoutId = (ops: { id: string }[]) => ops.map(({ id: _id, ...op }) => op);
    expect(withoutId(draft.operations)).toEqual(withoutId(original.operations));
    expect(new Set(draft.operations.map((op: { basePaths: string[] }) => op.basePaths.join()))).toEqual(new Set(['/api']));
    // The same document under the same label is an identical draft retry on the destination.
    const again = await registerVersion(ctx, f.boot.apiKey.key, f.live.connectionId, openApiRegistration('2024-01', servedOrders()));
    expect(again.statusCode).toBe(201);
    expect(again.json().contract.id).toBe(firstCopy.destinationContractVersionId);

    const rules = (await callWithKey(ctx, f.boot.apiKey.key, 'GET', `/v1/connections/${f.live.connectionId}/reconciliation-rules`)).json<{
      rules: RuleReceipt['rule'][];
    }>().rules;
    expect(rules.map((rule) => ({ id: rule.id, enabled: rule.enabled, type: rule.sourceEventType }))).toEqual(
      receipt.copiedArtifacts.rules.map((m, n) => ({ id: m.destinationRuleId, enabled: false, type: ruleDefinition(n).sourceEventType })),
    );
    expect((await status(f.boot.apiKey.key, review.operationId)).json()).toEqual({ ...receipt, replayed: true });
  });

  it('copies a selection of contracts only, or rules only', async () => {
    const f = await fixture();
    const contractsOnly = await reviewed(f, { sourceConnectionId: f.sandbox.connectionId, contractVersionIds: [f.versions[1]] });
    expect(contractsOnly.snapshot.rules).toEqual([]);
    const first = await apply(f.boot.apiKey.key, contractsOnly.operationId, contractsOnly.fingerprint);
    expect(first.json().copiedArtifacts).toEqual({
      contracts: [{ sourceContractVersionId: f.versions[1], destinationContractVersionId: expect.any(String) }],
      rules: [],
    });
    const rulesOnly = await reviewed(f, { sourceConnectionId: f.sandbox.connectionId, ruleIds: [f.rules[0]] });
    const second = await apply(f.boot.apiKey.key, rulesOnly.operationId, rulesOnly.fingerprint);
    expect(second.statusCode).toBe(201);
    expect(second.json().copiedArtifacts.contracts).toEqual([]);
    expect(await writes(f)).toMatchObject({ versions: 1, rules: 1 });
  });

  it('replays an identical retry, refuses the key for another operation and a second apply of a spent review', async () => {
    const f = await fixture();
    const { review, receipt, idempotencyKey } = await copied(f);
    const before = await writes(f);
    const retry = await apply(f.boot.apiKey.key, review.operationId, review.fingerprint, idempotencyKey);
    expect(retry.statusCode).toBe(200);
    expect(retry.json()).toEqual({ ...receipt, replayed: true });

    // The key of the copy used for its compensation is another operation's key.
    const compensation = (await previewCompensation(f.boot.apiKey.key, review.operationId)).json();
    await expectNothingWritten(
      f,
      before,
      await apply(f.boot.apiKey.key, compensation.operationId, compensation.fingerprint, idempotencyKey),
      409,
      'idempotency_conflict',
    );
    await expectNothingWritten(
      f,
      before,
      await apply(f.boot.apiKey.key, review.operationId, review.fingerprint),
      409,
      'configuration_preview_stale',
    );
    // A sibling key of the same workspace inherits nothing: the review and receipt are not found.
    const sibling = await bootstrapWorkspace(ctx, { email: f.boot.user.email });
    await expectNothingWritten(
      f,
      before,
      await apply(sibling.apiKey.key, review.operationId, review.fingerprint, idempotencyKey),
      409,
      'idempotency_conflict',
    );
    expectError(await status(sibling.apiKey.key, review.operationId), 404, 'operation_not_found');
  });
});

describe('concurrency', () => {
  it('parallel applies of one review with different keys complete it once; the others find it spent', async () => {
    const f = await fixture();
    const review = await reviewed(f);
    const responses = await Promise.all(Array.from({ length: 6 }, () => apply(f.boot.apiKey.key, review.operationId, review.fingerprint)));
    expect(responses.map((res) => res.statusCode).sort()).toEqual([201, 409, 409, 409, 409, 409]);
    for (const res of responses.filter((r) => r.statusCode === 409)) expect(res.json()).toEqual({ error: 'configuration_preview_stale' });
    expect(await writes(f)).toMatchObject({ versions: 2, rules: 2, receipts: 1, audit: 1 });
  });

  it('of two reviews for one destination, the second apply is stale', async () => {
    const f = await fixture();
    const first = await reviewed(f, { sourceConnectionId: f.sandbox.connectionId, ruleIds: [f.rules[0]] });
    const second = await reviewed(f, { sourceConnectionId: f.sandbox.connectionId, contractVersionIds: [f.versions[0]] });
    const [a, b] = await Promise.all([
      apply(f.boot.apiKey.key, first.operationId, first.fingerprint),
      apply(f.boot.apiKey.key, second.operationId, second.fingerprint),
    ]);
    expect([a.statusCode, b.statusCode].sort()).toEqual([201, 409]);
    expect([a, b].find((res) => res.statusCode === 409)!.json()).toEqual({ error: 'configuration_preview_stale' });
    expect(await writes(f)).toMatchObject({ receipts: 1 });
  });
});

/** 02 "States and transitions", the copy and compensation rows, each run from a fresh workspace. */
const transitions: { from: string; trigger: string; condition: string; next: string; run: (f: Fixture) => Promise<void> }[] = [
  {
    from: '(none)',
    trigger: 'preview',
    condition: 'authorized, valid selection, fits 1 MiB',
    next: 'previewed',
    run: async (f) => {
      const before = await writes(f);
      const review = await reviewed(f);
      expect(review.status).toBe('previewed');
      expect(await writes(f)).toEqual(before);
      expect((await status(f.boot.apiKey.key, review.operationId)).json().status).toBe('previewed');
    },
  },
  {
    from: 'previewed',
    trigger: 'apply with matching approvalFingerprint',
    condition: 'before expiry, rechecked in the write transaction',
    next: 'completed',
    run: async (f) => {
      const review = await reviewed(f);
      await advanceClock(ctx, TEN_MINUTES - 5_000);
      const res = await apply(f.boot.apiKey.key, review.operationId, review.fingerprint);
      expect(res.statusCode, res.body).toBe(201);
      expect(res.json().status).toBe('completed');
      expect(await writes(f)).toMatchObject({ versions: 2, rules: 2, receipts: 1, audit: 1 });
    },
  },
  {
    from: 'previewed',
    trigger: 'time passes',
    condition: 'ten minutes elapse',
    next: 'expired',
    run: async (f) => {
      const review = await reviewed(f);
      await advanceClock(ctx, TEN_MINUTES - 1_000);
      expect((await status(f.boot.apiKey.key, review.operationId)).json()).toEqual(review);
      await advanceClock(ctx, 1_000);
      const expired = await status(f.boot.apiKey.key, review.operationId);
      // The original fingerprint, snapshot and expiry: reads never extend a review.
      expect(expired.json()).toEqual({ ...review, status: 'expired' });
      await expectApplyRefused(f, review, 409, 'configuration_preview_expired');
      expect((await status(f.boot.apiKey.key, review.operationId)).json().status).toBe('expired');
    },
  },
  {
    from: 'previewed',
    trigger: 'apply',
    condition: 'source changed since review, then restored',
    next: 'unchanged (configuration_preview_stale)',
    run: async (f) => {
      const review = await reviewed(f);
      await patchRule(f.boot.apiKey.key, f.sandbox.connectionId, f.rules[1], { enabled: true });
      await patchRule(f.boot.apiKey.key, f.sandbox.connectionId, f.rules[1], { enabled: false });
      await expectApplyRefused(f, review, 409, 'configuration_preview_stale');
      expect((await status(f.boot.apiKey.key, review.operationId)).json().status).toBe('previewed');
    },
  },
  {
    from: 'previewed',
    trigger: 'apply',
    condition: 'destination changed since review, then restored',
    next: 'unchanged (configuration_preview_stale)',
    run: async (f) => {
      const review = await reviewed(f);
      const extra = await createRuleWithKey(ctx, f.boot.apiKey.key, f.live.connectionId, ruleDefinition(9));
      const res = await callWithKey(
        ctx,
        f.boot.apiKey.key,
        'DELETE',
        `/v1/connections/${f.live.connectionId}/reconciliation-rules/${extra.rule.id}`,
        {
          body: { expectedRevision: extra.revision },
          idempotencyKey: newIdempotencyKey(),
        },
      );
      expect(res.statusCode).toBe(200);
      await expectApplyRefused(f, review, 409, 'configuration_preview_stale');
    },
  },
  {
    from: 'previewed',
    trigger: 'apply',
    condition: 'destination credential issued since review',
    next: 'unchanged (configuration_preview_stale)',
    run: async (f) => {
      const review = await reviewed(f);
      await issueCredential(f.boot.apiKey.key, f.live.connectionId);
      await expectApplyRefused(f, review, 409, 'configuration_preview_stale');
    },
  },
  {
    from: 'previewed',
    trigger: 'apply',
    condition: 'authority changed since review (authorization epoch moved)',
    next: 'unchanged (configuration_preview_stale)',
    run: async (f) => {
      const review = await reviewed(f);
      await ctx.deps.pool.query('UPDATE workspaces SET auth_epoch = auth_epoch + 1 WHERE id = $1', [f.boot.workspace.id]);
      await expectApplyRefused(f, review, 409, 'configuration_preview_stale');
    },
  },
  {
    // 02 Reconciliation rule: `lastEvaluatedAt` "does not invalidate a configuration review".
    from: 'previewed',
    trigger: 'apply with matching approvalFingerprint',
    condition: 'only lastEvaluatedAt of source and destination rules moved since review',
    next: 'completed',
    run: async (f) => {
      const own = await createRuleWithKey(ctx, f.boot.apiKey.key, f.live.connectionId, ruleDefinition(5));
      const review = await reviewed(f);
      const before = await writes(f);
      expect(await ruleLastEvaluatedAt(ctx, f.boot.apiKey.key, f.sandbox.connectionId, f.rules[0])).toBeNull();
      await markRulesEvaluated(ctx, [...f.rules, own.rule.id]);
      expect(await ruleLastEvaluatedAt(ctx, f.boot.apiKey.key, f.sandbox.connectionId, f.rules[0])).toEqual(expect.any(String));
      expect(await ruleLastEvaluatedAt(ctx, f.boot.apiKey.key, f.live.connectionId, own.rule.id)).toEqual(expect.any(String));
      expect(await writes(f)).toEqual(before);
      const res = await apply(f.boot.apiKey.key, review.operationId, review.fingerprint);
      expect(res.statusCode, res.body).toBe(201);
      expect(await writes(f)).toMatchObject({ versions: 2, rules: 3, receipts: 1, audit: 1 });
    },
  },
  {
    from: 'previewed',
    trigger: 'apply',
    condition: 'wrong fingerprint',
    next: 'unchanged (approval_mismatch)',
    run: async (f) => {
      const review = await reviewed(f);
      const other = await reviewed(f);
      const before = await writes(f);
      await expectNothingWritten(
        f,
        before,
        await apply(f.boot.apiKey.key, review.operationId, other.fingerprint),
        409,
        'approval_mismatch',
      );
      await expectNothingWritten(
        f,
        before,
        await apply(f.boot.apiKey.key, review.operationId, review.snapshot.fingerprint),
        409,
        'approval_mismatch',
      );
      // Unchanged: the review still applies with its own fingerprint.
      expect((await apply(f.boot.apiKey.key, review.operationId, review.fingerprint)).statusCode).toBe(201);
    },
  },
  {
    from: 'completed',
    trigger: 'identical retry with original key',
    condition: '',
    next: 'completed (200, replayed, same proof and mappings)',
    run: async (f) => {
      const { review, receipt, idempotencyKey } = await copied(f);
      const before = await writes(f);
      // Even after the review's expiry: the receipt is what answers.
      await advanceClock(ctx, TEN_MINUTES);
      const retry = await apply(f.boot.apiKey.key, review.operationId, review.fingerprint, idempotencyKey);
      expect(retry.statusCode).toBe(200);
      expect(retry.json()).toEqual({ ...receipt, replayed: true });
      expect(await writes(f)).toEqual(before);
    },
  },
  {
    from: 'completed (copy)',
    trigger: 'compensation preview then apply',
    condition: 'only pristine drafts and disabled rules of that copy remain',
    next: 'compensation completed',
    run: async (f) => {
      const { review, receipt } = await copied(f);
      const comp = await previewCompensation(f.boot.apiKey.key, review.operationId);
      expect(comp.statusCode, comp.body).toBe(201);
      const compReview = comp.json();
      const removal = await apply(f.boot.apiKey.key, compReview.operationId, compReview.fingerprint);
      expect(removal.statusCode, removal.body).toBe(201);
      expect(removal.json()).toMatchObject({
        action: 'configuration.compensate',
        status: 'completed',
        originalOperationId: review.operationId,
      });
      expect(await writes(f)).toMatchObject({ versions: 0, rules: 0, receipts: 2 });
      expect((await status(f.boot.apiKey.key, review.operationId)).json()).toEqual({ ...receipt, replayed: true, historical: true });
    },
  },
];

describe('States and transitions: copy and compensation rows', () => {
  it.each(transitions)('$from --[$trigger; $condition]--> $next', async ({ run }) => {
    await run(await fixture());
  });
});

describe('compensation', () => {
  it('reviews the reversal of a copy and removes exactly what it created, once', async () => {
    const f = await fixture();
    // A draft registered on the destination outside the copy stays.
    const own = await registerDraft(ctx, f.boot.apiKey.key, f.live.connectionId, openApiRegistration('live-only', ordersOpenApi(3)));
    const { review, receipt } = await copied(f);
    const res = await previewCompensation(f.boot.apiKey.key, review.operationId);
    expect(res.statusCode, res.body).toBe(201);
    expect(res.headers['cache-control']).toBe('no-store');
    const comp = res.json();
    expect(comp).toMatchObject({
      action: 'configuration.compensate',
      status: 'previewed',
      originalOperationId: review.operationId,
      copiedArtifacts: receipt.copiedArtifacts,
    });
    expect(comp.operationId).toMatch(/^concomp_[0-9a-z]{26}$/);
    expect(comp.fingerprint).toMatch(FINGERPRINT);
    expect(comp.fingerprint).not.toBe(review.fingerprint);
    expect(comp.snapshot.destination.revision).toBe(receipt.revision);
    expect(Math.abs(Date.parse(comp.expiresAt) - Date.now() - TEN_MINUTES)).toBeLessThan(5_000);
    expect((await status(f.boot.apiKey.key, comp.operationId)).json()).toEqual(comp);

    const idempotencyKey = newIdempotencyKey();
    const removal = await apply(f.boot.apiKey.key, comp.operationId, comp.fingerprint, idempotencyKey);
    expect(removal.statusCode, removal.body).toBe(201);
    const after = await writes(f);
    expect(removal.json()).toEqual(
      firstReceipt(f, comp, {
        action: 'configuration.compensate',
        revision: after.destination.revision,
        originalOperationId: review.operationId,
        copiedArtifacts: receipt.copiedArtifacts,
      }),
    );
    expect(BigInt(after.destination.revision)).toBeGreaterThan(BigInt(receipt.revision));
    expect(after).toMatchObject({ versions: 1, rules: 0, receipts: 2, audit: 2 });
    expect(await countRows(ctx, 'contract_versions', 'id = $1', [own.contract.id])).toBe(1);

    // Retry and status answer the original removal receipt; nothing is removed twice.
    const retry = await apply(f.boot.apiKey.key, comp.operationId, comp.fingerprint, idempotencyKey);
    expect(retry.statusCode).toBe(200);
    expect(retry.json()).toEqual({ ...removal.json(), replayed: true });
    expect((await status(f.boot.apiKey.key, comp.operationId)).json()).toEqual({ ...removal.json(), replayed: true });
    expect(await writes(f)).toEqual(after);
    // The copy receipt stays readable, now historical; it cannot be compensated twice.
    expect((await status(f.boot.apiKey.key, review.operationId)).json()).toEqual({ ...receipt, replayed: true, historical: true });
    expectError(await previewCompensation(f.boot.apiKey.key, review.operationId), 409, 'configuration_compensation_unavailable');
  });

  /** [label, the destination change after the copy, what the destination had before the copy]. */
  const unavailable: [string, (f: Fixture, receipt: ConfigurationReceipt) => Promise<void>, ((f: Fixture) => Promise<void>)?][] = [
    [
      'after a credential issue on the destination',
      async (f) => {
        await issueCredential(f.boot.apiKey.key, f.live.connectionId);
      },
    ],
    [
      'after a credential rotation on the destination',
      async (f) => {
        await credentialMutation(f.boot.apiKey.key, f.live.connectionId, 'rotate');
      },
      async (f) => {
        await issueCredential(f.boot.apiKey.key, f.live.connectionId);
      },
    ],
    [
      'after a copied rule was enabled and then disabled',
      async (f, receipt) => {
        const ruleId = receipt.copiedArtifacts.rules[1].destinationRuleId;
        await patchRule(f.boot.apiKey.key, f.live.connectionId, ruleId, { enabled: true });
        await patchRule(f.boot.apiKey.key, f.live.connectionId, ruleId, { enabled: false });
      },
    ],
    [
      'after a copied contract was activated',
      async (f, receipt) => {
        await activateOk(ctx, f.boot.apiKey.key, f.live.connectionId, receipt.copiedArtifacts.contracts[0].destinationContractVersionId, {
          expectedActiveContractVersionId: null,
          reason: 'promote',
        });
      },
    ],
    [
      'when an incident names a copied contract version',
      async (f, receipt) => {
        await insertIncident(f, { contractVersionId: receipt.copiedArtifacts.contracts[1].destinationContractVersionId });
      },
    ],
    [
      'when an incident names a copied rule',
      async (f, receipt) => {
        await insertIncident(f, { ruleId: receipt.copiedArtifacts.rules[0].destinationRuleId });
      },
    ],
  ];

  async function insertIncident(f: Fixture, ref: { contractVersionId?: string; ruleId?: string }): Promise<void> {
    await ctx.deps.pool.query(
      `INSERT INTO incidents (id, connection_id, workspace_id, integration_id, environment_id, mode, operation_key, kind, status, resolution_state,
                              contract_version_id, summary, affected_records, first_observed_at, last_observed_at, created_at, updated_at, rule_id)
       VALUES ($1, $2, $3, $4, $5, 'live', 'POST /v1/orders:response:201', 'schema-drift', 'open', 'active', $6, 'drift', 1, now(), now(), now(), now(), $7)`,
      [
        newId('inc_'),
        f.live.connectionId,
        f.boot.workspace.id,
        f.live.integrationId,
        f.live.environmentId,
        ref.contractVersionId ?? null,
        ref.ruleId ?? null,
      ],
    );
  }

  it.each(unavailable)('is unavailable %s: preview and apply answer 409 and remove nothing', async (_label, change, beforeCopy) => {
    const f = await fixture();
    await beforeCopy?.(f);
    const { review, receipt } = await copied(f);
    // Available until the change; a review taken before it cannot be applied after it either.
    const available = await previewCompensation(f.boot.apiKey.key, review.operationId);
    expect(available.statusCode, available.body).toBe(201);
    const comp = available.json();
    await change(f, receipt);
    const before = await writes(f);
    expectError(await previewCompensation(f.boot.apiKey.key, review.operationId), 409, 'configuration_compensation_unavailable');
    await expectNothingWritten(
      f,
      before,
      await apply(f.boot.apiKey.key, comp.operationId, comp.fingerprint),
      409,
      'configuration_compensation_unavailable',
    );
  });

  it('needs a completed copy of the same key', async () => {
    const f = await fixture();
    const pending = await reviewed(f);
    expectError(await previewCompensation(f.boot.apiKey.key, pending.operationId), 409, 'configuration_compensation_unavailable');
    const { review } = await copied(f);
    const comp = (await previewCompensation(f.boot.apiKey.key, review.operationId)).json();
    // A compensation is not itself compensable; other keys and unknown ids are not found.
    expectError(await previewCompensation(f.boot.apiKey.key, comp.operationId), 404, 'operation_not_found');
    const sibling = await bootstrapWorkspace(ctx, { email: f.boot.user.email });
    expectError(await previewCompensation(sibling.apiKey.key, review.operationId), 404, 'operation_not_found');
    expectError(await previewCompensation(f.boot.apiKey.key, newId('concopy_')), 404, 'operation_not_found');
    expectError(await previewCompensation(f.boot.apiKey.key, 'concopy_nope'), 404, 'operation_not_found');
  });
});

describe('historical on a completed copy receipt (02: computed from current state)', () => {
  /** [what happened after the copy, whether the receipt is historical then, the change]. */
  const afterCopy: [string, boolean, (f: Fixture) => Promise<void>][] = [
    ['nothing', false, async () => undefined],
    [
      'the source changed (a rule created there)',
      false,
      async (f) => {
        await createRuleWithKey(ctx, f.boot.apiKey.key, f.sandbox.connectionId, ruleDefinition(8));
      },
    ],
    [
      'the destination revision moved (a rule created there)',
      true,
      async (f) => {
        await createRuleWithKey(ctx, f.boot.apiKey.key, f.live.connectionId, ruleDefinition(8));
      },
    ],
    [
      'the destination connection was deleted',
      true,
      async (f) => {
        await ctx.deps.pool.query('UPDATE connections SET deleted_at = now() WHERE id = $1', [f.live.connectionId]);
      },
    ],
    [
      "the destination's Integration was deleted",
      true,
      async (f) => {
        await ctx.deps.pool.query('UPDATE integrations SET deleted_at = now() WHERE id = $1', [f.live.integrationId]);
      },
    ],
  ];

  it.each(afterCopy)('when %s, status and the identical retry say historical %s', async (_label, historical, change) => {
    const f = await fixture();
    const { review, receipt, idempotencyKey } = await copied(f);
    expect((await status(f.boot.apiKey.key, review.operationId)).json()).toEqual({ ...receipt, replayed: true, historical: false });
    await change(f);
    const read = await status(f.boot.apiKey.key, review.operationId);
    expect(read.statusCode, read.body).toBe(200);
    expect(read.json()).toEqual({ ...receipt, replayed: true, historical });
    const before = await writes(f);
    const retry = await apply(f.boot.apiKey.key, review.operationId, review.fingerprint, idempotencyKey);
    expect(retry.statusCode, retry.body).toBe(200);
    expect(retry.json()).toEqual({ ...receipt, replayed: true, historical });
    expect(await writes(f)).toEqual(before);
  });
});

describe('02 Limits: selection arrays of at most 100 identifiers each', () => {
  it('accepts exactly 100 contract ids and 100 rule ids of the source and copies them; 101 of either is refused', async () => {
    const boot = await bootstrapWorkspace(ctx);
    const { sandbox, live } = await insertConnections(ctx, boot, ['sandbox', 'live']);
    const source = sandbox.connectionId;
    const all = await seedSelectableArtifacts(ctx, boot.apiKey.key, source, SELECTION_LIMIT + 1);
    // The last 100 of each: every id of the 101 is selectable on its own, so only the count refuses.
    const contractVersionIds = all.contractVersionIds.slice(1);
    const ruleIds = all.ruleIds.slice(1);
    const reviews = () => countRows(ctx, 'configuration_reviews', 'workspace_id = $1', [boot.workspace.id]);
    for (const body of [
      { sourceConnectionId: source, contractVersionIds: all.contractVersionIds, ruleIds },
      { sourceConnectionId: source, contractVersionIds, ruleIds: all.ruleIds },
      { sourceConnectionId: source, contractVersionIds: all.contractVersionIds },
      { sourceConnectionId: source, ruleIds: all.ruleIds },
    ]) {
      expectError(await previewCopy(boot.apiKey.key, live.connectionId, body), 400, 'configuration_selection_invalid');
    }
    expect(await reviews()).toBe(0);

    const res = await previewCopy(boot.apiKey.key, live.connectionId, { sourceConnectionId: source, contractVersionIds, ruleIds });
    expect(res.statusCode, res.body).toBe(201);
    const review = res.json<ConfigurationReview>();
    expect(review.snapshot.contracts.map((c) => c.sourceContractVersionId)).toEqual(contractVersionIds);
    expect(review.snapshot.rules.map((r) => r.sourceRuleId)).toEqual(ruleIds);
    const applied = await apply(boot.apiKey.key, review.operationId, review.fingerprint);
    expect(applied.statusCode, applied.body).toBe(201);
    const { copiedArtifacts } = applied.json<ConfigurationReceipt>();
    expect(copiedArtifacts.contracts.map((c) => c.sourceContractVersionId)).toEqual(contractVersionIds);
    expect(copiedArtifacts.rules.map((r) => r.sourceRuleId)).toEqual(ruleIds);
    expect(await countRows(ctx, 'contract_versions', "connection_id = $1 AND lifecycle_status = 'draft'", [live.connectionId])).toBe(
      SELECTION_LIMIT,
    );
    expect(await countRows(ctx, 'reconciliation_rules', 'connection_id = $1 AND NOT enabled', [live.connectionId])).toBe(SELECTION_LIMIT);
  });
});

describe('refused applies write nothing', () => {
  it.each(apiKeyAuthorityLosses('configuration_preview_stale'))('when %s during apply', async (_label, lose, statusCode, error) => {
    const f = await fixture();
    const review = await reviewed(f);
    const before = await writes(f);
    const kinds: string[] = [];
    ctx.hooks.beforeAuthorityRecheck = async (kind) => {
      kinds.push(kind);
      await lose(ctx, f.boot);
    };
    const res = await apply(f.boot.apiKey.key, review.operationId, review.fingerprint);
    expect(kinds).toEqual(['configuration.copy']);
    await expectNothingWritten(f, before, res, statusCode, error);
  });

  it('when the review expires during apply', async () => {
    const f = await fixture();
    const review = await reviewed(f);
    const before = await writes(f);
    ctx.hooks.beforeAuthorityRecheck = async () => {
      await advanceClock(ctx, TEN_MINUTES);
    };
    await expectNothingWritten(
      f,
      before,
      await apply(f.boot.apiKey.key, review.operationId, review.fingerprint),
      409,
      'configuration_preview_expired',
    );
    expect((await status(f.boot.apiKey.key, review.operationId)).json().status).toBe('expired');
  });

  it('when a compensation loses its authority during apply', async () => {
    const f = await fixture();
    const { review } = await copied(f);
    const comp = (await previewCompensation(f.boot.apiKey.key, review.operationId)).json();
    const before = await writes(f);
    ctx.hooks.beforeAuthorityRecheck = async () => {
      await ctx.deps.pool.query('UPDATE api_keys SET revoked_at = now() WHERE id = $1', [f.boot.apiKey.id]);
    };
    await expectNothingWritten(f, before, await apply(f.boot.apiKey.key, comp.operationId, comp.fingerprint), 403, 'insufficient_scope');
  });

  it('when the destination connection or its Integration was deleted after the review', async () => {
    const f = await fixture();
    const review = await reviewed(f);
    await ctx.deps.pool.query('UPDATE connections SET deleted_at = now() WHERE id = $1', [f.live.connectionId]);
    await expectApplyRefused(f, review, 404, 'connection_not_found');
    await ctx.deps.pool.query('UPDATE integrations SET deleted_at = now() WHERE id = $1', [f.live.integrationId]);
    await expectApplyRefused(f, review, 404, 'integration_not_found');
  });
});

describe('the error table of Configuration copy and compensation', () => {
  it('400 invalid_configuration_request: unknown and mistyped body members, unknown query members', async () => {
    const f = await fixture();
    const source = f.sandbox.connectionId;
    const bodies = [
      {},
      { sourceConnectionId: source, contractVersionIds: f.versions, tenantId: 'ten_x' },
      { sourceConnectionId: source, contractVersionIds: f.versions[0] },
      { sourceConnectionId: source, ruleIds: [1] },
      { sourceConnectionId: 7, ruleIds: f.rules },
      { sourceConnectionId: source, ruleIds: f.rules, mode: 'live' },
    ];
    for (const body of bodies)
      expectError(await previewCopy(f.boot.apiKey.key, f.live.connectionId, body), 400, 'invalid_configuration_request');
    expectError(
      await callWithKey(ctx, f.boot.apiKey.key, 'POST', `${previewUrl(f.live.connectionId)}?dryRun=1`, { body: fullSelection(f) }),
      400,
      'invalid_configuration_request',
    );

    const review = await reviewed(f);
    const before = await writes(f);
    for (const body of [
      {},
      { approvalFingerprint: 'sha256:abc' },
      { approvalFingerprint: review.fingerprint, replay: true },
      { approvalFingerprint: review.fingerprint.toUpperCase() },
    ]) {
      const res = await callWithKey(ctx, f.boot.apiKey.key, 'POST', `${operationUrl(review.operationId)}/apply`, {
        body,
        idempotencyKey: newIdempotencyKey(),
      });
      await expectNothingWritten(f, before, res, 400, 'invalid_configuration_request');
    }
    expectError(
      await callWithKey(ctx, f.boot.apiKey.key, 'GET', `${operationUrl(review.operationId)}?verbose=1`),
      400,
      'invalid_configuration_request',
    );
    expectError(await previewCompensation(f.boot.apiKey.key, review.operationId, { reason: 'oops' }), 400, 'invalid_configuration_request');
  });

  it('400 idempotency_key_required on apply, before the body', async () => {
    const f = await fixture();
    const review = await reviewed(f);
    const before = await writes(f);
    for (const idempotencyKey of [undefined, 'short', 'has space inside', 'x'.repeat(129)]) {
      const res = await callWithKey(ctx, f.boot.apiKey.key, 'POST', `${operationUrl(review.operationId)}/apply`, {
        body: { bogus: true },
        ...(idempotencyKey ? { idempotencyKey } : {}),
      });
      await expectNothingWritten(f, before, res, 400, 'idempotency_key_required');
    }
  });

  it("400 configuration_selection_invalid: empty, duplicate, over 100, malformed, or not the source's", async () => {
    const f = await fixture();
    const stranger = await fixture();
    const ownDraft = await registerDraft(ctx, f.boot.apiKey.key, f.live.connectionId, openApiRegistration('live-only', ordersOpenApi(4)));
    const source = f.sandbox.connectionId;
    const selections = [
      { sourceConnectionId: source },
      { sourceConnectionId: source, contractVersionIds: [], ruleIds: [] },
      { sourceConnectionId: source, contractVersionIds: [f.versions[0], f.versions[0]] },
      { sourceConnectionId: source, ruleIds: [f.rules[1], f.rules[0], f.rules[1]] },
      { sourceConnectionId: source, contractVersionIds: [f.versions[0], ...Array.from({ length: 100 }, () => newId('cv_'))] },
      { sourceConnectionId: source, ruleIds: Array.from({ length: 101 }, () => newId('rule_')) },
      { sourceConnectionId: source, contractVersionIds: ['cv_nope'] },
      { sourceConnectionId: source, ruleIds: [f.versions[0]] },
      { sourceConnectionId: source, contractVersionIds: [ownDraft.contract.id] },
      { sourceConnectionId: source, contractVersionIds: [stranger.versions[0]] },
      { sourceConnectionId: source, ruleIds: [stranger.rules[0]] },
      { sourceConnectionId: source, contractVersionIds: [newId('cv_')] },
    ];
    const before = await countRows(ctx, 'configuration_reviews', 'workspace_id = $1', [f.boot.workspace.id]);
    for (const body of selections)
      expectError(await previewCopy(f.boot.apiKey.key, f.live.connectionId, body), 400, 'configuration_selection_invalid');
    expect(await countRows(ctx, 'configuration_reviews', 'workspace_id = $1', [f.boot.workspace.id])).toBe(before);
  });

  it('400 configuration_scope_mismatch: the source must be the other mode connection of the same Integration', async () => {
    const f = await fixture();
    const stranger = await fixture();
    const { sandbox: otherIntegration } = await insertConnections(ctx, f.boot, ['sandbox']);
    for (const sourceConnectionId of [
      f.live.connectionId,
      otherIntegration.connectionId,
      stranger.sandbox.connectionId,
      f.sandbox.integrationId,
      newId('int_'),
      'int_nope',
    ]) {
      expectError(
        await previewCopy(f.boot.apiKey.key, f.live.connectionId, { sourceConnectionId, ruleIds: f.rules }),
        400,
        'configuration_scope_mismatch',
      );
    }
    // Copy works in either direction between the two modes.
    const back = await createRuleWithKey(ctx, f.boot.apiKey.key, f.live.connectionId, ruleDefinition(7));
    expect(
      (await previewCopy(f.boot.apiKey.key, f.sandbox.connectionId, { sourceConnectionId: f.live.connectionId, ruleIds: [back.rule.id] }))
        .statusCode,
    ).toBe(201);
  });

  it('401 unauthenticated and 403 insufficient_scope on every route', async () => {
    const f = await fixture();
    const review = await reviewed(f);
    const reader = await bootstrapWorkspace(ctx, { email: f.boot.user.email, scopes: ['integrations:read', 'contracts:read'] });
    const before = await writes(f);
    for (const key of [null, `svc_api_${'x'.repeat(43)}`]) {
      expectError(await previewCopy(key, f.live.connectionId, fullSelection(f)), 401, 'unauthenticated');
      await expectNothingWritten(f, before, await apply(key, review.operationId, review.fingerprint), 401, 'unauthenticated');
      expectError(await status(key, review.operationId), 401, 'unauthenticated');
      expectError(await previewCompensation(key, review.operationId), 401, 'unauthenticated');
    }
    expectError(await previewCopy(reader.apiKey.key, f.live.connectionId, fullSelection(f)), 403, 'insufficient_scope');
    await expectNothingWritten(
      f,
      before,
      await apply(reader.apiKey.key, review.operationId, review.fingerprint),
      403,
      'insufficient_scope',
    );
    expectError(await status(reader.apiKey.key, review.operationId), 403, 'insufficient_scope');
    expectError(await previewCompensation(reader.apiKey.key, review.operationId), 403, 'insufficient_scope');
    // A revoked review key can neither apply nor recover: authentication fails first.
    await ctx.deps.pool.query('UPDATE api_keys SET revoked_at = now() WHERE id = $1', [f.boot.apiKey.id]);
    await expectNothingWritten(f, before, await apply(f.boot.apiKey.key, review.operationId, review.fingerprint), 401, 'unauthenticated');
    expectError(await status(f.boot.apiKey.key, review.operationId), 401, 'unauthenticated');
  });

  it('404 connection_not_found and operation_not_found, foreign ids included', async () => {
    const f = await fixture();
    const stranger = await fixture();
    for (const destination of [stranger.live.connectionId, f.live.integrationId, newId('int_'), 'int_nope']) {
      expectError(await previewCopy(f.boot.apiKey.key, destination, fullSelection(f)), 404, 'connection_not_found');
    }
    const review = await reviewed(f);
    const before = await writes(f);
    for (const operationId of [newId('concopy_'), newId('concomp_'), newId('ruleop_'), 'concopy_nope']) {
      expectError(await status(f.boot.apiKey.key, operationId), 404, 'operation_not_found');
      await expectNothingWritten(f, before, await apply(f.boot.apiKey.key, operationId, review.fingerprint), 404, 'operation_not_found');
    }
    // Another workspace's key, and a sibling key of the same workspace, do not see the review.
    const sibling = await bootstrapWorkspace(ctx, { email: f.boot.user.email });
    for (const key of [stranger.boot.apiKey.key, sibling.apiKey.key]) {
      expectError(await status(key, review.operationId), 404, 'operation_not_found');
      await expectNothingWritten(f, before, await apply(key, review.operationId, review.fingerprint), 404, 'operation_not_found');
    }
  });

  it('409 configuration_destination_conflict: a declared version or rule pair the destination already has', async () => {
    const f = await fixture();
    await registerDraft(ctx, f.boot.apiKey.key, f.live.connectionId, openApiRegistration('2024-02', ordersOpenApi(5)));
    expectError(
      await previewCopy(f.boot.apiKey.key, f.live.connectionId, {
        sourceConnectionId: f.sandbox.connectionId,
        contractVersionIds: f.versions,
      }),
      409,
      'configuration_destination_conflict',
    );
    expect(
      (
        await previewCopy(f.boot.apiKey.key, f.live.connectionId, {
          sourceConnectionId: f.sandbox.connectionId,
          contractVersionIds: [f.versions[0]],
        })
      ).statusCode,
    ).toBe(201);
    await createRuleWithKey(ctx, f.boot.apiKey.key, f.live.connectionId, { ...ruleDefinition(1), maxDelayMs: 5_000 });
    expectError(
      await previewCopy(f.boot.apiKey.key, f.live.connectionId, { sourceConnectionId: f.sandbox.connectionId, ruleIds: f.rules }),
      409,
      'configuration_destination_conflict',
    );
  });

  it('409 configuration_snapshot_too_large over 1 MiB', async () => {
    const boot = await bootstrapWorkspace(ctx);
    const { sandbox, live } = await insertConnections(ctx, boot, ['sandbox', 'live']);
    // Each document stays under the 1 MiB body limit; its schema appears in two operations.
    const big = (n: number) => {
      const document = structuredClone(ordersOpenApi(0)) as { components: { schemas: { Order: { properties: Record<string, unknown> } } } };
      document.components.schemas.Order.properties.note = {
        type: 'string',
        enum: Array.from({ length: 3_000 }, (_, i) => `${n}-${i}-${'x'.repeat(90)}`),
      };
      return document;
    };
    const one = await registerDraft(ctx, boot.apiKey.key, sandbox.connectionId, openApiRegistration('big-1', big(1)));
    const two = await registerDraft(ctx, boot.apiKey.key, sandbox.connectionId, openApiRegistration('big-2', big(2)));
    const before = await countRows(ctx, 'configuration_reviews', 'workspace_id = $1', [boot.workspace.id]);
    expectError(
      await previewCopy(boot.apiKey.key, live.connectionId, {
        sourceConnectionId: sandbox.connectionId,
        contractVersionIds: [one.contract.id, two.contract.id],
      }),
      409,
      'configuration_snapshot_too_large',
    );
    expect(await countRows(ctx, 'configuration_reviews', 'workspace_id = $1', [boot.workspace.id])).toBe(before);
    expect(
      (
        await previewCopy(boot.apiKey.key, live.connectionId, {
          sourceConnectionId: sandbox.connectionId,
          contractVersionIds: [one.contract.id],
        })
      ).statusCode,
    ).toBe(201);
  });

  it('409 workspace_modes_unavailable for a legacy workspace, 503 while writes are paused', async () => {
    const legacy = await bootstrapWorkspace(ctx, { legacy: true });
    const id = newId('int_');
    expectError(
      await previewCopy(legacy.apiKey.key, id, { sourceConnectionId: newId('int_'), ruleIds: [newId('rule_')] }),
      409,
      'workspace_modes_unavailable',
    );
    expectError(await apply(legacy.apiKey.key, newId('concopy_'), fingerprint({})), 409, 'workspace_modes_unavailable');
    expectError(await status(legacy.apiKey.key, newId('concopy_')), 409, 'workspace_modes_unavailable');
    expectError(await previewCompensation(legacy.apiKey.key, newId('concopy_')), 409, 'workspace_modes_unavailable');
    expect(await countRows(ctx, 'configuration_reviews', 'workspace_id = $1', [legacy.workspace.id])).toBe(0);

    const f = await fixture();
    await setWritePause(ctx.deps.redis, true);
    try {
      const res = await previewCopy(f.boot.apiKey.key, f.live.connectionId, fullSelection(f));
      expectError(res, 503, 'mode_cutover_write_paused');
      expect(res.headers['retry-after']).toBe('1');
    } finally {
      await setWritePause(ctx.deps.redis, false);
    }
  });

  it(`429 rate_limited after ${PREVIEWS_PER_MINUTE} previews a minute, copy and compensation together; refused previews do not count`, async () => {
    const f = await fixture();
    const first = await reviewed(f, { sourceConnectionId: f.sandbox.connectionId, ruleIds: [f.rules[0]] });
    expect((await apply(f.boot.apiKey.key, first.operationId, first.fingerprint)).statusCode).toBe(201);
    expectError(
      await previewCopy(f.boot.apiKey.key, f.live.connectionId, { sourceConnectionId: f.sandbox.connectionId }),
      400,
      'configuration_selection_invalid',
    );
    for (let n = 2; n <= PREVIEWS_PER_MINUTE; n++) {
      const res =
        n % 2 === 0
          ? await previewCompensation(f.boot.apiKey.key, first.operationId)
          : await previewCopy(f.boot.apiKey.key, f.live.connectionId, {
              sourceConnectionId: f.sandbox.connectionId,
              contractVersionIds: [f.versions[0]],
            });
      expect(res.statusCode, `preview ${n}: ${res.body}`).toBe(201);
    }
    const reviews = await countRows(ctx, 'configuration_reviews', 'workspace_id = $1', [f.boot.workspace.id]);
    const limitedCopy = await previewCopy(f.boot.apiKey.key, f.live.connectionId, {
      sourceConnectionId: f.sandbox.connectionId,
      contractVersionIds: [f.versions[1]],
    });
    for (const limited of [await previewCompensation(f.boot.apiKey.key, first.operationId), limitedCopy]) {
      expectError(limited, 429, 'rate_limited');
      const retryAfter = Number(limited.headers['retry-after']);
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(60);
    }
    expect(await countRows(ctx, 'configuration_reviews', 'workspace_id = $1', [f.boot.workspace.id])).toBe(reviews);
    // Another workspace has its own minute.
    const other = await fixture();
    const fresh = await previewCopy(other.boot.apiKey.key, other.live.connectionId, fullSelection(other));
    expect(fresh.statusCode, fresh.body).toBe(201);
  });
});
