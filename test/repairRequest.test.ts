import pg from 'pg';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { REPAIR_ADMISSIONS_PER_ACTOR } from '../management/repairs/repairAdmission.js';
import { REPAIR_PROPOSALS_CHANNEL } from '../management/repairs/repairRequest.js';
import { loadConfig } from '../shared/config.js';
import { fingerprint } from '../shared/fingerprint.js';
import { FIXTURE_REDACTION_POLICY } from '../shared/repairs/types.js';
import { loginCli, type CliSession } from './helpers/cli.js';
import { addWorkspaceMember, createConsoleUser } from './helpers/consoleUsers.js';
import {
  advanceClock,
  bootstrapWorkspace,
  callWithSession,
  createTestContext,
  newIdempotencyKey,
  resetClockAndHooks,
  type TestContext,
} from './helpers/context.js';
import { insertIncident } from './helpers/incidents.js';
import { envelope, sendEnvelopes } from './helpers/ingest.js';
import {
  CONFORMING,
  DRIFTED,
  createRepairTarget,
  driftIncident,
  failProposal,
  incidentOf,
  itemOperationKey,
  repairWrites,
  requestRepair,
  sendItems,
  startRepairWorld,
  type RepairTarget,
  type RepairWorld,
} from './helpers/repairs.js';

// 03 Reviewed repairs: POST …/incidents/{incidentId}/repair-proposals. Incidents come from drifted
// traffic through the real edge and analyzer; every refusal is checked to write nothing.

let ctx: TestContext;
let world: RepairWorld;
beforeAll(async () => {
  ctx = await createTestContext();
  world = await startRepairWorld(ctx);
});
afterAll(async () => {
  await world?.close();
  await ctx?.close();
});
afterEach(async () => {
  await resetClockAndHooks(ctx);
  ctx.deps.config.management.repairGeneration = 'enabled';
});

interface Caller {
  token: string;
  workspace: string;
}

const callerOf = (target: RepairTarget, cli: CliSession = target.cli): Caller => ({
  token: cli.accessToken,
  workspace: target.owner.workspace.slug,
});

function request(caller: Caller, connectionId: string, incidentId: string, options: Parameters<typeof requestRepair>[2] = {}) {
  return requestRepair(ctx, { ...caller, connectionId, incidentId }, options);
}

/** Asserts a refusal (status, exact body, Retry-After when given) and that the workspace has no new repair rows. */
async function expectRefused(
  target: RepairTarget,
  send: () => Promise<LightMyRequestResponse>,
  status: number,
  body: Record<string, unknown> | string,
  retryAfter?: number,
): Promise<LightMyRequestResponse> {
  const before = await repairWrites(ctx, target.owner.workspace.id);
  const res = await send();
  expect(res.statusCode, res.body).toBe(status);
  expect(res.json()).toEqual(typeof body === 'string' ? { error: body } : body);
  if (retryAfter !== undefined) expect(res.headers['retry-after']).toBe(String(retryAfter));
  expect(await repairWrites(ctx, target.owner.workspace.id)).toEqual(before);
  return res;
}

async function accepted(res: LightMyRequestResponse): Promise<{ operationId: string; proposalId: string; datasetId: string }> {
  expect(res.statusCode, res.body).toBe(202);
  const body = res.json();
  return { operationId: body.operationId, proposalId: body.data.proposalId, datasetId: body.data.datasetId };
}

