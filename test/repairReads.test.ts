import type { LightMyRequestResponse } from 'fastify';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { insertApiKey } from '../management/apiKeys/apiKeyStore.js';
import { newId } from '../shared/ids.js';
import { callCli, cliWriteState, loginCli } from './helpers/cli.js';
import { addWorkspaceMember, createConsoleUser } from './helpers/consoleUsers.js';
import {
  advanceClock,
  bootstrapWorkspace,
  callWithKey,
  createTestContext,
  expectError,
  resetClockAndHooks,
  type TestContext,
} from './helpers/context.js';
import {
  createRepairTarget,
  driftIncident,
  failProposal,
  incidentOf,
  itemOperationKey,
  requestRepair,
  sendItems,
  startRepairWorld,
  type RepairTarget,
  type RepairWorld,
} from './helpers/repairs.js';

// 03 Evidence reads of repairs: proposals, replay datasets and runs of one exact connection
// (CLI tokens), and the API key read of a proposal (00-decisions §5).

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
});

const base = (connectionId: string) => `/v1/cli/connections/${connectionId}`;
const proposalUrl = (connectionId: string, id: string) => `${base(connectionId)}/repair-proposals/${id}`;
const proposalsUrl = (connectionId: string, incidentId: string) => `${base(connectionId)}/incidents/${incidentId}/repair-proposals`;
const datasetsUrl = (connectionId: string, incidentId: string) => `${base(connectionId)}/incidents/${incidentId}/replay-datasets`;
const datasetUrl = (connectionId: string, id: string) => `${base(connectionId)}/replay-datasets/${id}`;
const runUrl = (connectionId: string, id: string) => `${base(connectionId)}/replay-runs/${id}`;

/** Requests a repair of the incident (202 expected) and returns the receipt's data. */
async function requested(target: RepairTarget, incidentId: string): Promise<{ proposalId: string; datasetId: string }> {
  const res = await requestRepair(ctx, {
    token: target.cli.accessToken,
    workspace: target.owner.workspace.slug,
    connectionId: target.connectionId,
    incidentId,
  });
  expect(res.statusCode, res.body).toBe(202);
  return res.json().data;
}

function read(target: RepairTarget, url: string, token = target.cli.accessToken): Promise<LightMyRequestResponse> {
  return callCli(ctx, token, 'GET', url, { workspace: target.owner.workspace.slug });
}

/** A 200 answer, uncached; its parsed body. */
async function ok(res: LightMyRequestResponse) {
  expect(res.statusCode, res.body).toBe(200);
  expect(res.headers['cache-control']).toBe('no-store');
  return res.json();
}

/** A refused read: status and code, and nothing written. */
async function expectRefused(
  target: RepairTarget,
  send: () => Promise<LightMyRequestResponse>,
  status: number,
  error: string,
): Promise<void> {
  const before = await cliWriteState(ctx, target.owner.user.id);
  expectError(await send(), status, error);
  expect(await cliWriteState(ctx, target.owner.user.id)).toEqual(before);
}

/** Walks a list page by page with `limit`, returning the ids in order and the pages' cursors. */
async function walk(target: RepairTarget, url: string, limit: number): Promise<{ ids: string[]; cursors: string[] }> {
  const ids: string[] = [];
  const cursors: string[] = [];
  let cursor: string | null = null;
  do {
    const body = await ok(await read(target, `${url}?limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`));
    expect(body.items.length).toBeLessThanOrEqual(limit);
    ids.push(...body.items.map((item: { id: string }) => item.id));
    cursor = body.nextCursor;
    if (cursor) cursors.push(cursor);
  } while (cursor);
  return { ids, cursors };
}

