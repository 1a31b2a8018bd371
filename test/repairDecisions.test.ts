import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FINGERPRINT_PATTERN, fingerprint } from '../shared/fingerprint.js';
import { hasIdForm, newId } from '../shared/ids.js';
import type { CliScopeSuffix } from '../management/auth/scopes.js';
import { loginCli, serveOnLoopback, type CliSession } from './helpers/cli.js';
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
import { createIntegration } from './helpers/integrations.js';
import {
  callRepairRoute,
  createRepairWorkspace,
  insertProposal,
  narrowedAccessToken,
  repairWriteState,
  type InsertedProposal,
  type RepairWorkspace,
} from './helpers/repairDecisions.js';

// 03 Reviewed repairs: decision preview, apply and the operation read, through CLI tokens. Each
// test works in a workspace of its own, so the repair admissions (5 per actor and minute) of one
// test never meet another's.

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

const previewUrl = (connectionId: string, proposalId: string) =>
  `/v1/cli/connections/${connectionId}/repair-proposals/${proposalId}/decision-preview`;
const applyUrl = (operationId: string) => `/v1/cli/operations/${operationId}/apply`;
const operationUrl = (operationId: string) => `/v1/cli/operations/${operationId}`;

const RATIONALE = 'The vendor added coupons to order responses in March.';
const ALL_BUT = (...left: CliScopeSuffix[]): CliScopeSuffix[] =>
  (
    [
      'incidents:read',
      'repairs:read',
      'repairs:create',
      'repairs:approve',
      'repairs:export',
      'replays:read',
      'observations:read',
    ] as CliScopeSuffix[]
  ).filter((scope) => !left.includes(scope));

interface Preview {
  operationId: string;
  approvalFingerprint: string;
  expiresAt: string;
  review: Record<string, unknown>;
}

function preview(
  ws: RepairWorkspace,
  proposalId: string,
  body: unknown = { decision: 'approved', rationale: RATIONALE },
  token = ws.cli.accessToken,
  connectionId = ws.connectionId,
) {
  return callRepairRoute(ctx, token, 'POST', previewUrl(connectionId, proposalId), { workspace: ws.boot.workspace.slug, body });
}

function apply(
  ws: RepairWorkspace,
  operationId: string,
  approvalFingerprint: string,
  key = newIdempotencyKey(),
  token = ws.cli.accessToken,
) {
  return callRepairRoute(ctx, token, 'POST', applyUrl(operationId), {
    workspace: ws.boot.workspace.slug,
    body: { approvalFingerprint },
    idempotencyKey: key,
  });
}

