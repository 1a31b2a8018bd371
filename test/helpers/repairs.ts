import { randomBytes } from 'node:crypto';
import type { ClickHouseClient } from '@clickhouse/client';
import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import type { BootstrapResult } from '../../management/admin/bootstrap.js';
import { WORKSPACE_HEADER } from '../../management/auth/cliApi.js';
import { startAnalyzer, streamDrained, type RunningAnalyzer } from './analyzer.js';
import { loginCli, serveOnLoopback, type CliSession } from './cli.js';
import { bootstrapWorkspace, newIdempotencyKey, type TestContext } from './context.js';
import { activateOk, openApiRegistration, registerDraft } from './contracts.js';
import { createCollector, envelope, sendEnvelopes, startEdge, testClickHouse, type Collector, type Edge } from './ingest.js';
import { waitFor } from './wait.js';

// Repair requests need real incidents: drifted traffic signed and posted to the running edge,
// stored in ClickHouse and analysed by the running analyzer against an active contract.

/** How many operations the items contract declares: one schema-drift incident each. */
export const ITEM_OPERATIONS = 12;

/** `GET /v1/items/{n}/{itemId}`'s key, n from 1. */
export const itemOperationKey = (n: number) => `GET /v1/items/${n}/{itemId}:response:200`;

/** A contract of ITEM_OPERATIONS closed objects `{id: string}`: any other field is an undeclared, forbidden one. */
function itemsContract(): Record<string, unknown> {
  const item = {
    type: 'object',
    additionalProperties: false,
    required: ['id'],
    properties: { id: { type: 'string' } },
  };
  const paths = Object.fromEntries(
    Array.from({ length: ITEM_OPERATIONS }, (_, i) => [
      `/v1/items/${i + 1}/{itemId}`,
      { get: { responses: { '200': { description: 'ok', content: { 'application/json': { schema: item } } } } } },
    ]),
  );
  return { openapi: '3.0.3', info: { title: 'Items', version: '1' }, paths };
}

type Shape = Record<string, unknown>;
/** A shape the items schema accepts. */
export const CONFORMING: Shape = { kind: 'object', fields: { id: { kind: 'string' } } };
/** A drifted shape: `note` is undeclared on a closed object. */
export const DRIFTED: Shape = { kind: 'object', fields: { id: { kind: 'string' }, note: { kind: 'string' } } };

/** The running edge and analyzer of one test file, on a stream of their own. */
export interface RepairWorld {
  ctx: TestContext;
  baseUrl: string;
  clickhouse: ClickHouseClient;
  edge: Edge;
  analyzer: RunningAnalyzer;
  stream: string;
  close(): Promise<void>;
}

export async function startRepairWorld(ctx: TestContext): Promise<RepairWorld> {
  const baseUrl = await serveOnLoopback(ctx);
  const clickhouse = testClickHouse(ctx);
  const stream = `analysis:repairs:${randomBytes(4).toString('hex')}`;
  const edge = await startEdge(ctx, clickhouse, {
    analysisStream: stream,
    limits: { sandboxAccountEnvelopesPerMin: 100_000, sandboxAccountRequestsPerMin: 100_000, sandboxMonthlyAllowance: 1_000_000 },
  });
  // No repair worker: these tests hold proposals where the request left them.
  const analyzer = await startAnalyzer(ctx, clickhouse, { stream, repairs: 'disabled' });
  return {
    ctx,
    baseUrl,
    clickhouse,
    edge,
    analyzer,
    stream,
    async close() {
      await endProposalsInProgress(ctx);
      await analyzer.stop();
      await edge.close();
      await clickhouse.close();
    },
  };
}

/**
 * Files run one by one on one database: proposals a test left in progress would be the next
 * test's analyzers' first work (they claim the oldest). They end as a worker ends one it cannot
 * finish.
 */
export async function endProposalsInProgress(ctx: TestContext): Promise<void> {
  await ctx.deps.pool.query(
    "UPDATE repair_proposals SET status = 'failed', error_code = 'execution_interrupted', lease_until = NULL WHERE status IN ('queued', 'generating', 'validating')",
  );
}

/** A workspace with one Integration of the items contract (active), its owner and a CLI login with every scope. */
export interface RepairTarget {
  owner: BootstrapResult;
  cli: CliSession;
  collector: Collector;
  connectionId: string;
  contractVersionId: string;
  mode: 'sandbox' | 'live';
}

export async function createRepairTarget(world: RepairWorld, mode: 'sandbox' | 'live', owner?: BootstrapResult): Promise<RepairTarget> {
  const { ctx } = world;
  const boot = owner ?? (await bootstrapWorkspace(ctx));
  const collector = await createCollector(ctx, boot.apiKey.key, { mode });
  const draft = await registerDraft(ctx, boot.apiKey.key, collector.connectionId, openApiRegistration('v1', itemsContract()));
  await activateOk(ctx, boot.apiKey.key, collector.connectionId, draft.contract.id, {
    expectedActiveContractVersionId: null,
    reason: 'promote',
  });
  const cli = await loginCli(world.baseUrl, boot.sessionToken);
  return { owner: boot, cli, collector, connectionId: collector.connectionId, contractVersionId: draft.contract.id, mode };
}