describe('a repair request', () => {
  let target: RepairTarget;
  let incidentId: string;
  let eventIds: string[];

  beforeAll(async () => {
    target = await createRepairTarget(world, 'live');
    eventIds = await sendItems(world, target, 1, 3);
    // A conforming observation of the same operation is no evidence of the incident.
    await sendItems(world, target, 1, 1, { shape: CONFORMING });
    incidentId = await incidentOf(world, target.connectionId, itemOperationKey(1));
  });

  it('answers 202 with the repair.request receipt and queues a proposal on a frozen dataset, then notifies the worker', async () => {
    const listener = new pg.Client({ connectionString: ctx.deps.config.databaseUrl });
    await listener.connect();
    try {
      const notified = new Promise<string>((resolve) => listener.on('notification', (message) => resolve(message.payload ?? '')));
      await listener.query(`LISTEN ${REPAIR_PROPOSALS_CHANNEL}`);
      const key = newIdempotencyKey();
      const res = await request(callerOf(target), target.connectionId, incidentId, { key });
      expect(res.statusCode, res.body).toBe(202);
      const body = res.json();
      expect(body).toEqual({
        schemaVersion: 1,
        operationId: expect.stringMatching(/^cliop_[0-9a-z]{26}$/),
        action: 'repair.request',
        targetId: incidentId,
        connectionId: target.connectionId,
        status: 'completed',
        data: {
          proposalId: expect.stringMatching(/^rp_[0-9a-z]{26}$/),
          datasetId: expect.stringMatching(/^rds_[0-9a-z]{26}$/),
          status: 'queued',
        },
        completedAt: expect.any(String),
        replayed: false,
      });
      expect(await notified).toBe(body.data.proposalId);

      const proposal = (await ctx.deps.pool.query('SELECT * FROM repair_proposals WHERE id = $1', [body.data.proposalId])).rows[0];
      const operation = (
        await ctx.deps.pool.query('SELECT id FROM contract_operations WHERE contract_version_id = $1 AND operation_key = $2', [
          target.contractVersionId,
          itemOperationKey(1),
        ])
      ).rows[0];
      expect(proposal).toMatchObject({
        workspace_id: target.owner.workspace.id,
        account_id: target.owner.account.id,
        connection_id: target.connectionId,
        incident_id: incidentId,
        mode: 'live',
        environment_id: target.collector.environmentId,
        dataset_id: body.data.datasetId,
        contract_version_id: target.contractVersionId,
        contract_operation_id: operation.id,
        operation_key: itemOperationKey(1),
        status: 'queued',
        attempts: 0,
        error_code: null,
        candidate: null,
        validation: null,
        decision: null,
        requested_by_user_id: target.owner.user.id,
        requested_by_client_id: target.cli.clientId,
        request_operation_id: body.operationId,
      });

      const fixtures = [...eventIds].sort().map((observationId) => ({ observationId, shape: DRIFTED }));
      const dataset = (await ctx.deps.pool.query('SELECT * FROM replay_datasets WHERE id = $1', [body.data.datasetId])).rows[0];
      expect(dataset).toMatchObject({
        incident_id: incidentId,
        connection_id: target.connectionId,
        mode: 'live',
        contract_version_id: target.contractVersionId,
        contract_operation_id: operation.id,
        operation_key: itemOperationKey(1),
        fixture_count: 3,
        redaction_policy_version: FIXTURE_REDACTION_POLICY,
        observation_ids: fixtures.map((fixture) => fixture.observationId),
        fixtures,
        manifest_hash: fingerprint({ incidentId, contractOperationId: operation.id, fixtures }),
      });

      const stored = (
        await ctx.deps.pool.query('SELECT kind, user_id, cli_client_id, auth_epoch, status_code, receipt FROM operations WHERE id = $1', [
          body.operationId,
        ])
      ).rows[0];
      const epoch = (await ctx.deps.pool.query('SELECT auth_epoch FROM workspaces WHERE id = $1', [target.owner.workspace.id])).rows[0]
        .auth_epoch;
      expect(stored).toMatchObject({
        kind: 'repair.request',
        user_id: target.owner.user.id,
        cli_client_id: target.cli.clientId,
        status_code: 202,
      });
      expect(String(stored.auth_epoch)).toBe(String(epoch));
      const { replayed, ...receipt } = body;
      expect(replayed).toBe(false);
      expect(stored.receipt).toEqual(receipt);
      const audit = await ctx.deps.pool.query(
        'SELECT actor_type, actor_id, target_id, metadata FROM audit_events WHERE workspace_id = $1 AND action = $2',
        [target.owner.workspace.id, 'repair.request'],
      );
      expect(audit.rows).toEqual([
        {
          actor_type: 'user',
          actor_id: target.owner.user.id,
          target_id: incidentId,
          metadata: {
            operationId: body.operationId,
            connectionId: target.connectionId,
            proposalId: body.data.proposalId,
            datasetId: body.data.datasetId,
            actorClientId: target.cli.clientId,
          },
        },
      ]);
    } finally {
      await listener.end();
    }
  });
});

