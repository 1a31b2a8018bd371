import { createHash } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { fingerprint } from '../shared/fingerprint.js';
import { hasIdForm, newId } from '../shared/ids.js';
import type { CliScopeSuffix } from '../management/auth/scopes.js';
import { loginCli, serveOnLoopback } from './helpers/cli.js';
import { addWorkspaceMember, createConsoleUser } from './helpers/consoleUsers.js';
import {
  advanceClock,
  callWithSession,
  createTestContext,
  expectError,
  newIdempotencyKey,
  resetClockAndHooks,
  type TestContext,
} from './helpers/context.js';
import { ordersOpenApi } from './helpers/contracts.js';
import { createIntegration } from './helpers/integrations.js';
import {
  activateAnotherVersion,
  callRepairRoute,
  createRepairWorkspace,
  insertProposal,
  narrowedAccessToken,
  repairWriteState,
  type InsertedProposal,
  type ProposalInput,
  type RepairWorkspace,
} from './helpers/repairDecisions.js';

// 03 Reviewed repairs, export: an approved, validated repair as a bundle of files in a
// `repair.export` receipt, with every refusal in the order of the route. Each test works in a
// workspace of its own (repair admissions are 5 per actor and minute).

let ctx: TestContext;
let baseUrl: string;
beforeAll(async () => {
  ctx = await createTestContext();
  baseUrl = await serveOnLoopback(ctx);
});
afterAll(async () => {
  await ctx.close();
});
afterEach(async () => {
  await resetClockAndHooks(ctx);
});

const exportUrl = (connectionId: string, proposalId: string) => `/v1/cli/connections/${connectionId}/repair-proposals/${proposalId}/export`;
const RATIONALE = 'The vendor added coupons to order responses in March.';

function exportRepair(
  ws: RepairWorkspace,
  proposalId: string,
  options: { body?: unknown; key?: string | null; token?: string; connectionId?: string } = {},
) {
  return callRepairRoute(ctx, options.token ?? ws.cli.accessToken, 'POST', exportUrl(options.connectionId ?? ws.connectionId, proposalId), {
    workspace: ws.boot.workspace.slug,
    body: 'body' in options ? options.body : {},
    ...(options.key === null ? {} : { idempotencyKey: options.key ?? newIdempotencyKey() }),
  });
}

/** Asserts an error answer and that the request wrote nothing. */
async function expectRefused(
  ws: RepairWorkspace,
  proposalId: string,
  request: () => ReturnType<typeof callRepairRoute>,
  status: number,
  error: string,
): Promise<void> {
  const before = await repairWriteState(ctx, ws.boot.workspace.id, proposalId);
  expectError(await request(), status, error);
  expect(await repairWriteState(ctx, ws.boot.workspace.id, proposalId)).toEqual(before);
}

/** Decides a proposal through the routes: preview, then apply. */
async function decide(ws: RepairWorkspace, proposalId: string, decision: 'approved' | 'rejected' = 'approved'): Promise<string> {
  const preview = await callRepairRoute(
    ctx,
    ws.cli.accessToken,
    'POST',
    `/v1/cli/connections/${ws.connectionId}/repair-proposals/${proposalId}/decision-preview`,
    { workspace: ws.boot.workspace.slug, body: { decision, rationale: RATIONALE } },
  );
  expect(preview.statusCode, preview.body).toBe(201);
  const { operationId, approvalFingerprint } = preview.json();
  const applied = await callRepairRoute(ctx, ws.cli.accessToken, 'POST', `/v1/cli/operations/${operationId}/apply`, {
    workspace: ws.boot.workspace.slug,
    body: { approvalFingerprint },
    idempotencyKey: newIdempotencyKey(),
  });
  expect(applied.statusCode, applied.body).toBe(200);
  return applied.json().data.approvalRecordId;
}

async function approvedProposal(ws: RepairWorkspace, input: ProposalInput = {}): Promise<InsertedProposal & { approvalId: string }> {
  const proposal = await insertProposal(ctx, ws, input);
  return { ...proposal, approvalId: await decide(ws, proposal.proposalId) };
}