function readOperation(ws: RepairWorkspace, operationId: string, token = ws.cli.accessToken) {
  return callRepairRoute(ctx, token, 'GET', operationUrl(operationId), { workspace: ws.boot.workspace.slug });
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

async function previewOk(
  ws: RepairWorkspace,
  proposalId: string,
  decision: 'approved' | 'rejected' = 'approved',
  token = ws.cli.accessToken,
): Promise<Preview> {
  const res = await preview(ws, proposalId, { decision, rationale: RATIONALE }, token);
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
}

async function workspaceWithProposal(): Promise<{ ws: RepairWorkspace; proposal: InsertedProposal }> {
  const ws = await createRepairWorkspace(ctx, baseUrl);
  return { ws, proposal: await insertProposal(ctx, ws) };
}

/** A member of the workspace with a role, signed in to the CLI with `scopes`. */
async function memberCli(ws: RepairWorkspace, role: 'owner' | 'admin' | 'viewer', scopes?: CliScopeSuffix[]) {
  const member = await createConsoleUser(ctx);
  await addWorkspaceMember(ctx, ws.boot.workspace.id, member.userId, role);
  return { userId: member.userId, cli: await loginCli(baseUrl, member.sessionToken, scopes) };
}

async function setRole(ws: RepairWorkspace, userId: string, role: 'owner' | 'admin' | 'viewer'): Promise<void> {
  await ctx.deps.pool.query('UPDATE workspace_members SET role = $3 WHERE workspace_id = $1 AND user_id = $2', [
    ws.boot.workspace.id,
    userId,
    role,
  ]);
}

/** Archive then restore: the workspace's authorization epoch moves (twice). */
async function archiveAndRestore(ws: RepairWorkspace): Promise<void> {
  for (const action of ['archive', 'restore']) {
    const res = await callWithSession(ctx, ws.boot.sessionToken, 'POST', `/workspaces/${ws.boot.workspace.slug}/${action}`);
    expect(res.statusCode, res.body).toBe(200);
  }
}

async function proposalRow(proposalId: string) {
  const { rows } = await ctx.deps.pool.query('SELECT status, decision, updated_at FROM repair_proposals WHERE id = $1', [proposalId]);
  return rows[0];
}

describe('decision preview', () => {
  it('answers 201 with the review bound to the proposal, expiring in ten minutes; the proposal is not changed', async () => {
    const { ws, proposal } = await workspaceWithProposal();
    const before = await proposalRow(proposal.proposalId);
    const res = await preview(ws, proposal.proposalId, { decision: 'approved', rationale: `  ${RATIONALE}\n` });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.headers['cache-control']).toBe('no-store');
    const body = res.json();
    expect(hasIdForm(body.operationId, 'cliop_')).toBe(true);
    expect(body).toEqual({
      schemaVersion: 1,
      operationId: body.operationId,
      connectionId: ws.connectionId,
      proposalId: proposal.proposalId,
      status: 'previewed',
      approvalFingerprint: expect.stringMatching(FINGERPRINT_PATTERN),
      expiresAt: body.expiresAt,
      review: {
        proposalId: proposal.proposalId,
        connectionId: ws.connectionId,
        status: 'awaiting_approval',
        proposalFingerprint: expect.stringMatching(FINGERPRINT_PATTERN),
        validation: {
          id: expect.stringMatching(/^rval_/),
          valid: true,
          replayPassed: true,
          replayRunId: proposal.runId,
          replayStatus: 'passed',
          adapterFingerprint: expect.stringMatching(FINGERPRINT_PATTERN),
          schemaChecksFingerprint: expect.stringMatching(FINGERPRINT_PATTERN),
        },
        patchArtifactFingerprint: fingerprint(proposal.candidate),
        repositoryMappingId: null,
        decision: 'approved',
        rationale: RATIONALE,
      },
    });
    const { rows } = await ctx.deps.pool.query(
      'SELECT created_at, expires_at, auth_epoch, user_id, cli_client_id, completed_at FROM repair_decision_previews WHERE id = $1',
      [body.operationId],
    );
    expect(rows[0].expires_at.getTime() - rows[0].created_at.getTime()).toBe(10 * 60_000);
    expect(body.expiresAt).toBe(rows[0].expires_at.toISOString());
    expect(rows[0]).toMatchObject({ user_id: ws.boot.user.id, cli_client_id: ws.cli.clientId, completed_at: null });
    expect(await proposalRow(proposal.proposalId)).toEqual(before);
    // Two previews of the same decision are two operations with fingerprints of their own.
    const second = await previewOk(ws, proposal.proposalId);
    expect(second.operationId).not.toBe(body.operationId);
    expect(second.approvalFingerprint).not.toBe(body.approvalFingerprint);
  });

  it('answers 400 invalid_repair_request for a bad decision or rationale, or any other member', async () => {
    const { ws, proposal } = await workspaceWithProposal();
    const bodies: unknown[] = [
      {},
      { rationale: RATIONALE },
      { decision: 'approved' },
      { decision: 'approve', rationale: RATIONALE },
      { decision: 'APPROVED', rationale: RATIONALE },
      { decision: null, rationale: RATIONALE },
      { decision: 'approved', rationale: 42 },
      { decision: 'approved', rationale: '   nine char  ' },
      { decision: 'approved', rationale: `  ${'x'.repeat(9)}\n\t` },
      { decision: 'approved', rationale: 'y'.repeat(1001) },
      { decision: 'approved', rationale: RATIONALE, comment: 'x' },
      { decision: 'approved', rationale: RATIONALE, approvalFingerprint: fingerprint(1) },
      [],
      null,
    ];
    for (const body of bodies) {
      await expectRefused(ws, proposal.proposalId, () => preview(ws, proposal.proposalId, body), 400, 'invalid_repair_request');
    }
  });

  it('counts the trimmed rationale in characters: 10 and 1000 pass', async () => {
    const { ws, proposal } = await workspaceWithProposal();
    for (const rationale of [`\n ${'é'.repeat(10)} `, `${'😀'.repeat(1000)}   `]) {
      const res = await preview(ws, proposal.proposalId, { decision: 'rejected', rationale });
      expect(res.statusCode, res.body).toBe(201);
      expect(res.json().review.rationale).toBe(rationale.trim());
    }
  });

  it('answers 404 for a connection or proposal that is not the workspace’s, and 400 for an empty connection', async () => {
    const { ws, proposal } = await workspaceWithProposal();
    const stranger = await workspaceWithProposal();
    const other = await createIntegration(ctx, ws.boot.apiKey.key, { mode: 'sandbox', name: 'Other orders' });
    const cases: [string, string, string][] = [
      [newId('int_'), proposal.proposalId, 'connection_not_found'],
      ['wint_01jx0000000000000000000000', proposal.proposalId, 'connection_not_found'],
      ['not-an-id', proposal.proposalId, 'connection_not_found'],
      [stranger.ws.connectionId, stranger.proposal.proposalId, 'connection_not_found'],
      [ws.connectionId, newId('rp_'), 'repair_proposal_not_found'],
      [ws.connectionId, 'rp_x', 'repair_proposal_not_found'],
      [ws.connectionId, stranger.proposal.proposalId, 'repair_proposal_not_found'],
      // A proposal of another connection of the same workspace is not found on this one.
      [other.integration.connectionId, proposal.proposalId, 'repair_proposal_not_found'],
    ];
    for (const [connectionId, proposalId, error] of cases) {
      await expectRefused(ws, proposal.proposalId, () => preview(ws, proposalId, undefined, undefined, connectionId), 404, error);
    }
    await expectRefused(
      ws,
      proposal.proposalId,
      () => preview(ws, proposal.proposalId, undefined, undefined, ''),
      400,
      'connection_required',
    );
  });

  it('answers 409 repair_proposal_not_approvable unless the proposal awaits approval with a valid candidate and a passed replay', async () => {
    const ws = await createRepairWorkspace(ctx, baseUrl);
    const proposals = [
      await insertProposal(ctx, ws, { validated: false, status: 'queued' }),
      await insertProposal(ctx, ws, { validated: false, status: 'generating' }),
      await insertProposal(ctx, ws, { status: 'validating' }),
      await insertProposal(ctx, ws, { status: 'approved' }),
      await insertProposal(ctx, ws, { status: 'rejected' }),
      await insertProposal(ctx, ws, { status: 'failed' }),
      await insertProposal(ctx, ws, { valid: false }),
      await insertProposal(ctx, ws, { replayPassed: false }),
      await insertProposal(ctx, ws, { runStatus: 'failed', replayPassed: false }),
      await insertProposal(ctx, ws, { validated: false, status: 'awaiting_approval' }),
    ];
    for (const { proposalId } of proposals) {
      await expectRefused(ws, proposalId, () => preview(ws, proposalId), 409, 'repair_proposal_not_approvable');
    }
  });

  it('refuses a viewer (403 cli_operation_forbidden) and a token without repairs:approve (403 insufficient_scope)', async () => {
    const { ws, proposal } = await workspaceWithProposal();
    const viewer = await memberCli(ws, 'viewer');
    await expectRefused(
      ws,
      proposal.proposalId,
      () => preview(ws, proposal.proposalId, undefined, viewer.cli.accessToken),
      403,
      'cli_operation_forbidden',
    );
    const reader = await loginCli(baseUrl, ws.boot.sessionToken, ALL_BUT('repairs:approve'));
    await expectRefused(
      ws,
      proposal.proposalId,
      () => preview(ws, proposal.proposalId, undefined, reader.accessToken),
      403,
      'insufficient_scope',
    );
    // An admin may.
    const admin = await memberCli(ws, 'admin');
    expect((await preview(ws, proposal.proposalId, undefined, admin.cli.accessToken)).statusCode).toBe(201);
  });

  it('admits 5 previews per actor and UTC minute, then answers 429 workload_rate_limited with Retry-After', async () => {
    const { ws, proposal } = await workspaceWithProposal();
    // Start at the beginning of a UTC minute of the service clock, so the six requests share it.
    await advanceClock(ctx, 60_000 - (ctx.deps.clock.nowMs() % 60_000) + 500);
    for (let i = 0; i < 5; i++) await previewOk(ws, proposal.proposalId);
    const before = await repairWriteState(ctx, ws.boot.workspace.id, proposal.proposalId);
    const res = await preview(ws, proposal.proposalId);
    expectError(res, 429, 'workload_rate_limited');
    expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(res.headers['retry-after'])).toBeLessThanOrEqual(60);
    expect(await repairWriteState(ctx, ws.boot.workspace.id, proposal.proposalId)).toEqual(before);
    // Another actor of the workspace has admissions of its own; the next minute admits again.
    const admin = await memberCli(ws, 'admin');
    expect((await preview(ws, proposal.proposalId, undefined, admin.cli.accessToken)).statusCode).toBe(201);
    await advanceClock(ctx, 60_000);
    await previewOk(ws, proposal.proposalId);
  });

  it('gives the admission back when the preview is refused', async () => {
    const { ws, proposal } = await workspaceWithProposal();
    await advanceClock(ctx, 60_000 - (ctx.deps.clock.nowMs() % 60_000) + 500);
    for (let i = 0; i < 6; i++) expectError(await preview(ws, newId('rp_')), 404, 'repair_proposal_not_found');
    for (let i = 0; i < 5; i++) await previewOk(ws, proposal.proposalId);
  });
});