describe('repair proposals', () => {
  let target: RepairTarget;
  let incidentId: string;
  let proposalIds: string[];
  let datasetId: string;

  beforeAll(async () => {
    target = await createRepairTarget(world, 'live');
    incidentId = await driftIncident(world, target, 1);
    proposalIds = [];
    // Five proposals of one incident, each ended as the repair worker would (SQL: failProposal).
    for (let i = 0; i < 5; i += 1) {
      const data = await requested(target, incidentId);
      datasetId = data.datasetId;
      proposalIds.push(data.proposalId);
      if (i < 4) await failProposal(ctx, data.proposalId);
    }
  });

  it('reads one proposal as {schemaVersion, proposal} with exactly the fields of 03', async () => {
    const body = await ok(await read(target, proposalUrl(target.connectionId, proposalIds[4])));
    expect(body).toEqual({
      schemaVersion: 1,
      proposal: {
        id: proposalIds[4],
        incidentId,
        connectionId: target.connectionId,
        mode: 'live',
        environmentId: target.collector.environmentId,
        status: 'queued',
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
        errorCode: null,
        validation: null,
        decision: null,
      },
    });
    const failed = await ok(await read(target, proposalUrl(target.connectionId, proposalIds[0])));
    expect(failed.proposal).toMatchObject({ status: 'failed', errorCode: 'execution_attempts_exhausted' });
  });

  it('shows validation and decision as recorded, and never an internal error text or the candidate', async () => {
    const [id] = proposalIds;
    // Written by the validation worker and the decision routes (neither is part of this test).
    const validation = {
      id: newId('rval_'),
      valid: true,
      replayPassed: true,
      replayRunId: newId('rrun_'),
      replayStatus: 'passed',
      adapterFingerprint: `sha256:${'a'.repeat(64)}`,
      schemaChecksFingerprint: `sha256:${'b'.repeat(64)}`,
    };
    const decision = { status: 'rejected', approvalRecordId: newId('rapr_'), decidedAt: '2025-03-01T10:00:00.000Z' };
    await ctx.deps.pool.query(
      `UPDATE repair_proposals SET status = 'rejected', error_code = 'pg: relation "x" does not exist', validation = $2, decision = $3,
              candidate = '{"schema": {"secret": true}}', candidate_fingerprint = 'sha256:x' WHERE id = $1`,
      [id, { ...validation, internal: 'dropped' }, decision],
    );
    const { proposal } = await ok(await read(target, proposalUrl(target.connectionId, id)));
    expect(proposal).toMatchObject({ status: 'rejected', errorCode: 'service_unavailable', validation, decision });
    expect(Object.keys(proposal.validation).sort()).toEqual(Object.keys(validation).sort());
    expect(JSON.stringify(proposal)).not.toContain('secret');

    // A validation recorded before its replay ran lacks the replay's members: they read as null.
    await ctx.deps.pool.query('UPDATE repair_proposals SET validation = $2 WHERE id = $1', [
      proposalIds[1],
      { id: validation.id, valid: false },
    ]);
    const partial = await ok(await read(target, proposalUrl(target.connectionId, proposalIds[1])));
    expect(partial.proposal.validation).toEqual({
      id: validation.id,
      valid: false,
      replayPassed: false,
      replayRunId: null,
      replayStatus: null,
      adapterFingerprint: null,
      schemaChecksFingerprint: null,
    });
  });

  it('answers 404 repair_proposal_not_found for an unknown, malformed or another connection’s proposal, and refuses query parameters', async () => {
    const second = await createRepairTarget(world, 'live', target.owner);
    // The owner made 5 requests this minute (03 Limits, repair admission): the next one is in the next minute.
    await advanceClock(ctx, 60_000);
    const secondProposal = (await requested(second, await driftIncident(world, second, 1))).proposalId;
    for (const id of [secondProposal, 'rp_00000000000000000000000000', 'x', datasetId]) {
      await expectRefused(target, () => read(target, proposalUrl(target.connectionId, id)), 404, 'repair_proposal_not_found');
    }
    // Through its own connection it is found.
    await ok(await read(target, proposalUrl(second.connectionId, secondProposal)));
    await expectRefused(
      target,
      () => read(target, `${proposalUrl(target.connectionId, proposalIds[4])}?mode=live`),
      400,
      'invalid_evidence_query',
    );
    await expectRefused(target, () => read(target, proposalUrl('', proposalIds[4])), 400, 'connection_required');
    await expectRefused(
      target,
      () => read(target, proposalUrl(target.collector.workspaceIntegrationId, proposalIds[4])),
      404,
      'connection_not_found',
    );
  });

  it('lists an incident’s proposals newest first, page by page, with a cursor bound to the incident and the list', async () => {
    const all = await ok(await read(target, proposalsUrl(target.connectionId, incidentId)));
    expect(Object.keys(all).sort()).toEqual(['items', 'nextCursor', 'schemaVersion']);
    expect(all.nextCursor).toBeNull();
    expect(all.items.map((item: { id: string }) => item.id)).toEqual([...proposalIds].reverse());
    expect(all.items[0]).toEqual({
      id: proposalIds[4],
      status: 'queued',
      datasetId,
      validationRunId: null,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
      errorCode: null,
    });
    const { ids, cursors } = await walk(target, proposalsUrl(target.connectionId, incidentId), 2);
    expect(ids).toEqual([...proposalIds].reverse());
    expect(cursors).toHaveLength(2);

    // The cursor of this incident's list, on another incident's list or on the dataset list.
    const otherIncident = await driftIncident(world, target, 2);
    const cursor = encodeURIComponent(cursors[0]);
    await expectRefused(
      target,
      () => read(target, `${proposalsUrl(target.connectionId, otherIncident)}?cursor=${cursor}`),
      400,
      'invalid_evidence_cursor',
    );
    await expectRefused(
      target,
      () => read(target, `${datasetsUrl(target.connectionId, incidentId)}?cursor=${cursor}`),
      400,
      'invalid_evidence_cursor',
    );
    const tampered = cursors[0].slice(0, -1) + (cursors[0].endsWith('A') ? 'B' : 'A');
    for (const bad of [tampered, 'abc', '']) {
      await expectRefused(
        target,
        () => read(target, `${proposalsUrl(target.connectionId, incidentId)}?cursor=${encodeURIComponent(bad)}`),
        400,
        'invalid_evidence_cursor',
      );
    }
    // An incident without proposals: an empty page.
    expect(await ok(await read(target, proposalsUrl(target.connectionId, otherIncident)))).toEqual({
      schemaVersion: 1,
      items: [],
      nextCursor: null,
    });
  });

  it('checks limit and query members (400 invalid_evidence_query), the connection and the incident (404)', async () => {
    for (const query of ['limit=0', 'limit=101', 'limit=abc', 'limit=01', 'status=open', 'limit=1&limit=2']) {
      await expectRefused(
        target,
        () => read(target, `${proposalsUrl(target.connectionId, incidentId)}?${query}`),
        400,
        'invalid_evidence_query',
      );
    }
    const stranger = await createRepairTarget(world, 'live');
    const strangerIncident = await driftIncident(world, stranger, 1);
    await expectRefused(target, () => read(target, proposalsUrl(target.connectionId, strangerIncident)), 404, 'incident_not_found');
    await expectRefused(target, () => read(target, proposalsUrl(stranger.connectionId, strangerIncident)), 404, 'connection_not_found');
    await expectRefused(
      target,
      () => read(target, proposalsUrl(target.connectionId, 'inc_00000000000000000000000000')),
      404,
      'incident_not_found',
    );
  });
});