async function workspaceWithApproval() {
  const ws = await createRepairWorkspace(ctx, baseUrl);
  return { ws, proposal: await approvedProposal(ws) };
}

/** The orders document without the operation the repairs patch (its 201 response is gone). */
function ordersWithoutCreatedResponse(): Record<string, unknown> {
  const document = ordersOpenApi();
  const post = (document.paths as Record<string, Record<string, Record<string, Record<string, unknown>>>>)['/v1/orders'].post;
  delete post.responses['201'];
  post.responses['200'] = { description: 'accepted', content: { 'application/json': { schema: { type: 'object' } } } };
  return document;
}

const ALL_SCOPES_BUT_EXPORT: CliScopeSuffix[] = ['incidents:read', 'repairs:read', 'repairs:create', 'repairs:approve', 'replays:read'];

describe('export', () => {
  it('answers 200 with the bundle in a repair.export receipt, and replays it after the contract changed', async () => {
    const { ws, proposal } = await workspaceWithApproval();
    const key = newIdempotencyKey();
    const res = await exportRepair(ws, proposal.proposalId, { key });
    expect(res.statusCode, res.body).toBe(200);
    const receipt = res.json();
    expect(hasIdForm(receipt.operationId, 'cliop_')).toBe(true);
    expect(receipt).toMatchObject({
      schemaVersion: 1,
      action: 'repair.export',
      targetId: proposal.proposalId,
      connectionId: ws.connectionId,
      status: 'completed',
      data: { marker: 'service-repair-export/1' },
      replayed: false,
    });
    expect(receipt.data.files.map((file: { name: string }) => file.name)).toEqual(
      expect.arrayContaining(['repair.json', 'REPAIR.md', 'repair.ts']),
    );
    for (const file of receipt.data.files) {
      expect(file.sha256).toBe(createHash('sha256').update(file.content, 'utf8').digest('hex'));
    }
    expect(receipt.data.filename).toContain(proposal.proposalId);
    // 03: reviewer identity is omitted from CLI exports.
    expect(JSON.stringify(receipt)).not.toContain(ws.cli.clientId);
    expect(JSON.stringify(receipt)).not.toContain(ws.boot.user.id);
    const operation = await ctx.deps.pool.query(
      `SELECT o.kind, o.user_id, o.cli_client_id, o.auth_epoch, w.auth_epoch AS workspace_epoch
         FROM operations o JOIN workspaces w ON w.id = o.workspace_id WHERE o.id = $1`,
      [receipt.operationId],
    );
    expect(operation.rows[0]).toMatchObject({ kind: 'repair.export', user_id: ws.boot.user.id, cli_client_id: ws.cli.clientId });
    expect(operation.rows[0].auth_epoch).toBe(operation.rows[0].workspace_epoch);
    const audit = await ctx.deps.pool.query(
      "SELECT target_id, metadata FROM audit_events WHERE workspace_id = $1 AND action = 'repair.export'",
      [ws.boot.workspace.id],
    );
    expect(audit.rows).toEqual([
      {
        target_id: proposal.proposalId,
        metadata: {
          operationId: receipt.operationId,
          connectionId: ws.connectionId,
          filename: receipt.data.filename,
          fingerprint: receipt.data.fingerprint,
          actorClientId: ws.cli.clientId,
        },
      },
    ]);

    // `{"target": "files"}` is the same request as `{}`: the same key replays.
    const state = await repairWriteState(ctx, ws.boot.workspace.id, proposal.proposalId);
    const replay = await exportRepair(ws, proposal.proposalId, { key, body: { target: 'files' } });
    expect(replay.statusCode, replay.body).toBe(200);
    expect(replay.json()).toEqual({ ...receipt, replayed: true });
    expect(await repairWriteState(ctx, ws.boot.workspace.id, proposal.proposalId)).toEqual(state);

    // The contract changes: a new export is refused, the original one is still what it was.
    await activateAnotherVersion(ctx, ws, '2.0.0', ordersOpenApi(1));
    expectError(await exportRepair(ws, proposal.proposalId), 409, 'repair_export_fingerprint_mismatch');
    expect((await exportRepair(ws, proposal.proposalId, { key })).json()).toEqual({ ...receipt, replayed: true });
    const read = await callRepairRoute(ctx, ws.cli.accessToken, 'GET', `/v1/cli/operations/${receipt.operationId}`, {
      workspace: ws.boot.workspace.slug,
    });
    expect(read.statusCode, read.body).toBe(200);
    expect(read.json()).toEqual({ ...receipt, replayed: true });

    // Another epoch or client cannot claim the receipt; another scope cannot read it.
    const exportLess = await narrowedAccessToken(ctx, ws.cli, ALL_SCOPES_BUT_EXPORT);
    const readWith = (token: string) =>
      callRepairRoute(ctx, token, 'GET', `/v1/cli/operations/${receipt.operationId}`, { workspace: ws.boot.workspace.slug });
    expectError(await readWith(exportLess), 403, 'insufficient_scope');
    const otherClient = await loginCli(baseUrl, ws.boot.sessionToken);
    expectError(await readWith(otherClient.accessToken), 404, 'operation_not_found');
    await expectRefused(
      ws,
      proposal.proposalId,
      () => exportRepair(ws, proposal.proposalId, { key, token: otherClient.accessToken }),
      409,
      'idempotency_conflict',
    );
    for (const action of ['archive', 'restore']) {
      await callWithSession(ctx, ws.boot.sessionToken, 'POST', `/workspaces/${ws.boot.workspace.slug}/${action}`);
    }
    await expectRefused(ws, proposal.proposalId, () => exportRepair(ws, proposal.proposalId, { key }), 403, 'authorization_changed');
    expectError(await readWith(ws.cli.accessToken), 403, 'authorization_changed');
  });

  it('lets an admin export; each new key is a new export', async () => {
    const { ws, proposal } = await workspaceWithApproval();
    const member = await createConsoleUser(ctx);
    await addWorkspaceMember(ctx, ws.boot.workspace.id, member.userId, 'admin');
    const admin = await loginCli(baseUrl, member.sessionToken);
    const first = await exportRepair(ws, proposal.proposalId, { token: admin.accessToken });
    expect(first.statusCode, first.body).toBe(200);
    const second = await exportRepair(ws, proposal.proposalId);
    expect(second.statusCode, second.body).toBe(200);
    expect(second.json().operationId).not.toBe(first.json().operationId);
    // The same inputs give the same bundle.
    expect(second.json().data).toEqual(first.json().data);
  });

  it('admits 5 exports per actor and UTC minute, then answers 429 workload_rate_limited', async () => {
    const { ws, proposal } = await workspaceWithApproval();
    await advanceClock(ctx, 60_000 - (ctx.deps.clock.nowMs() % 60_000) + 500);
    for (let i = 0; i < 5; i++) expect((await exportRepair(ws, proposal.proposalId)).statusCode).toBe(200);
    const before = await repairWriteState(ctx, ws.boot.workspace.id, proposal.proposalId);
    const res = await exportRepair(ws, proposal.proposalId);
    expectError(res, 429, 'workload_rate_limited');
    expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(await repairWriteState(ctx, ws.boot.workspace.id, proposal.proposalId)).toEqual(before);
  });

  it('answers 409 repair_export_operation_unsupported when the change has no exact place in the registered document', async () => {
    // The response schema is an `allOf` the import flattened: the added property has no one place in it.
    const document = ordersOpenApi();
    const post = (document.paths as Record<string, Record<string, Record<string, Record<string, Record<string, unknown>>>>>)['/v1/orders']
      .post;
    post.responses['201'] = {
      description: 'created',
      content: {
        'application/json': {
          schema: { allOf: [{ $ref: '#/components/schemas/Order' }, { type: 'object', properties: { receipt: { type: 'string' } } }] },
        },
      },
    };
    const ws = await createRepairWorkspace(ctx, baseUrl, document);
    const proposal = await approvedProposal(ws);
    await expectRefused(ws, proposal.proposalId, () => exportRepair(ws, proposal.proposalId), 409, 'repair_export_operation_unsupported');
  });

  it('answers 409 repair_export_sensitive_content when a file would hold an e-mail address', async () => {
    const ws = await createRepairWorkspace(ctx, baseUrl);
    const proposal = await approvedProposal(ws, { property: 'jane.doe@example.com' });
    await expectRefused(ws, proposal.proposalId, () => exportRepair(ws, proposal.proposalId), 409, 'repair_export_sensitive_content');
  });
});