describe('Idempotency-Key replays', () => {
  let target: RepairTarget;
  let incidentId: string;
  let key: string;
  let original: Record<string, unknown>;

  beforeAll(async () => {
    target = await createRepairTarget(world, 'live');
    incidentId = await driftIncident(world, target, 1);
    key = newIdempotencyKey();
    const res = await request(callerOf(target), target.connectionId, incidentId, { key, body: {} });
    expect(res.statusCode, res.body).toBe(202);
    original = res.json();
  });

  it('answers a repeat of the same request with the same key 202 with the original receipt and replayed: true, writing nothing', async () => {
    const before = await repairWrites(ctx, target.owner.workspace.id);
    const res = await request(callerOf(target), target.connectionId, incidentId, { key, body: {} });
    expect(res.statusCode, res.body).toBe(202);
    expect(res.json()).toEqual({ ...original, replayed: true });
    expect(await repairWrites(ctx, target.owner.workspace.id)).toEqual(before);
  });

  it('answers the replay even while generation is disabled (a receipt recovers its original result)', async () => {
    ctx.deps.config.management.repairGeneration = 'disabled';
    const res = await request(callerOf(target), target.connectionId, incidentId, { key, body: {} });
    expect(res.statusCode, res.body).toBe(202);
    expect(res.json()).toEqual({ ...original, replayed: true });
  });

  it('refuses the key with a changed payload, another CLI client of the same user, or another user: 409 idempotency_conflict', async () => {
    const datasetId = (original.data as { datasetId: string }).datasetId;
    await expectRefused(
      target,
      () => request(callerOf(target), target.connectionId, incidentId, { key, body: { datasetId } }),
      409,
      'idempotency_conflict',
    );
    const otherIncident = await driftIncident(world, target, 2);
    await expectRefused(target, () => request(callerOf(target), target.connectionId, otherIncident, { key }), 409, 'idempotency_conflict');

    const secondClient = await loginCli(world.baseUrl, target.owner.sessionToken);
    await expectRefused(
      target,
      () => request(callerOf(target, secondClient), target.connectionId, incidentId, { key, body: {} }),
      409,
      'idempotency_conflict',
    );

    const admin = await createConsoleUser(ctx);
    await addWorkspaceMember(ctx, target.owner.workspace.id, admin.userId, 'admin');
    const adminCli = await loginCli(world.baseUrl, admin.sessionToken);
    await expectRefused(
      target,
      () => request(callerOf(target, adminCli), target.connectionId, incidentId, { key, body: {} }),
      409,
      'idempotency_conflict',
    );
  });

  it('refuses a replay under another authorization epoch: 403 authorization_changed', async () => {
    // Archiving and restoring the workspace moves its authorization epoch; the membership and the token stay.
    for (const action of ['archive', 'restore']) {
      const res = await callWithSession(ctx, target.owner.sessionToken, 'POST', `/workspaces/${target.owner.workspace.slug}/${action}`);
      expect(res.statusCode, res.body).toBe(200);
    }
    await expectRefused(
      target,
      () => request(callerOf(target), target.connectionId, incidentId, { key, body: {} }),
      403,
      'authorization_changed',
    );
    // A new key under the new epoch is a new request (the incident's proposal is still active).
    const pending = await expectRefused(target, () => request(callerOf(target), target.connectionId, incidentId), 409, {
      error: 'repair_already_pending',
      proposalId: (original.data as { proposalId: string }).proposalId,
    });
    expect(pending.headers['retry-after']).toBeUndefined();
  });
});