/**
 * Sends `count` observations of item operation `n` (50 a batch) and returns their eventIds;
 * `inspected: false` sends envelope 0.3 bodies that were not inspected.
 */
export async function sendItems(
  world: RepairWorld,
  target: RepairTarget,
  n: number,
  count: number,
  options: { shape?: Shape; inspected?: boolean } = {},
): Promise<string[]> {
  const eventIds: string[] = [];
  for (let sent = 0; sent < count; sent += 50) {
    const batch = Array.from({ length: Math.min(50, count - sent) }, (): Shape => {
      const base = envelope(target.collector);
      const payload = { ...(base.payload as Shape), schemaShape: options.shape ?? DRIFTED };
      return {
        ...base,
        ...(options.inspected === false ? { envelopeVersion: '0.3', payload: { ...payload, schemaInspected: false } } : { payload }),
        transport: { ...(base.transport as Shape), method: 'GET', routeTemplate: `/v1/items/${n}/{itemId}`, statusCode: 200 },
      };
    });
    const answer = await sendEnvelopes(world.edge, target.collector, batch);
    expect(answer.status, answer.text).toBe(202);
    eventIds.push(...batch.map((item) => item.eventId as string));
  }
  return eventIds;
}

/** Waits until the analyzer has processed everything sent so far. */
export async function analysed(world: RepairWorld): Promise<void> {
  await waitFor(async () => ((await streamDrained(world.ctx, world.stream)) ? true : undefined), 20_000, 'the analysis stream to drain');
}

/** The open incident of a connection's operation and kind, once the analyzer has opened it. */
export async function incidentOf(world: RepairWorld, connectionId: string, operationKey: string, kind = 'schema-drift'): Promise<string> {
  await analysed(world);
  const { rows } = await world.ctx.deps.pool.query<{ id: string }>(
    "SELECT id FROM incidents WHERE connection_id = $1 AND operation_key = $2 AND kind = $3 AND status = 'open'",
    [connectionId, operationKey, kind],
  );
  if (!rows[0]) throw new Error(`no open ${kind} incident of ${operationKey}`);
  return rows[0].id;
}

/** Drifted traffic on item operation `n` (3 observations by default) and the schema-drift incident it opens. */
export async function driftIncident(world: RepairWorld, target: RepairTarget, n: number, count = 3): Promise<string> {
  await sendItems(world, target, n, count);
  return incidentOf(world, target.connectionId, itemOperationKey(n));
}

export const repairRequestUrl = (connectionId: string, incidentId: string) =>
  `/v1/cli/connections/${connectionId}/incidents/${incidentId}/repair-proposals`;

/** POST …/repair-proposals with a CLI token, the workspace header, an Idempotency-Key (a fresh one unless given; null: none) and a body (`{}` unless given). */
export function requestRepair(
  ctx: TestContext,
  input: { token: string; workspace: string; connectionId: string; incidentId: string },
  options: { key?: string | null; body?: unknown; rawBody?: string } = {},
): Promise<LightMyRequestResponse> {
  const headers: Record<string, string> = { authorization: `Bearer ${input.token}`, [WORKSPACE_HEADER]: input.workspace };
  const key = options.key === undefined ? newIdempotencyKey() : options.key;
  if (key !== null) headers['idempotency-key'] = key;
  if (options.rawBody !== undefined) headers['content-type'] = 'application/json';
  return ctx.app.inject({
    method: 'POST',
    url: repairRequestUrl(input.connectionId, input.incidentId),
    headers,
    ...(options.rawBody !== undefined ? { payload: options.rawBody } : { payload: (options.body ?? {}) as object }),
  });
}

/** What a repair request writes in a workspace: proposals, datasets, operations and audit rows. */
export async function repairWrites(ctx: TestContext, workspaceId: string): Promise<Record<string, number>> {
  const { rows } = await ctx.deps.pool.query<Record<string, number>>(
    `SELECT (SELECT count(*)::int FROM repair_proposals WHERE workspace_id = $1) AS proposals,
            (SELECT count(*)::int FROM replay_datasets WHERE workspace_id = $1) AS datasets,
            (SELECT count(*)::int FROM operations WHERE workspace_id = $1) AS operations,
            (SELECT count(*)::int FROM audit_events WHERE workspace_id = $1) AS audits`,
    [workspaceId],
  );
  return rows[0];
}

/**
 * Ends a proposal as the repair worker would after its last attempt. The worker (the analyzer's
 * repair generation) is not part of these tests, and no route can fail or reject a proposal that
 * is not awaiting approval, so the tests that need the incident free again set it in SQL.
 */
export async function failProposal(ctx: TestContext, proposalId: string, errorCode = 'execution_attempts_exhausted'): Promise<void> {
  await ctx.deps.pool.query("UPDATE repair_proposals SET status = 'failed', error_code = $2, updated_at = now() WHERE id = $1", [
    proposalId,
    errorCode,
  ]);
}
