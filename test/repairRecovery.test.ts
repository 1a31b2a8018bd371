import type { ClickHouseClient } from '@clickhouse/client';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { BootstrapResult } from '../management/admin/bootstrap.js';
import type { SchemaShape } from '../shared/analysis/types.js';
import { startAnalyzer } from './helpers/analyzer.js';
import { callCli, loginCli, serveOnLoopback, type CliSession } from './helpers/cli.js';
import { advanceClock, countRows, createTestContext, newIdempotencyKey, resetClockAndHooks, type TestContext } from './helpers/context.js';
import { startEdge, testClickHouse, type Collector, type Edge } from './helpers/ingest.js';
import { type SpawnedProcess, spawnProcess } from './helpers/processes.js';
import { waitFor } from './helpers/wait.js';
import { openDriftIncident } from './helpers/driftIncident.js';
import { endProposalsInProgress } from './helpers/repairs.js';

// Issue 29, item 7: a worker that dies mid-generation is retried, at most three attempts, then
// `execution_attempts_exhausted` on the proposal. The proposal is the queue (analyzer/repairJobs.ts):
// a claim holds it for ANALYZER_REPAIR_LEASE_MS (60 s), so time moves with the test clock.

const LEASE_MS = 60_000;
const DOCUMENT = {
  openapi: '3.0.3',
  info: { title: 'Orders', version: '1' },
  paths: {
    '/v1/orders/{orderId}': {
      get: {
        responses: {
          '200': {
            description: 'order',
            content: { 'application/json': { schema: { type: 'object', required: ['id'], properties: { id: { type: 'string' } } } } },
          },
        },
      },
    },
  },
};
const DRIFTED: SchemaShape = { kind: 'object', fields: { id: { kind: 'string' }, currency: { kind: 'string' } } };

let ctx: TestContext;
let clickhouse: ClickHouseClient;
let edge: Edge;
let baseUrl: string;

beforeAll(async () => {
  ctx = await createTestContext();
  clickhouse = testClickHouse(ctx);
  edge = await startEdge(ctx, clickhouse);
  baseUrl = await serveOnLoopback(ctx);
  // Analyzers claim the oldest proposal in progress: these tests need the queue to themselves.
  expect(await countRows(ctx, 'repair_proposals', "status IN ('queued', 'generating', 'validating')", []), 'proposals in progress').toBe(0);
});

afterEach(async () => {
  await resetClockAndHooks(ctx);
  await endProposalsInProgress(ctx);
});

afterAll(async () => {
  await edge?.close();
  await clickhouse?.close();
  await ctx?.close();
});

interface Drifted {
  owner: BootstrapResult;
  collector: Collector;
  cli: CliSession;
  incidentId: string;
}

/** A live connection with an active contract and an open schema-drift incident, and a CLI login of its owner. */
async function driftedIncident(shape: SchemaShape = DRIFTED): Promise<Drifted> {
  const { owner, collector, incidentId } = await openDriftIncident(ctx, clickhouse, edge, { document: DOCUMENT, shape });
  const cli = await loginCli(baseUrl, owner.sessionToken, ['repairs:create', 'repairs:read', 'replays:read']);
  return { owner, collector, cli, incidentId };
}

async function requestRepair(drifted: Drifted): Promise<string> {
  const res = await ctx.app.inject({
    method: 'POST',
    url: `/v1/cli/connections/${drifted.collector.connectionId}/incidents/${drifted.incidentId}/repair-proposals`,
    headers: {
      authorization: `Bearer ${drifted.cli.accessToken}`,
      'x-service-workspace': drifted.owner.workspace.slug,
      'idempotency-key': newIdempotencyKey(),
    },
    payload: {},
  });
  expect(res.statusCode, res.body).toBe(202);
  return (res.json() as { data: { proposalId: string } }).data.proposalId;
}

interface ProposalState {
  status: string;
  attempts: number;
  error_code: string | null;
  runs: string;
}

async function proposalState(proposalId: string): Promise<ProposalState> {
  const { rows } = await ctx.deps.pool.query<ProposalState>(
    `SELECT status, attempts, error_code, (SELECT count(*) FROM replay_runs WHERE proposal_id = p.id) AS runs
       FROM repair_proposals p WHERE id = $1`,
    [proposalId],
  );
  return rows[0];
}

const claimedFor = (proposalId: string, attempts: number) =>
  waitFor(
    async () => {
      const state = await proposalState(proposalId);
      return state.status === 'generating' && state.attempts === attempts ? state : undefined;
    },
    30_000,
    `claim ${attempts} of ${proposalId}`,
  );