describe('refusals before the incident is looked at', () => {
  let target: RepairTarget;
  let incidentId: string;

  beforeAll(async () => {
    target = await createRepairTarget(world, 'live');
    incidentId = await driftIncident(world, target, 1);
  });

  it('needs an Idempotency-Key of 8 to 128 printable characters: 400 idempotency_key_required', async () => {
    for (const key of [null, 'short', 'has a space in it', 'x'.repeat(129)]) {
      await expectRefused(
        target,
        () => request(callerOf(target), target.connectionId, incidentId, { key }),
        400,
        'idempotency_key_required',
      );
    }
  });

  it('takes a body of {} or {datasetId} only: 400 invalid_repair_request', async () => {
    const bodies: unknown[] = [{ datasetId: 5 }, { datasetId: null }, { datasetId: 'rds_x', extra: true }, { reason: 'x' }, [], 'text', 7];
    for (const body of bodies) {
      await expectRefused(
        target,
        () => request(callerOf(target), target.connectionId, incidentId, { rawBody: JSON.stringify(body) }),
        400,
        'invalid_repair_request',
      );
    }
    const bare = () =>
      ctx.app.inject({
        method: 'POST',
        url: `/v1/cli/connections/${target.connectionId}/incidents/${incidentId}/repair-proposals`,
        headers: {
          authorization: `Bearer ${target.cli.accessToken}`,
          'x-service-workspace': target.owner.workspace.slug,
          'idempotency-key': newIdempotencyKey(),
        },
      });
    await expectRefused(target, bare, 400, 'invalid_repair_request');
  });

  it('answers 503 repair_generator_unavailable while the operator disabled generation (REPAIR_GENERATION=disabled)', async () => {
    ctx.deps.config.management.repairGeneration = 'disabled';
    await expectRefused(target, () => request(callerOf(target), target.connectionId, incidentId), 503, 'repair_generator_unavailable');
  });

  it('refuses viewers (403 cli_operation_forbidden), tokens without repairs:create (403 insufficient_scope) and foreign workspaces (404)', async () => {
    const viewer = await createConsoleUser(ctx);
    await addWorkspaceMember(ctx, target.owner.workspace.id, viewer.userId, 'viewer');
    const viewerCli = await loginCli(world.baseUrl, viewer.sessionToken);
    await expectRefused(
      target,
      () => request(callerOf(target, viewerCli), target.connectionId, incidentId),
      403,
      'cli_operation_forbidden',
    );

    const readOnly = await loginCli(world.baseUrl, target.owner.sessionToken, ['repairs:read', 'incidents:read', 'replays:read']);
    await expectRefused(target, () => request(callerOf(target, readOnly), target.connectionId, incidentId), 403, 'insufficient_scope');

    const stranger = await bootstrapWorkspace(ctx);
    const strangerCli = await loginCli(world.baseUrl, stranger.sessionToken);
    // The stranger names the target's workspace: not a member.
    await expectRefused(
      target,
      () => request({ token: strangerCli.accessToken, workspace: target.owner.workspace.slug }, target.connectionId, incidentId),
      404,
      'workspace_not_found',
    );
    // The stranger's own workspace with the target's connection and incident: not found there.
    await expectRefused(
      target,
      () => request({ token: strangerCli.accessToken, workspace: stranger.workspace.slug }, target.connectionId, incidentId),
      404,
      'connection_not_found',
    );
  });

  it('needs the exact int_ connection of the workspace and an incident of it: 400 connection_required, 404 connection_not_found, incident_not_found', async () => {
    await expectRefused(target, () => request(callerOf(target), '', incidentId), 400, 'connection_required');
    for (const connectionId of [target.collector.workspaceIntegrationId, 'int_00000000000000000000000000', 'x']) {
      await expectRefused(target, () => request(callerOf(target), connectionId, incidentId), 404, 'connection_not_found');
    }
    const second = await createRepairTarget(world, 'live', target.owner);
    const secondIncident = await driftIncident(world, second, 1);
    for (const id of [secondIncident, 'inc_00000000000000000000000000', 'not-an-id']) {
      await expectRefused(target, () => request(callerOf(target), target.connectionId, id), 404, 'incident_not_found');
    }
  });
});