describe('replay datasets and runs', () => {
  let target: RepairTarget;
  let incidentId: string;
  let datasetIds: string[];
  let proposalId: string;

  beforeAll(async () => {
    target = await createRepairTarget(world, 'live');
    incidentId = await driftIncident(world, target, 1, 1);
    datasetIds = [];
    // Three datasets: the evidence grows by one observation between requests.
    for (let i = 0; i < 3; i += 1) {
      if (i > 0) {
        await sendItems(world, target, 1, 1);
        await incidentOf(world, target.connectionId, itemOperationKey(1));
      }
      const data = await requested(target, incidentId);
      datasetIds.push(data.datasetId);
      proposalId = data.proposalId;
      if (i < 2) await failProposal(ctx, data.proposalId);
    }
  });

  it('reads a dataset without its fixtures, and lists the incident’s datasets newest first', async () => {
    const { dataset } = await ok(await read(target, datasetUrl(target.connectionId, datasetIds[0])));
    const row = (await ctx.deps.pool.query('SELECT manifest_hash FROM replay_datasets WHERE id = $1', [datasetIds[0]])).rows[0];
    expect(dataset).toEqual({
      id: datasetIds[0],
      incidentId,
      connectionId: target.connectionId,
      mode: 'live',
      manifestHash: row.manifest_hash,
      fixtureCount: 1,
      redactionPolicyVersion: 'service-fixture-shapes/1',
      createdAt: expect.any(String),
    });
    const { ids, cursors } = await walk(target, datasetsUrl(target.connectionId, incidentId), 2);
    expect(ids).toEqual([...datasetIds].reverse());
    expect(cursors).toHaveLength(1);
    await expectRefused(
      target,
      () => read(target, `${proposalsUrl(target.connectionId, incidentId)}?cursor=${encodeURIComponent(cursors[0])}`),
      400,
      'invalid_evidence_cursor',
    );
    const all = await ok(await read(target, datasetsUrl(target.connectionId, incidentId)));
    expect(all.items.map((item: { fixtureCount: number }) => item.fixtureCount)).toEqual([3, 2, 1]);
    expect(JSON.stringify(all)).not.toContain('fixtures');
  });

  it('answers 404 replay_dataset_not_found for an unknown or another connection’s dataset, and refuses query parameters', async () => {
    const other = await createRepairTarget(world, 'live', target.owner);
    const otherDataset = (await requested(other, await driftIncident(world, other, 1))).datasetId;
    for (const id of [otherDataset, 'rds_00000000000000000000000000', proposalId]) {
      await expectRefused(target, () => read(target, datasetUrl(target.connectionId, id)), 404, 'replay_dataset_not_found');
    }
    await expectRefused(
      target,
      () => read(target, `${datasetUrl(target.connectionId, datasetIds[0])}?limit=1`),
      400,
      'invalid_evidence_query',
    );
    await expectRefused(
      target,
      () => read(target, `${datasetsUrl(target.connectionId, incidentId)}?limit=0`),
      400,
      'invalid_evidence_query',
    );
  });

  it('reads a replay run with exactly the fields of 03; 404 replay_run_not_found otherwise', async () => {
    // Replay runs are recorded by the validation worker (not part of this test): one row as it writes it.
    const runId = newId('rrun_');
    await ctx.deps.pool.query(
      `INSERT INTO replay_runs (id, workspace_id, dataset_id, proposal_id, connection_id, mode, status, adapter_fingerprint, adapter_version,
                                error_code, fixture_count, conforming_count, queued_at, started_at, finished_at)
       VALUES ($1, $2, $3, $4, $5, 'live', 'passed', $6, 'service-shape-compare/1', NULL, 3, 3,
               '2025-03-01T10:00:00Z', '2025-03-01T10:00:01Z', '2025-03-01T10:00:02Z')`,
      [runId, target.owner.workspace.id, datasetIds[2], proposalId, target.connectionId, `sha256:${'c'.repeat(64)}`],
    );
    const body = await ok(await read(target, runUrl(target.connectionId, runId)));
    expect(body).toEqual({
      schemaVersion: 1,
      run: {
        id: runId,
        datasetId: datasetIds[2],
        connectionId: target.connectionId,
        mode: 'live',
        status: 'passed',
        adapterFingerprint: `sha256:${'c'.repeat(64)}`,
        adapterVersion: 'service-shape-compare/1',
        errorCode: null,
        queuedAt: '2025-03-01T10:00:00.000Z',
        startedAt: '2025-03-01T10:00:01.000Z',
        finishedAt: '2025-03-01T10:00:02.000Z',
      },
    });
    const other = await createRepairTarget(world, 'live', target.owner);
    for (const id of ['rrun_00000000000000000000000000', 'x']) {
      await expectRefused(target, () => read(target, runUrl(target.connectionId, id)), 404, 'replay_run_not_found');
    }
    await expectRefused(target, () => read(target, runUrl(other.connectionId, runId)), 404, 'replay_run_not_found');
    await expectRefused(target, () => read(target, `${runUrl(target.connectionId, runId)}?x=1`), 400, 'invalid_evidence_query');
  });

  it('needs replays:read for datasets and runs, repairs:read for proposals (403 insufficient_scope); viewers read; foreign workspaces are 404', async () => {
    const repairsOnly = await loginCli(world.baseUrl, target.owner.sessionToken, ['repairs:read']);
    const replaysOnly = await loginCli(world.baseUrl, target.owner.sessionToken, ['replays:read']);
    for (const url of [
      datasetUrl(target.connectionId, datasetIds[0]),
      datasetsUrl(target.connectionId, incidentId),
      runUrl(target.connectionId, 'x'),
    ]) {
      await expectRefused(target, () => read(target, url, repairsOnly.accessToken), 403, 'insufficient_scope');
    }
    for (const url of [proposalUrl(target.connectionId, proposalId), proposalsUrl(target.connectionId, incidentId)]) {
      await expectRefused(target, () => read(target, url, replaysOnly.accessToken), 403, 'insufficient_scope');
      await ok(await read(target, url, repairsOnly.accessToken));
    }

    const viewer = await createConsoleUser(ctx);
    await addWorkspaceMember(ctx, target.owner.workspace.id, viewer.userId, 'viewer');
    const viewerCli = await loginCli(world.baseUrl, viewer.sessionToken, ['repairs:read', 'replays:read']);
    await ok(await read(target, proposalUrl(target.connectionId, proposalId), viewerCli.accessToken));
    await ok(await read(target, datasetsUrl(target.connectionId, incidentId), viewerCli.accessToken));

    const stranger = await bootstrapWorkspace(ctx);
    const strangerCli = await loginCli(world.baseUrl, stranger.sessionToken);
    const strangerCall = (workspace: string, url: string) => callCli(ctx, strangerCli.accessToken, 'GET', url, { workspace });
    await expectRefused(
      target,
      () => strangerCall(target.owner.workspace.slug, proposalUrl(target.connectionId, proposalId)),
      404,
      'workspace_not_found',
    );
    await expectRefused(
      target,
      () => strangerCall(stranger.workspace.slug, proposalUrl(target.connectionId, proposalId)),
      404,
      'connection_not_found',
    );
    await expectRefused(
      target,
      () => strangerCall(stranger.workspace.slug, datasetUrl(target.connectionId, datasetIds[0])),
      404,
      'connection_not_found',
    );
  });
});