describe('apply', () => {
  it('approves: proposal, immutable approval, completed preview, audit row and receipt in one commit', async () => {
    const { ws, proposal } = await workspaceWithProposal();
    const reviewed = await previewOk(ws, proposal.proposalId);
    const key = newIdempotencyKey();
    const res = await apply(ws, reviewed.operationId, reviewed.approvalFingerprint, key);
    expect(res.statusCode, res.body).toBe(200);
    const receipt = res.json();
    expect(receipt).toEqual({
      schemaVersion: 1,
      operationId: reviewed.operationId,
      action: 'repair.decision',
      targetId: proposal.proposalId,
      connectionId: ws.connectionId,
      status: 'completed',
      data: { proposalId: proposal.proposalId, status: 'approved', approvalRecordId: expect.stringMatching(/^rapr_/) },
      completedAt: expect.any(String),
      replayed: false,
    });
    const approvalId = receipt.data.approvalRecordId;
    const decided = await proposalRow(proposal.proposalId);
    expect(decided.status).toBe('approved');
    expect(decided.decision).toEqual({ status: 'approved', approvalRecordId: approvalId, decidedAt: receipt.completedAt });
    const approval = await ctx.deps.pool.query('SELECT * FROM repair_approvals WHERE id = $1', [approvalId]);
    expect(approval.rows[0]).toMatchObject({
      proposal_id: proposal.proposalId,
      operation_id: reviewed.operationId,
      decision: 'approved',
      rationale: RATIONALE,
      approval_fingerprint: reviewed.approvalFingerprint,
      review: reviewed.review,
      user_id: ws.boot.user.id,
      cli_client_id: ws.cli.clientId,
    });
    const previewRow = await ctx.deps.pool.query('SELECT completed_at FROM repair_decision_previews WHERE id = $1', [reviewed.operationId]);
    expect(previewRow.rows[0].completed_at.toISOString()).toBe(receipt.completedAt);
    const operation = await ctx.deps.pool.query(
      `SELECT o.kind, o.user_id, o.cli_client_id, o.auth_epoch, w.auth_epoch AS workspace_epoch, o.idempotency_key
         FROM operations o JOIN workspaces w ON w.id = o.workspace_id WHERE o.id = $1`,
      [reviewed.operationId],
    );
    expect(operation.rows[0]).toMatchObject({
      kind: 'repair.decision',
      user_id: ws.boot.user.id,
      cli_client_id: ws.cli.clientId,
      idempotency_key: key,
    });
    expect(operation.rows[0].auth_epoch).toBe(operation.rows[0].workspace_epoch);
    const audit = await ctx.deps.pool.query(
      "SELECT actor_type, actor_id, target_id, metadata FROM audit_events WHERE workspace_id = $1 AND action = 'repair.decision'",
      [ws.boot.workspace.id],
    );
    expect(audit.rows).toEqual([
      {
        actor_type: 'user',
        actor_id: ws.boot.user.id,
        target_id: proposal.proposalId,
        metadata: {
          operationId: reviewed.operationId,
          connectionId: ws.connectionId,
          decision: 'approved',
          approvalRecordId: approvalId,
          actorClientId: ws.cli.clientId,
        },
      },
    ]);

    // The same key and request replays the receipt and writes nothing.
    const state = await repairWriteState(ctx, ws.boot.workspace.id, proposal.proposalId);
    const replay = await apply(ws, reviewed.operationId, reviewed.approvalFingerprint, key);
    expect(replay.statusCode, replay.body).toBe(200);
    expect(replay.json()).toEqual({ ...receipt, replayed: true });
    expect(await repairWriteState(ctx, ws.boot.workspace.id, proposal.proposalId)).toEqual(state);
    // The read of the operation is the receipt too.
    const read = await readOperation(ws, reviewed.operationId);
    expect(read.statusCode, read.body).toBe(200);
    expect(read.json()).toEqual({ ...receipt, replayed: true });
  });

  it('rejects', async () => {
    const { ws, proposal } = await workspaceWithProposal();
    const reviewed = await previewOk(ws, proposal.proposalId, 'rejected');
    const res = await apply(ws, reviewed.operationId, reviewed.approvalFingerprint);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data).toMatchObject({ proposalId: proposal.proposalId, status: 'rejected' });
    expect((await proposalRow(proposal.proposalId)).status).toBe('rejected');
    const approval = await ctx.deps.pool.query('SELECT decision FROM repair_approvals WHERE proposal_id = $1', [proposal.proposalId]);
    expect(approval.rows).toEqual([{ decision: 'rejected' }]);
  });

  it('keeps the approval record immutable: UPDATE and DELETE fail', async () => {
    const { ws, proposal } = await workspaceWithProposal();
    const reviewed = await previewOk(ws, proposal.proposalId);
    const approvalId = (await apply(ws, reviewed.operationId, reviewed.approvalFingerprint)).json().data.approvalRecordId;
    await expect(
      ctx.deps.pool.query("UPDATE repair_approvals SET rationale = 'changed afterwards' WHERE id = $1", [approvalId]),
    ).rejects.toThrow(/immutable/);
    await expect(ctx.deps.pool.query('DELETE FROM repair_approvals WHERE id = $1', [approvalId])).rejects.toThrow(/immutable/);
    const { rows } = await ctx.deps.pool.query('SELECT rationale FROM repair_approvals WHERE id = $1', [approvalId]);
    expect(rows).toEqual([{ rationale: RATIONALE }]);
  });

  it('answers 400 idempotency_key_required and invalid_repair_request before anything else', async () => {
    const { ws, proposal } = await workspaceWithProposal();
    const reviewed = await previewOk(ws, proposal.proposalId);
    const url = applyUrl(reviewed.operationId);
    const workspace = ws.boot.workspace.slug;
    const body = { approvalFingerprint: reviewed.approvalFingerprint };
    for (const idempotencyKey of [undefined, 'short', 'has space in it', 'x'.repeat(129)]) {
      await expectRefused(
        ws,
        proposal.proposalId,
        () => callRepairRoute(ctx, ws.cli.accessToken, 'POST', url, { workspace, body, idempotencyKey }),
        400,
        'idempotency_key_required',
      );
    }
    for (const bad of [
      {},
      { approvalFingerprint: 'sha256:abc' },
      { approvalFingerprint: reviewed.approvalFingerprint, decision: 'approved' },
      [],
    ]) {
      await expectRefused(
        ws,
        proposal.proposalId,
        () => callRepairRoute(ctx, ws.cli.accessToken, 'POST', url, { workspace, body: bad, idempotencyKey: newIdempotencyKey() }),
        400,
        'invalid_repair_request',
      );
    }
  });

  it('answers 404 operation_not_found for an unknown operation, or one of another user, client or workspace', async () => {
    const { ws, proposal } = await workspaceWithProposal();
    const reviewed = await previewOk(ws, proposal.proposalId);
    const stranger = await workspaceWithProposal();
    const strangerPreview = await previewOk(stranger.ws, stranger.proposal.proposalId);
    const otherClient = await loginCli(baseUrl, ws.boot.sessionToken);
    const admin = await memberCli(ws, 'admin');
    const cases: [string, string, string][] = [
      [newId('cliop_'), reviewed.approvalFingerprint, ws.cli.accessToken],
      ['cliop_x', reviewed.approvalFingerprint, ws.cli.accessToken],
      [strangerPreview.operationId, strangerPreview.approvalFingerprint, ws.cli.accessToken],
      [reviewed.operationId, reviewed.approvalFingerprint, otherClient.accessToken],
      [reviewed.operationId, reviewed.approvalFingerprint, admin.cli.accessToken],
    ];
    for (const [operationId, approvalFingerprint, token] of cases) {
      await expectRefused(
        ws,
        proposal.proposalId,
        () => apply(ws, operationId, approvalFingerprint, undefined, token),
        404,
        'operation_not_found',
      );
    }
    // The stranger's own preview is untouched and still applies for its owner.
    expect((await apply(stranger.ws, strangerPreview.operationId, strangerPreview.approvalFingerprint)).statusCode).toBe(200);
  });

  it('answers 403 authorization_changed after a role change, an archive and restore, or a removal and re-add', async () => {
    const { ws, proposal } = await workspaceWithProposal();
    // The owner becomes an admin: still allowed to decide, but not under the reviewed authorization.
    const byOwner = await previewOk(ws, proposal.proposalId);
    await setRole(ws, ws.boot.user.id, 'admin');
    await expectRefused(
      ws,
      proposal.proposalId,
      () => apply(ws, byOwner.operationId, byOwner.approvalFingerprint),
      403,
      'authorization_changed',
    );
    // Back to owner: the role is the reviewed one, but the membership revision (the workspace
    // authorization epoch, moved by each role change) is not.
    await setRole(ws, ws.boot.user.id, 'owner');
    expectError(await readOperation(ws, byOwner.operationId), 403, 'authorization_changed');

    // An admin removed and re-added with the same role.
    const readded = await memberCli(ws, 'admin');
    const byReadded = await previewOk(ws, proposal.proposalId, 'approved', readded.cli.accessToken);
    await ctx.deps.pool.query('DELETE FROM workspace_members WHERE workspace_id = $1 AND user_id = $2', [
      ws.boot.workspace.id,
      readded.userId,
    ]);
    await addWorkspaceMember(ctx, ws.boot.workspace.id, readded.userId, 'admin');
    await expectRefused(
      ws,
      proposal.proposalId,
      () => apply(ws, byReadded.operationId, byReadded.approvalFingerprint, undefined, readded.cli.accessToken),
      403,
      'authorization_changed',
    );

    // An admin removed and re-added as owner.
    const admin = await memberCli(ws, 'admin');
    const byAdmin = await previewOk(ws, proposal.proposalId, 'approved', admin.cli.accessToken);
    await ctx.deps.pool.query('DELETE FROM workspace_members WHERE workspace_id = $1 AND user_id = $2', [
      ws.boot.workspace.id,
      admin.userId,
    ]);
    await expectRefused(
      ws,
      proposal.proposalId,
      () => apply(ws, byAdmin.operationId, byAdmin.approvalFingerprint, undefined, admin.cli.accessToken),
      404,
      'workspace_not_found',
    );
    await addWorkspaceMember(ctx, ws.boot.workspace.id, admin.userId, 'owner');
    await expectRefused(
      ws,
      proposal.proposalId,
      () => apply(ws, byAdmin.operationId, byAdmin.approvalFingerprint, undefined, admin.cli.accessToken),
      403,
      'authorization_changed',
    );
    expectError(await readOperation(ws, byAdmin.operationId, admin.cli.accessToken), 403, 'authorization_changed');

    // The workspace's authorization epoch moves with an archive and a restore.
    await archiveAndRestore(ws);
    await expectRefused(
      ws,
      proposal.proposalId,
      () => apply(ws, byOwner.operationId, byOwner.approvalFingerprint),
      403,
      'authorization_changed',
    );
    expectError(await readOperation(ws, byOwner.operationId), 403, 'authorization_changed');
    // A preview made now applies.
    const fresh = await previewOk(ws, proposal.proposalId);
    expect((await apply(ws, fresh.operationId, fresh.approvalFingerprint)).statusCode).toBe(200);
  });

  it('answers 409 review_expired ten minutes after the preview; the read says expired', async () => {
    const { ws, proposal } = await workspaceWithProposal();
    const reviewed = await previewOk(ws, proposal.proposalId);
    await advanceClock(ctx, 9 * 60_000);
    expect((await readOperation(ws, reviewed.operationId)).json().status).toBe('previewed');
    await advanceClock(ctx, 60_000);
    await expectRefused(
      ws,
      proposal.proposalId,
      () => apply(ws, reviewed.operationId, reviewed.approvalFingerprint),
      409,
      'review_expired',
    );
    const read = await readOperation(ws, reviewed.operationId);
    expect(read.statusCode, read.body).toBe(200);
    expect(read.json()).toEqual({
      schemaVersion: 1,
      operationId: reviewed.operationId,
      connectionId: ws.connectionId,
      proposalId: proposal.proposalId,
      status: 'expired',
      approvalFingerprint: reviewed.approvalFingerprint,
      expiresAt: reviewed.expiresAt,
      review: reviewed.review,
    });
  });

  it('answers 409 approval_mismatch for another fingerprint, even another preview’s', async () => {
    const { ws, proposal } = await workspaceWithProposal();
    const reviewed = await previewOk(ws, proposal.proposalId);
    const other = await previewOk(ws, proposal.proposalId, 'rejected');
    for (const wrong of [fingerprint('another'), other.approvalFingerprint]) {
      await expectRefused(ws, proposal.proposalId, () => apply(ws, reviewed.operationId, wrong), 409, 'approval_mismatch');
    }
    expect((await apply(ws, reviewed.operationId, reviewed.approvalFingerprint)).statusCode).toBe(200);
  });

  it('answers 409 review_stale when the proposal, its candidate, validation or run changed, or it was decided', async () => {
    const changes: [string, (proposal: InsertedProposal) => Promise<unknown>][] = [
      ['status', (p) => ctx.deps.pool.query("UPDATE repair_proposals SET status = 'failed' WHERE id = $1", [p.proposalId])],
      [
        'candidate',
        (p) =>
          ctx.deps.pool.query('UPDATE repair_proposals SET candidate_fingerprint = $2 WHERE id = $1', [p.proposalId, fingerprint('other')]),
      ],
      [
        'validation',
        (p) =>
          ctx.deps.pool.query(
            `UPDATE repair_proposals SET validation = jsonb_set(validation, '{schemaChecksFingerprint}', to_jsonb($2::text)) WHERE id = $1`,
            [p.proposalId, fingerprint('other checks')],
          ),
      ],
      ['run', (p) => ctx.deps.pool.query('UPDATE replay_runs SET adapter_fingerprint = $2 WHERE id = $1', [p.runId, fingerprint('other')])],
      ['run status', (p) => ctx.deps.pool.query("UPDATE replay_runs SET status = 'failed' WHERE id = $1", [p.runId])],
    ];
    const ws = await createRepairWorkspace(ctx, baseUrl);
    for (const [label, change] of changes) {
      const proposal = await insertProposal(ctx, ws);
      const reviewed = await previewOk(ws, proposal.proposalId);
      await change(proposal);
      const before = await repairWriteState(ctx, ws.boot.workspace.id, proposal.proposalId);
      const res = await apply(ws, reviewed.operationId, reviewed.approvalFingerprint);
      expect(res.statusCode, `${label}: ${res.body}`).toBe(409);
      expect(res.json()).toEqual({ error: 'review_stale' });
      expect(await repairWriteState(ctx, ws.boot.workspace.id, proposal.proposalId)).toEqual(before);
    }
    // A second preview of a decided proposal is stale once the first one is applied.
    const other = await workspaceWithProposal();
    const first = await previewOk(other.ws, other.proposal.proposalId);
    const second = await previewOk(other.ws, other.proposal.proposalId, 'rejected');
    expect((await apply(other.ws, first.operationId, first.approvalFingerprint)).statusCode).toBe(200);
    await expectRefused(
      other.ws,
      other.proposal.proposalId,
      () => apply(other.ws, second.operationId, second.approvalFingerprint),
      409,
      'review_stale',
    );
    // The applied preview itself, under another key, is spent.
    await expectRefused(
      other.ws,
      other.proposal.proposalId,
      () => apply(other.ws, first.operationId, first.approvalFingerprint),
      409,
      'review_stale',
    );
  });

  it('answers 409 idempotency_conflict for the key of another request, and keeps another epoch or client from the receipt', async () => {
    const { ws, proposal } = await workspaceWithProposal();
    const reviewed = await previewOk(ws, proposal.proposalId);
    const other = await previewOk(ws, proposal.proposalId, 'rejected');
    const key = newIdempotencyKey();
    expect((await apply(ws, reviewed.operationId, reviewed.approvalFingerprint, key)).statusCode).toBe(200);
    await expectRefused(
      ws,
      proposal.proposalId,
      () => apply(ws, other.operationId, other.approvalFingerprint, key),
      409,
      'idempotency_conflict',
    );
    const otherClient = await loginCli(baseUrl, ws.boot.sessionToken);
    await expectRefused(
      ws,
      proposal.proposalId,
      () => apply(ws, reviewed.operationId, reviewed.approvalFingerprint, key, otherClient.accessToken),
      409,
      'idempotency_conflict',
    );
    await archiveAndRestore(ws);
    await expectRefused(
      ws,
      proposal.proposalId,
      () => apply(ws, reviewed.operationId, reviewed.approvalFingerprint, key),
      403,
      'authorization_changed',
    );
  });

  it('refuses a viewer (403 cli_operation_forbidden) and a token without repairs:approve (403 insufficient_scope)', async () => {
    const { ws, proposal } = await workspaceWithProposal();
    const admin = await memberCli(ws, 'admin');
    const reviewed = await previewOk(ws, proposal.proposalId, 'approved', admin.cli.accessToken);
    await setRole(ws, admin.userId, 'viewer');
    await expectRefused(
      ws,
      proposal.proposalId,
      () => apply(ws, reviewed.operationId, reviewed.approvalFingerprint, undefined, admin.cli.accessToken),
      403,
      'cli_operation_forbidden',
    );
    const reader = await loginCli(baseUrl, ws.boot.sessionToken, ALL_BUT('repairs:approve'));
    const own = await previewOk(ws, proposal.proposalId);
    await expectRefused(
      ws,
      proposal.proposalId,
      () => apply(ws, own.operationId, own.approvalFingerprint, undefined, reader.accessToken),
      403,
      'insufficient_scope',
    );
  });
});