describe('incidents a repair cannot fix: 409 incident_has_no_repair_assertion', () => {
  let target: RepairTarget;

  beforeAll(async () => {
    target = await createRepairTarget(world, 'live');
  });

  it('refuses unknown-operation and transport-errors incidents from real traffic', async () => {
    await sendItems(world, target, 1, 2, { shape: CONFORMING });
    const { collector } = target;
    const unknown = { ...envelope(collector), transport: { ...(envelope(collector).transport as object), routeTemplate: '/v1/unknown' } };
    const broken = {
      ...envelope(collector),
      transport: { ...(envelope(collector).transport as object), routeTemplate: '/v1/items/1/{itemId}', statusCode: 0 },
    };
    expect((await sendEnvelopes(world.edge, collector, [unknown, broken])).status).toBe(202);
    const unknownIncident = await incidentOf(world, target.connectionId, 'GET /v1/unknown:response:200', 'unknown-operation');
    const transportIncident = await incidentOf(world, target.connectionId, 'GET /v1/items/1/{itemId}:response:0', 'transport-errors');
    for (const id of [unknownIncident, transportIncident]) {
      await expectRefused(target, () => request(callerOf(target), target.connectionId, id), 409, 'incident_has_no_repair_assertion');
    }
  });

  it('refuses an expected-outcome-missing incident and a schema-drift incident whose contract operation is gone', async () => {
    // Reconciliation incidents need a rule and a deadline; schema drift with no contract version
    // or an operation its version does not declare cannot come from the analyzer: rows as it writes them.
    const incidentTarget = {
      workspaceId: target.owner.workspace.id,
      integrationId: target.collector.workspaceIntegrationId,
      connectionId: target.connectionId,
      environmentId: target.collector.environmentId,
      mode: 'live' as const,
    };
    const missing = await insertIncident(ctx, incidentTarget, { createdAt: '2025-03-01T10:00:00.000Z', kind: 'expected-outcome-missing' });
    const undeclared = await insertIncident(ctx, incidentTarget, {
      createdAt: '2025-03-01T10:00:00.000Z',
      operationKey: 'GET /v1/gone:response:200',
    });
    await ctx.deps.pool.query('UPDATE incidents SET contract_version_id = $2 WHERE id = $1', [undeclared, target.contractVersionId]);
    const versionless = await insertIncident(ctx, incidentTarget, {
      createdAt: '2025-03-01T10:00:00.000Z',
      operationKey: itemOperationKey(5),
    });
    await ctx.deps.pool.query('UPDATE incidents SET contract_version_id = NULL WHERE id = $1', [versionless]);
    for (const id of [missing, undeclared, versionless]) {
      await expectRefused(target, () => request(callerOf(target), target.connectionId, id), 409, 'incident_has_no_repair_assertion');
    }
  });
});

describe('one active proposal per incident', () => {
  let target: RepairTarget;

  beforeAll(async () => {
    target = await createRepairTarget(world, 'live');
  });

  it('answers 409 repair_already_pending with the active proposal, until it ends', async () => {
    const incidentId = await driftIncident(world, target, 1);
    const first = await accepted(await request(callerOf(target), target.connectionId, incidentId));
    await expectRefused(target, () => request(callerOf(target), target.connectionId, incidentId), 409, {
      error: 'repair_already_pending',
      proposalId: first.proposalId,
    });
    for (const status of ['generating', 'validating', 'awaiting_approval']) {
      await ctx.deps.pool.query('UPDATE repair_proposals SET status = $2 WHERE id = $1', [first.proposalId, status]);
      await expectRefused(target, () => request(callerOf(target), target.connectionId, incidentId), 409, {
        error: 'repair_already_pending',
        proposalId: first.proposalId,
      });
    }
    await failProposal(ctx, first.proposalId);
    const second = await accepted(await request(callerOf(target), target.connectionId, incidentId));
    expect(second.proposalId).not.toBe(first.proposalId);
    // The same evidence freezes to the same dataset.
    expect(second.datasetId).toBe(first.datasetId);
  });

  it('two simultaneous requests for one incident: one 202, one 409 repair_already_pending naming it', async () => {
    const incidentId = await driftIncident(world, target, 2);
    const before = await repairWrites(ctx, target.owner.workspace.id);
    const answers = await Promise.all([0, 1].map(() => request(callerOf(target), target.connectionId, incidentId)));
    const statuses = answers.map((res) => res.statusCode).sort();
    expect(statuses, answers.map((res) => res.body).join('\n')).toEqual([202, 409]);
    const won = answers.find((res) => res.statusCode === 202)!.json();
    expect(answers.find((res) => res.statusCode === 409)!.json()).toEqual({
      error: 'repair_already_pending',
      proposalId: won.data.proposalId,
    });
    expect(await repairWrites(ctx, target.owner.workspace.id)).toEqual({
      proposals: before.proposals + 1,
      datasets: before.datasets + 1,
      operations: before.operations + 1,
      audits: before.audits + 1,
    });
  });
});