describe('GET /v1/repair-proposals/{proposalId}?mode (API keys)', () => {
  let target: RepairTarget;
  let proposalId: string;

  beforeAll(async () => {
    target = await createRepairTarget(world, 'sandbox');
    proposalId = (await requested(target, await driftIncident(world, target, 1))).proposalId;
  });

  it('answers {proposal}, the CLI read’s proposal, in the mode the caller names', async () => {
    const res = await callWithKey(ctx, target.owner.apiKey.key, 'GET', `/v1/repair-proposals/${proposalId}?mode=sandbox`);
    const body = await ok(res);
    expect(Object.keys(body)).toEqual(['proposal']);
    const cli = await ok(await read(target, proposalUrl(target.connectionId, proposalId)));
    expect(body.proposal).toEqual(cli.proposal);
    // A CLI token with the workspace header reads it too.
    const viaCli = await callCli(ctx, target.cli.accessToken, 'GET', `/v1/repair-proposals/${proposalId}?mode=sandbox`, {
      workspace: target.owner.workspace.slug,
    });
    expect((await ok(viaCli)).proposal).toEqual(cli.proposal);
  });

  it('needs mode (400 invalid_evidence_query); the other mode, another workspace or an unknown id is 404; the scope is repairs:read', async () => {
    const key = target.owner.apiKey.key;
    for (const query of ['', '?mode=', '?mode=prod', '?mode=sandbox&x=1']) {
      await expectRefused(
        target,
        () => callWithKey(ctx, key, 'GET', `/v1/repair-proposals/${proposalId}${query}`),
        400,
        'invalid_evidence_query',
      );
    }
    await expectRefused(
      target,
      () => callWithKey(ctx, key, 'GET', `/v1/repair-proposals/${proposalId}?mode=live`),
      404,
      'repair_proposal_not_found',
    );
    await expectRefused(
      target,
      () => callWithKey(ctx, key, 'GET', '/v1/repair-proposals/rp_00000000000000000000000000?mode=sandbox'),
      404,
      'repair_proposal_not_found',
    );
    const stranger = await bootstrapWorkspace(ctx);
    await expectRefused(
      target,
      () => callWithKey(ctx, stranger.apiKey.key, 'GET', `/v1/repair-proposals/${proposalId}?mode=sandbox`),
      404,
      'repair_proposal_not_found',
    );
    const narrow = await insertApiKey(ctx.deps.pool, {
      workspaceId: target.owner.workspace.id,
      scopes: ['incidents:read'],
      expiresAt: null,
      createdBy: 'test',
      now: ctx.deps.clock.now(),
    });
    await expectRefused(
      target,
      () => callWithKey(ctx, narrow.key, 'GET', `/v1/repair-proposals/${proposalId}?mode=sandbox`),
      403,
      'insufficient_scope',
    );
  });
});

describe('list order', () => {
  it('pages proposals made at the same instant by id, none repeated or skipped', async () => {
    const target = await createRepairTarget(world, 'live');
    const incidentId = await driftIncident(world, target, 1);
    const ids: string[] = [];
    for (let i = 0; i < 4; i += 1) {
      const data = await requested(target, incidentId);
      ids.push(data.proposalId);
      await failProposal(ctx, data.proposalId);
    }
    // Requests a microsecond apart cannot be made on purpose: the rows are given one instant.
    await ctx.deps.pool.query("UPDATE repair_proposals SET created_at = '2025-03-01T10:00:00.123456Z' WHERE incident_id = $1", [
      incidentId,
    ]);
    const { ids: listed } = await walk(target, proposalsUrl(target.connectionId, incidentId), 1);
    expect(listed).toEqual([...ids].sort().reverse());
  });
});