describe('operation read', () => {
  let ws: RepairWorkspace;
  let proposal: InsertedProposal;
  let reviewed: Preview;
  beforeAll(async () => {
    ({ ws, proposal } = await workspaceWithProposal());
    reviewed = await previewOk(ws, proposal.proposalId);
  });

  it('answers a pending preview as the preview route did', async () => {
    const res = await readOperation(ws, reviewed.operationId);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({
      schemaVersion: 1,
      operationId: reviewed.operationId,
      connectionId: ws.connectionId,
      proposalId: proposal.proposalId,
      status: 'previewed',
      approvalFingerprint: reviewed.approvalFingerprint,
      expiresAt: reviewed.expiresAt,
      review: reviewed.review,
    });
  });

  it('answers 404 operation_not_found for an unknown id, or another user’s, client’s or workspace’s operation', async () => {
    const otherClient: CliSession = await loginCli(baseUrl, ws.boot.sessionToken);
    const admin = await memberCli(ws, 'admin');
    const stranger = await workspaceWithProposal();
    const cases: [string, string, string][] = [
      [newId('cliop_'), ws.cli.accessToken, ws.boot.workspace.slug],
      ['cliop_x', ws.cli.accessToken, ws.boot.workspace.slug],
      [proposal.proposalId, ws.cli.accessToken, ws.boot.workspace.slug],
      [reviewed.operationId, otherClient.accessToken, ws.boot.workspace.slug],
      [reviewed.operationId, admin.cli.accessToken, ws.boot.workspace.slug],
      [reviewed.operationId, stranger.ws.cli.accessToken, stranger.ws.boot.workspace.slug],
    ];
    for (const [operationId, token, workspace] of cases) {
      expectError(await callRepairRoute(ctx, token, 'GET', operationUrl(operationId), { workspace }), 404, 'operation_not_found');
    }
  });

  it('needs the scope of the original action (403 insufficient_scope), after the 404', async () => {
    const approveOnly = await narrowedAccessToken(ctx, ws.cli, ['repairs:approve']);
    expect((await readOperation(ws, reviewed.operationId, approveOnly)).statusCode).toBe(200);
    const others = await narrowedAccessToken(ctx, ws.cli, ALL_BUT('repairs:approve'));
    expectError(await readOperation(ws, reviewed.operationId, others), 403, 'insufficient_scope');
    expectError(await readOperation(ws, newId('cliop_'), others), 404, 'operation_not_found');
    // The receipt of the applied decision needs repairs:approve too.
    expect((await apply(ws, reviewed.operationId, reviewed.approvalFingerprint)).statusCode).toBe(200);
    expectError(await readOperation(ws, reviewed.operationId, others), 403, 'insufficient_scope');
    expect((await readOperation(ws, reviewed.operationId, approveOnly)).json()).toMatchObject({
      action: 'repair.decision',
      replayed: true,
    });
  });

  it('needs the workspace header', async () => {
    expectError(await callRepairRoute(ctx, ws.cli.accessToken, 'GET', operationUrl(reviewed.operationId)), 400, 'workspace_required');
  });
});
