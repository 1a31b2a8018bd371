import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, expectError, newIdempotencyKey, type TestContext } from './helpers/context.js';
import { callRepairRoute, narrowedAccessToken, recordGeneration } from './helpers/repairDecisions.js';
import {
  createRepairTarget,
  driftIncident,
  requestRepair,
  startRepairWorld,
  type RepairTarget,
  type RepairWorld,
} from './helpers/repairs.js';

// One reviewed repair from drifted traffic to the exported bundle, through the real routes: the
// edge and the analyzer open the incident, the request route freezes the dataset and queues the
// proposal; the generation is recorded as the repair worker would (a candidate adding the drifted
// field); then preview, apply, export, and every receipt read back by its operation id.

let ctx: TestContext;
let world: RepairWorld;
let target: RepairTarget;
beforeAll(async () => {
  ctx = await createTestContext();
  world = await startRepairWorld(ctx);
  target = await createRepairTarget(world, 'sandbox');
});
afterAll(async () => {
  await world?.close();
  await ctx?.close();
});

const read = (operationId: string, token = target.cli.accessToken) =>
  callRepairRoute(ctx, token, 'GET', `/v1/cli/operations/${operationId}`, { workspace: target.owner.workspace.slug });

describe('a reviewed repair, request to export', () => {
  it('decides and exports a proposal the request route queued', async () => {
    const workspace = target.owner.workspace.slug;
    const incidentId = await driftIncident(world, target, 1);
    const requested = await requestRepair(ctx, { token: target.cli.accessToken, workspace, connectionId: target.connectionId, incidentId });
    expect(requested.statusCode, requested.body).toBe(202);
    const request = requested.json();
    const { proposalId, datasetId } = request.data;

    // The request's receipt is read with repairs:create, and not without it.
    expect((await read(request.operationId)).json()).toEqual({ ...request, replayed: true });
    const withoutCreate = await narrowedAccessToken(ctx, target.cli, ['repairs:approve', 'repairs:export', 'repairs:read']);
    expectError(await read(request.operationId, withoutCreate), 403, 'insufficient_scope');

    // Queued: nothing to decide yet.
    const previewUrl = `/v1/cli/connections/${target.connectionId}/repair-proposals/${proposalId}/decision-preview`;
    const body = { decision: 'approved', rationale: 'Items now carry a note; accept it as optional.' };
    expectError(
      await callRepairRoute(ctx, target.cli.accessToken, 'POST', previewUrl, { workspace, body }),
      409,
      'repair_proposal_not_approvable',
    );

    await recordGeneration(ctx, proposalId, { property: 'note' });
    const previewed = await callRepairRoute(ctx, target.cli.accessToken, 'POST', previewUrl, { workspace, body });
    expect(previewed.statusCode, previewed.body).toBe(201);
    const preview = previewed.json();
    expect(preview.review).toMatchObject({ proposalId, status: 'awaiting_approval', decision: 'approved' });
    expect((await read(preview.operationId)).json()).toEqual(preview);

    const applied = await callRepairRoute(ctx, target.cli.accessToken, 'POST', `/v1/cli/operations/${preview.operationId}/apply`, {
      workspace,
      body: { approvalFingerprint: preview.approvalFingerprint },
      idempotencyKey: newIdempotencyKey(),
    });
    expect(applied.statusCode, applied.body).toBe(200);
    expect(applied.json().data).toMatchObject({ proposalId, status: 'approved' });
    expect((await read(preview.operationId)).json()).toEqual({ ...applied.json(), replayed: true });

    // The proposal read shows the decision.
    const proposal = await callRepairRoute(
      ctx,
      target.cli.accessToken,
      'GET',
      `/v1/cli/connections/${target.connectionId}/repair-proposals/${proposalId}`,
      {
        workspace,
      },
    );
    expect(proposal.statusCode, proposal.body).toBe(200);
    expect(proposal.json().proposal).toMatchObject({ id: proposalId, status: 'approved' });

    const exported = await callRepairRoute(
      ctx,
      target.cli.accessToken,
      'POST',
      `/v1/cli/connections/${target.connectionId}/repair-proposals/${proposalId}/export`,
      {
        workspace,
        body: {},
        idempotencyKey: newIdempotencyKey(),
      },
    );
    expect(exported.statusCode, exported.body).toBe(200);
    const receipt = exported.json();
    expect(receipt).toMatchObject({ action: 'repair.export', targetId: proposalId, data: { marker: 'service-repair-export/1' } });
    const repairJson = receipt.data.files.find((file: { name: string }) => file.name === 'repair.json');
    expect(repairJson.content).toContain(datasetId);
    expect(repairJson.content).toContain('/properties/note');
    expect((await read(receipt.operationId)).json()).toEqual({ ...receipt, replayed: true });
  });
});
