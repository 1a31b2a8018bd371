import type pg from 'pg';
import type { ClickHouseClient } from '@clickhouse/client';
import type { Clock } from '../shared/clock.js';
import { withTransaction } from '../shared/db/transaction.js';
import { aggregateIncidents, type IncidentAggregate } from '../shared/analysis/incidentAggregate.js';
import { groupsOfBatches } from '../shared/analysis/observationGroups.js';
import { groupsOfJobs } from '../shared/analysis/jobGroups.js';
import type { ComparePool } from './comparePool.js';
import type { ContractCache, LoadedContract } from './contractCache.js';
import { addToIncidents, type IncidentAddition } from './addToIncidents.js';
import { claimBatches, lockConnections, refreshConnectionStates } from './incidentStore.js';
import type { AnalysisJobEntry } from './jobStream.js';
import { evaluateRules } from './ruleEvaluation.js';
import type { AnalyzerMetrics } from './metrics.js';

/** What live analysis and reanalysis share: the stores, the clock, compiled contracts, the memo. */
export interface AnalysisDeps {
  pool: pg.Pool;
  clickhouse: ClickHouseClient;
  clock: Clock;
  contracts: ContractCache;
  compare: ComparePool;
  metrics: AnalyzerMetrics;
}

/**
 * Analyses the batches of delivered jobs and commits the results in one PostgreSQL transaction:
 * the connections are locked, the batches claimed (a batch some delivery already committed adds
 * nothing), their observations grouped by shape (as the jobs carry them, or read from ClickHouse
 * for jobs of older edges), compared with each
 * connection's active contract, and the incidents they touch updated.
 * Reconciliation rules are evaluated in the same transaction (ruleEvaluation.ts): a batch's
 * deadlines are opened and satisfied exactly when the batch is claimed.
 */
export async function analyseJobs(deps: AnalysisDeps, jobs: readonly AnalysisJobEntry[]): Promise<void> {
  if (jobs.length === 0) return;
  const now = deps.clock.now();
  let analysed = 0;
  const aggregatesOut: IncidentAggregate[] = [];
  let opened = 0;
  let ruleSources = 0;
  await withTransaction(deps.pool, async (db) => {
    analysed = 0;
    aggregatesOut.length = 0;
    opened = 0;
    const connections = await lockConnections(
      db,
      jobs.map((job) => job.connectionId),
    );
    const claimed = await claimBatches(
      db,
      jobs.map((job) => job.batchId),
      now,
    );
    const fresh = jobs.filter(
      (job) => (claimed.fresh.has(job.batchId) || claimed.rulesOnly.has(job.batchId)) && connections.has(job.connectionId),
    );
    // Batches a reanalysis recounted, or received before the connection's last reanalysis, are
    // already in its shape counts; their rules are evaluated here all the same.
    const counted = fresh.filter(
      (job) => claimed.fresh.has(job.batchId) && job.receivedAtMs > (connections.get(job.connectionId)?.reanalysedThroughMs ?? 0),
    );
    // Jobs carry their batch's groups (shared/analysis/jobGroups.ts); only those of older edges
    // are grouped by reading their rows back from ClickHouse.
    const [read, sources] = await Promise.all([
      groupsOfBatches(
        deps.clickhouse,
        counted.filter((job) => job.groups === undefined),
      ),
      evaluateRules(db, deps.clickhouse, fresh, now),
    ]);
    const groups = [...groupsOfJobs(counted), ...read];
    ruleSources = sources;
    const contracts = new Map<string, LoadedContract>();
    for (const connection of connections.values()) {
      if (connection.activeContractVersionId === null) continue;
      const contract = await deps.contracts.get(connection.activeContractVersionId);
      deps.compare.register(contract);
      contracts.set(connection.id, contract);
    }
    const aggregates = await aggregateIncidents(groups, (connectionId) => contracts.get(connectionId) ?? null, deps.compare.compareMany);
    const additions: IncidentAddition[] = [];
    for (const aggregate of aggregates.values()) {
      aggregatesOut.push(aggregate);
      const connection = connections.get(aggregate.connectionId);
      if (connection !== undefined) additions.push({ connection, aggregate });
    }
    opened = await addToIncidents(db, additions, now);
    const latest = new Map<string, number>();
    for (const job of fresh) latest.set(job.connectionId, Math.max(latest.get(job.connectionId) ?? 0, job.receivedAtMs));
    const states: { connectionId: string; latestObservationMs: number }[] = [];
    for (const [connectionId, receivedAtMs] of latest) {
      if (connections.has(connectionId)) states.push({ connectionId, latestObservationMs: receivedAtMs });
    }
    await refreshConnectionStates(db, states);
    analysed = groups.reduce((sum, group) => sum + group.count, 0);
  });
  const committedMs = deps.clock.nowMs();
  deps.metrics.envelopes.inc(analysed);
  deps.metrics.incidentsOpened.inc(opened);
  deps.metrics.ruleSources.inc(ruleSources);
  for (const aggregate of aggregatesOut) {
    for (const finding of aggregate.findings.values()) deps.metrics.findings.inc({ kind: finding.finding.kind }, finding.count);
  }
  for (const job of jobs) {
    const lagSeconds = Math.max(0, committedMs - job.receivedAtMs) / 1000;
    deps.metrics.lagHistogram.observe(lagSeconds);
    deps.metrics.lagQuantiles.observe(lagSeconds);
  }
  deps.metrics.lag.set(Math.max(0, committedMs - Math.max(...jobs.map((job) => job.receivedAtMs))) / 1000);
}