describe('export refusals', () => {
  it('answers 400 idempotency_key_required, then 400 invalid_repair_request for any body but {} or a target', async () => {
    const { ws, proposal } = await workspaceWithApproval();
    for (const key of [null, 'short']) {
      await expectRefused(ws, proposal.proposalId, () => exportRepair(ws, proposal.proposalId, { key }), 400, 'idempotency_key_required');
    }
    for (const body of [{ target: 'zip' }, { target: null }, { target: 'files', extra: 1 }, { format: 'files' }, [], null, undefined]) {
      await expectRefused(ws, proposal.proposalId, () => exportRepair(ws, proposal.proposalId, { body }), 400, 'invalid_repair_request');
    }
  });

  it('answers 404 for a connection or proposal that is not the workspace’s, before anything else', async () => {
    const { ws, proposal } = await workspaceWithApproval();
    const stranger = await createRepairWorkspace(ctx, baseUrl);
    const strangerProposal = await insertProposal(ctx, stranger);
    const other = await createIntegration(ctx, ws.boot.apiKey.key, { mode: 'sandbox', name: 'Other orders' });
    const cases: [string, string, string][] = [
      [newId('int_'), proposal.proposalId, 'connection_not_found'],
      [stranger.connectionId, strangerProposal.proposalId, 'connection_not_found'],
      [ws.connectionId, newId('rp_'), 'repair_proposal_not_found'],
      [ws.connectionId, strangerProposal.proposalId, 'repair_proposal_not_found'],
      [other.integration.connectionId, proposal.proposalId, 'repair_proposal_not_found'],
    ];
    for (const [connectionId, proposalId, error] of cases) {
      for (const body of [{}, { target: 'pull_request' }]) {
        await expectRefused(ws, proposal.proposalId, () => exportRepair(ws, proposalId, { connectionId, body }), 404, error);
      }
    }
  });

  it('answers 503 codehost_not_configured for a pull request', async () => {
    const { ws, proposal } = await workspaceWithApproval();
    await expectRefused(
      ws,
      proposal.proposalId,
      () => exportRepair(ws, proposal.proposalId, { body: { target: 'pull_request' } }),
      503,
      'codehost_not_configured',
    );
  });

  it('answers 409 repair_export_not_validated without a passed validation', async () => {
    const ws = await createRepairWorkspace(ctx, baseUrl);
    const proposals = [
      await insertProposal(ctx, ws, { validated: false, status: 'queued' }),
      await insertProposal(ctx, ws, { status: 'failed', valid: false }),
      await insertProposal(ctx, ws, { status: 'failed', replayPassed: false, runStatus: 'failed' }),
      // Even an approved one, when its validation no longer holds.
      await insertProposal(ctx, ws, { status: 'approved', replayPassed: false }),
    ];
    for (const { proposalId } of proposals) {
      await expectRefused(ws, proposalId, () => exportRepair(ws, proposalId), 409, 'repair_export_not_validated');
    }
  });

  it('answers 409 repair_export_not_approved unless the proposal was approved', async () => {
    const ws = await createRepairWorkspace(ctx, baseUrl);
    const awaiting = await insertProposal(ctx, ws);
    await expectRefused(ws, awaiting.proposalId, () => exportRepair(ws, awaiting.proposalId), 409, 'repair_export_not_approved');
    await decide(ws, awaiting.proposalId, 'rejected');
    await expectRefused(ws, awaiting.proposalId, () => exportRepair(ws, awaiting.proposalId), 409, 'repair_export_not_approved');
    // Approved in the row but without an approval record: not approved through a review.
    const unreviewed = await insertProposal(ctx, ws, { status: 'approved' });
    await expectRefused(ws, unreviewed.proposalId, () => exportRepair(ws, unreviewed.proposalId), 409, 'repair_export_not_approved');
  });

  it('answers 409 repair_export_not_available when the active version lacks the operation, or none is active', async () => {
    const { ws, proposal } = await workspaceWithApproval();
    await activateAnotherVersion(ctx, ws, '2.0.0', ordersWithoutCreatedResponse());
    await expectRefused(ws, proposal.proposalId, () => exportRepair(ws, proposal.proposalId), 409, 'repair_export_not_available');

    const other = await workspaceWithApproval();
    await ctx.deps.pool.query("UPDATE contract_versions SET lifecycle_status = 'superseded' WHERE connection_id = $1", [
      other.ws.connectionId,
    ]);
    await ctx.deps.pool.query('UPDATE connections SET active_contract_version_id = NULL WHERE id = $1', [other.ws.connectionId]);
    await expectRefused(
      other.ws,
      other.proposal.proposalId,
      () => exportRepair(other.ws, other.proposal.proposalId),
      409,
      'repair_export_not_available',
    );
  });

  it('answers 409 repair_export_fingerprint_mismatch when the schema or the candidate moved since the approval', async () => {
    const { ws, proposal } = await workspaceWithApproval();
    await activateAnotherVersion(ctx, ws, '2.0.0', ordersOpenApi(1));
    await expectRefused(ws, proposal.proposalId, () => exportRepair(ws, proposal.proposalId), 409, 'repair_export_fingerprint_mismatch');
    // The same schema again (a version with the original document): exported once more.
    await activateAnotherVersion(ctx, ws, '3.0.0', { ...ordersOpenApi(), info: { title: 'Orders', version: '3' } });
    const again = await exportRepair(ws, proposal.proposalId);
    expect(again.statusCode, again.body).toBe(200);

    const other = await workspaceWithApproval();
    await ctx.deps.pool.query('UPDATE repair_proposals SET candidate_fingerprint = $2 WHERE id = $1', [
      other.proposal.proposalId,
      fingerprint('another candidate'),
    ]);
    await expectRefused(
      other.ws,
      other.proposal.proposalId,
      () => exportRepair(other.ws, other.proposal.proposalId),
      409,
      'repair_export_fingerprint_mismatch',
    );
    // The candidate itself changed under its old fingerprint.
    const third = await workspaceWithApproval();
    await ctx.deps.pool.query(
      `UPDATE repair_proposals SET candidate = jsonb_set(candidate, '{patch,0,value}', '{"type": "integer"}') WHERE id = $1`,
      [third.proposal.proposalId],
    );
    await expectRefused(
      third.ws,
      third.proposal.proposalId,
      () => exportRepair(third.ws, third.proposal.proposalId),
      409,
      'repair_export_fingerprint_mismatch',
    );
  });

  it('refuses a viewer (403 cli_operation_forbidden) and a token without repairs:export (403 insufficient_scope)', async () => {
    const { ws, proposal } = await workspaceWithApproval();
    const member = await createConsoleUser(ctx);
    await addWorkspaceMember(ctx, ws.boot.workspace.id, member.userId, 'viewer');
    const viewer = await loginCli(baseUrl, member.sessionToken);
    await expectRefused(
      ws,
      proposal.proposalId,
      () => exportRepair(ws, proposal.proposalId, { token: viewer.accessToken }),
      403,
      'cli_operation_forbidden',
    );
    const reader = await loginCli(baseUrl, ws.boot.sessionToken, ALL_SCOPES_BUT_EXPORT);
    await expectRefused(
      ws,
      proposal.proposalId,
      () => exportRepair(ws, proposal.proposalId, { token: reader.accessToken }),
      403,
      'insufficient_scope',
    );
  });
});