describe('repair recovery', () => {
  it('completes a proposal once, with one run, after its analyzer is killed mid-generation', async () => {
    const drifted = await driftedIncident();
    // This analyzer claims the proposal and holds it (ANALYZER_TEST_HOLD_REPAIRS), then dies.
    const held: SpawnedProcess = await spawnProcess('dist/analyzer/main.js', 'ANALYZER_PORT', { ANALYZER_TEST_HOLD_REPAIRS: '1' });
    const proposalId = await requestRepair(drifted);
    await claimedFor(proposalId, 1);
    await held.kill('SIGKILL');

    const restarted = await spawnProcess('dist/analyzer/main.js', 'ANALYZER_PORT');
    try {
      // Until its lease ends the dead worker's claim stands; then the new process takes it.
      await advanceClock(ctx, LEASE_MS + 1_000);
      const done = await waitFor(
        async () => {
          const state = await proposalState(proposalId);
          return state.status === 'awaiting_approval' ? state : undefined;
        },
        30_000,
        'the proposal generated after the restart',
      );
      expect(done).toMatchObject({ attempts: 2, error_code: null, runs: '1' });
      const read = await callCli(
        ctx,
        drifted.cli.accessToken,
        'GET',
        `/v1/cli/connections/${drifted.collector.connectionId}/repair-proposals/${proposalId}`,
        {
          workspace: drifted.owner.workspace.slug,
        },
      );
      expect(read.json()).toMatchObject({ proposal: { status: 'awaiting_approval', validation: { replayPassed: true } } });
    } finally {
      await restarted.stop();
    }
  });

  it('fails a proposal with execution_attempts_exhausted after three interrupted attempts', async () => {
    const drifted = await driftedIncident();
    const proposalId = await requestRepair(drifted);
    for (let attempt = 1; attempt <= 3; attempt++) {
      // An in-process analyzer that holds its claim, stopped without finishing: an interrupted attempt.
      const held = await startAnalyzer(ctx, clickhouse, { holdRepairs: true, repairPollMs: 20 });
      await claimedFor(proposalId, attempt);
      await held.stop();
      await advanceClock(ctx, LEASE_MS + 1_000);
    }
    const analyzer = await startAnalyzer(ctx, clickhouse, { repairPollMs: 20 });
    try {
      const failed = await waitFor(
        async () => {
          const state = await proposalState(proposalId);
          return state.status === 'failed' ? state : undefined;
        },
        30_000,
        'the proposal failed',
      );
      expect(failed).toMatchObject({ attempts: 4, error_code: 'execution_attempts_exhausted', runs: '0' });
    } finally {
      await analyzer.stop();
    }
    const read = await callCli(
      ctx,
      drifted.cli.accessToken,
      'GET',
      `/v1/cli/connections/${drifted.collector.connectionId}/repair-proposals/${proposalId}`,
      {
        workspace: drifted.owner.workspace.slug,
      },
    );
    expect(read.json()).toMatchObject({ proposal: { status: 'failed', errorCode: 'execution_attempts_exhausted' } });
    // The incident is free for a new request.
    expect(await requestRepair(drifted)).not.toBe(proposalId);
  });

  it('fails a proposal whose candidate does not pass its replay: repair_proposal_not_patchable, with the failed run', async () => {
    // A field named __proto__ is drift no JSON Patch may write (the patch library refuses the
    // path): the candidate leaves it out and its replay fails.
    const shape = JSON.parse('{"kind":"object","fields":{"id":{"kind":"string"},"__proto__":{"kind":"string"}}}') as SchemaShape;
    const drifted = await driftedIncident(shape);
    const proposalId = await requestRepair(drifted);
    const analyzer = await startAnalyzer(ctx, clickhouse, { repairPollMs: 20 });
    try {
      const failed = await waitFor(
        async () => {
          const state = await proposalState(proposalId);
          return state.status === 'failed' ? state : undefined;
        },
        30_000,
        'the proposal failed',
      );
      expect(failed).toMatchObject({ attempts: 1, error_code: 'repair_proposal_not_patchable', runs: '1' });
    } finally {
      await analyzer.stop();
    }
    const { rows } = await ctx.deps.pool.query('SELECT status, error_code FROM replay_runs WHERE proposal_id = $1', [proposalId]);
    expect(rows).toEqual([{ status: 'failed', error_code: 'repair_proposal_not_patchable' }]);
    const read = await callCli(
      ctx,
      drifted.cli.accessToken,
      'GET',
      `/v1/cli/connections/${drifted.collector.connectionId}/repair-proposals/${proposalId}`,
      {
        workspace: drifted.owner.workspace.slug,
      },
    );
    expect(read.json()).toMatchObject({
      proposal: { status: 'failed', errorCode: 'repair_proposal_not_patchable', validation: { replayPassed: false } },
    });
  });
});