describe('Sandbox: one account job at a time and 3 proposals a month', () => {
  it('answers 429 sandbox_execution_busy with Retry-After while a Sandbox proposal of the account is in progress', async () => {
    const target = await createRepairTarget(world, 'sandbox');
    const first = await driftIncident(world, target, 1);
    const second = await driftIncident(world, target, 2);
    const queued = await accepted(await request(callerOf(target), target.connectionId, first));
    for (const status of ['queued', 'generating', 'validating']) {
      await ctx.deps.pool.query('UPDATE repair_proposals SET status = $2 WHERE id = $1', [queued.proposalId, status]);
      await expectRefused(target, () => request(callerOf(target), target.connectionId, second), 429, 'sandbox_execution_busy', 30);
    }
    // Another workspace of the same account shares the account's job.
    const sibling = await createRepairTarget(world, 'sandbox', await bootstrapWorkspace(ctx, { email: target.owner.user.email }));
    expect(sibling.owner.account.id).toBe(target.owner.account.id);
    const siblingIncident = await driftIncident(world, sibling, 1);
    await expectRefused(
      sibling,
      () => request(callerOf(sibling), sibling.connectionId, siblingIncident),
      429,
      'sandbox_execution_busy',
      30,
    );
    // Awaiting approval, the job is done: the next Sandbox request is admitted.
    await ctx.deps.pool.query("UPDATE repair_proposals SET status = 'awaiting_approval' WHERE id = $1", [queued.proposalId]);
    await accepted(await request(callerOf(target), target.connectionId, second));
  });

  it('answers 429 sandbox_repair_monthly_limit {limit: 3, resetsAt} once the account made 3 this UTC month, whatever became of them', async () => {
    const target = await createRepairTarget(world, 'sandbox');
    const incidents: string[] = [];
    for (let n = 1; n <= 4; n += 1) incidents.push(await driftIncident(world, target, n));
    for (const incidentId of incidents.slice(0, 3)) {
      const { proposalId } = await accepted(await request(callerOf(target), target.connectionId, incidentId));
      await failProposal(ctx, proposalId);
    }
    await ctx.deps.clock.sync();
    const now = new Date(ctx.deps.clock.nowMs());
    const resetsAt = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
    const res = await expectRefused(target, () => request(callerOf(target), target.connectionId, incidents[3]), 429, {
      error: 'sandbox_repair_monthly_limit',
      limit: 3,
      resetsAt: resetsAt.toISOString(),
    });
    const retryAfter = Number(res.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(Math.ceil((resetsAt.getTime() - now.getTime()) / 1000));

    // A Live request of the same account is not counted against it.
    const live = await createRepairTarget(world, 'live', target.owner);
    await accepted(await request(callerOf(live), live.connectionId, await driftIncident(world, live, 1)));

    // In the next UTC month the account has 3 again (its access token has expired by then: a new login).
    await advanceClock(ctx, resetsAt.getTime() - now.getTime() + 1000);
    const cli = await loginCli(world.baseUrl, target.owner.sessionToken);
    await accepted(await request(callerOf(target, cli), target.connectionId, incidents[3]));
  });

  it('two simultaneous requests for the third monthly proposal of an account: one is admitted', async () => {
    const target = await createRepairTarget(world, 'sandbox');
    const incidents: string[] = [];
    for (let n = 1; n <= 4; n += 1) incidents.push(await driftIncident(world, target, n));
    for (const incidentId of incidents.slice(0, 2)) {
      const { proposalId } = await accepted(await request(callerOf(target), target.connectionId, incidentId));
      await failProposal(ctx, proposalId);
    }
    const answers = await Promise.all(incidents.slice(2).map((incidentId) => request(callerOf(target), target.connectionId, incidentId)));
    const statuses = answers.map((res) => res.statusCode).sort();
    expect(statuses, answers.map((res) => res.body).join('\n')).toEqual([202, 429]);
    // The account's requests are serialised: the loser meets the winner's queued job (or, had the
    // winner finished already, the spent month), never a fourth proposal of the account.
    const refused = answers.find((res) => res.statusCode === 429)!.json().error;
    expect(['sandbox_execution_busy', 'sandbox_repair_monthly_limit']).toContain(refused);
    const { rows } = await ctx.deps.pool.query(
      "SELECT count(*)::int AS n FROM repair_proposals WHERE account_id = $1 AND mode = 'sandbox'",
      [target.owner.account.id],
    );
    expect(rows[0].n).toBe(3);
  });
});

describe('workspace limits', () => {
  it('admits 5 requests of an actor a UTC minute (429 workload_rate_limited), and 10 proposals in progress per workspace (429 repair_capacity_exceeded)', async () => {
    const target = await createRepairTarget(world, 'live');
    const incidents: string[] = [];
    for (let n = 1; n <= 11; n += 1) incidents.push(await driftIncident(world, target, n, 1));
    // The next UTC minute starts the count afresh.
    await ctx.deps.clock.sync();
    await advanceClock(ctx, 60_000 - (ctx.deps.clock.nowMs() % 60_000) + 100);
    for (const incidentId of incidents.slice(0, REPAIR_ADMISSIONS_PER_ACTOR))
      await accepted(await request(callerOf(target), target.connectionId, incidentId));
    const limited = await expectRefused(
      target,
      () => request(callerOf(target), target.connectionId, incidents[5]),
      429,
      'workload_rate_limited',
    );
    const retryAfter = Number(limited.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);

    await advanceClock(ctx, 60_000);
    for (const incidentId of incidents.slice(5, 10)) await accepted(await request(callerOf(target), target.connectionId, incidentId));
    await advanceClock(ctx, 60_000);
    await expectRefused(target, () => request(callerOf(target), target.connectionId, incidents[10]), 429, 'repair_capacity_exceeded', 60);

    // Awaiting approval is not in progress: a place frees.
    const { rows } = await ctx.deps.pool.query("SELECT id FROM repair_proposals WHERE workspace_id = $1 AND status = 'queued' LIMIT 1", [
      target.owner.workspace.id,
    ]);
    await ctx.deps.pool.query("UPDATE repair_proposals SET status = 'awaiting_approval' WHERE id = $1", [rows[0].id]);
    await accepted(await request(callerOf(target), target.connectionId, incidents[10]));
  });
});

describe('replay evidence', () => {
  let target: RepairTarget;

  beforeAll(async () => {
    target = await createRepairTarget(world, 'live');
  });

  it('answers 409 replay_evidence_capacity_exceeded {limit: 1000, total} for an incident of more than 1,000 observations', async () => {
    const incidentId = await driftIncident(world, target, 1, 1050);
    const { rows } = await ctx.deps.pool.query(
      'SELECT cardinality(observation_ids) AS ids, evidence_truncated FROM incidents WHERE id = $1',
      [incidentId],
    );
    expect(rows[0]).toEqual({ ids: 1000, evidence_truncated: true });
    await expectRefused(target, () => request(callerOf(target), target.connectionId, incidentId), 409, {
      error: 'replay_evidence_capacity_exceeded',
      limit: 1000,
      total: 1050,
    });
  });

  it('freezes every inspected observation and compares with the analyzer, refusing evidence that is gone, uninspected or without findings', async () => {
    // The analyzer links only observations it found drifted and inspected, and ClickHouse keeps
    // them for the incident's life in this test: the incident's evidence is rewritten in SQL to
    // model an observation that aged out, and evidence with nothing to repair.
    const incidentId = await driftIncident(world, target, 2);
    const [drifted] = (await ctx.deps.pool.query('SELECT observation_ids FROM incidents WHERE id = $1', [incidentId])).rows.map(
      (row) => row.observation_ids as string[],
    );
    const uninspected = await sendItems(world, target, 2, 2, { inspected: false });
    const conforming = await sendItems(world, target, 2, 2, { shape: CONFORMING });
    await incidentOf(world, target.connectionId, itemOperationKey(2));
    const setEvidence = (ids: string[]) =>
      ctx.deps.pool.query('UPDATE incidents SET observation_ids = $2, affected_records = $3 WHERE id = $1', [incidentId, ids, ids.length]);

    await setEvidence([...drifted, 'evt_aged_out_0000000000000000']);
    await expectRefused(target, () => request(callerOf(target), target.connectionId, incidentId), 409, 'repair_evidence_unavailable');
    await setEvidence(uninspected);
    await expectRefused(target, () => request(callerOf(target), target.connectionId, incidentId), 409, 'replay_evidence_unavailable');
    await setEvidence([...uninspected, ...conforming]);
    await expectRefused(target, () => request(callerOf(target), target.connectionId, incidentId), 409, 'repair_evidence_unavailable');

    // Drifted, conforming and uninspected together: the inspected ones are frozen, sorted by id.
    await setEvidence([...conforming, ...uninspected, ...drifted]);
    const { datasetId } = await accepted(await request(callerOf(target), target.connectionId, incidentId));
    const dataset = (
      await ctx.deps.pool.query('SELECT observation_ids, fixtures, fixture_count FROM replay_datasets WHERE id = $1', [datasetId])
    ).rows[0];
    const shapes = new Map<string, unknown>([
      ...drifted.map((id): [string, unknown] => [id, DRIFTED]),
      ...conforming.map((id): [string, unknown] => [id, CONFORMING]),
    ]);
    const ids = [...shapes.keys()].sort();
    expect(dataset).toEqual({
      observation_ids: ids,
      fixture_count: 5,
      fixtures: ids.map((observationId) => ({ observationId, shape: shapes.get(observationId) })),
    });
  });

  it('honours the unchecked pointers of the operation, as the analyzer does', async () => {
    const incidentId = await driftIncident(world, target, 3);
    const operation = (
      await ctx.deps.pool.query('SELECT id FROM contract_operations WHERE contract_version_id = $1 AND operation_key = $2', [
        target.contractVersionId,
        itemOperationKey(3),
      ])
    ).rows[0];
    // Contract versions are immutable; this models a registration whose importer left the root
    // unchecked (a oneOf, say): an undeclared field there is no finding.
    await ctx.deps.pool.query(
      `UPDATE contract_operations SET unchecked = '[{"schemaPointer": "", "reason": "oneOf"}]'::jsonb WHERE id = $1`,
      [operation.id],
    );
    try {
      await expectRefused(target, () => request(callerOf(target), target.connectionId, incidentId), 409, 'repair_evidence_unavailable');
    } finally {
      await ctx.deps.pool.query("UPDATE contract_operations SET unchecked = '[]'::jsonb WHERE id = $1", [operation.id]);
    }
    await accepted(await request(callerOf(target), target.connectionId, incidentId));
  });
});

describe('an explicit datasetId', () => {
  let target: RepairTarget;

  beforeAll(async () => {
    target = await createRepairTarget(world, 'live');
  });

  it('reuses a dataset of the incident with the same evidence; another incident’s or an unknown one is 404 replay_dataset_not_found', async () => {
    const incidentId = await driftIncident(world, target, 1);
    const otherIncident = await driftIncident(world, target, 2);
    const first = await accepted(await request(callerOf(target), target.connectionId, incidentId));
    const other = await accepted(await request(callerOf(target), target.connectionId, otherIncident));
    await failProposal(ctx, first.proposalId);
    for (const datasetId of [other.datasetId, 'rds_00000000000000000000000000', 'nope']) {
      await expectRefused(
        target,
        () => request(callerOf(target), target.connectionId, incidentId, { body: { datasetId } }),
        404,
        'replay_dataset_not_found',
      );
    }
    const again = await accepted(
      await request(callerOf(target), target.connectionId, incidentId, { body: { datasetId: first.datasetId } }),
    );
    expect(again.datasetId).toBe(first.datasetId);
    expect(await repairWrites(ctx, target.owner.workspace.id)).toMatchObject({ datasets: 2, proposals: 3 });
  });

  it('answers 409 replay_evidence_snapshot_changed once the incident’s evidence moved; without it a fresh dataset is frozen', async () => {
    const incidentId = await driftIncident(world, target, 3);
    const first = await accepted(await request(callerOf(target), target.connectionId, incidentId));
    await failProposal(ctx, first.proposalId);
    await sendItems(world, target, 3, 1);
    await incidentOf(world, target.connectionId, itemOperationKey(3));
    await expectRefused(
      target,
      () => request(callerOf(target), target.connectionId, incidentId, { body: { datasetId: first.datasetId } }),
      409,
      'replay_evidence_snapshot_changed',
    );
    const fresh = await accepted(await request(callerOf(target), target.connectionId, incidentId));
    expect(fresh.datasetId).not.toBe(first.datasetId);
    const { rows } = await ctx.deps.pool.query(
      'SELECT id, fixture_count FROM replay_datasets WHERE incident_id = $1 ORDER BY fixture_count',
      [incidentId],
    );
    expect(rows).toEqual([
      { id: first.datasetId, fixture_count: 3 },
      { id: fresh.datasetId, fixture_count: 4 },
    ]);
  });
});

describe('REPAIR_GENERATION', () => {
  it('is enabled by default, can be disabled, and refuses anything else at start-up', () => {
    const env = { ...process.env, REPAIR_GENERATION: undefined };
    expect(loadConfig(env).management.repairGeneration).toBe('enabled');
    expect(loadConfig({ ...env, REPAIR_GENERATION: 'disabled' }).management.repairGeneration).toBe('disabled');
    expect(() => loadConfig({ ...env, REPAIR_GENERATION: 'off' })).toThrow(/REPAIR_GENERATION/);
  });
});
