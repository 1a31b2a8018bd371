import type pg from 'pg';
import type { ClickHouseClient } from '@clickhouse/client';
import { isClickHouseOverload } from '../shared/clickhouse/client.js';
import { withTransaction } from '../shared/db/transaction.js';
import { REANALYSIS_TOPIC, type ReanalysisJob } from '../shared/analysis/reanalysisJob.js';
import { analysisWindow, openIncidentsOf, planReanalysis } from '../shared/analysis/reanalysisPlan.js';
import { batchIdsOfWindow } from '../shared/analysis/observationGroups.js';
import { lockConnections, markRecountedBatches, recountIncident, refreshConnectionStates, resolveByContract } from './incidentStore.js';
import type { AnalysisDeps } from './liveAnalysis.js';
import { addToIncidents } from './addToIncidents.js';

/**
 * How far before the latest observation the recount read, a batch may still have been on its way
 * into ClickHouse. Batches received earlier than that are all in the recount; the recount's
 * batches received within it are marked one by one.
 */
const RECOUNT_MARGIN_MS = 60_000;

/**
 * Keeps live analysis from adding what the recount already counted, without relying on any
 * process's clock: live jobs of batches received up to (latest observation read − margin) are
 * skipped by `reanalysed_through_ms`, and the recount's batches received within the margin get
 * batch markers (analysed_batches, `recounted`), whose shapes live analysis treats as already
 * counted; it still evaluates their reconciliation rules, which a recount does not. A batch the
 * recount did not see (still being inserted) is neither, so live analysis counts it.
 */
async function markRecounted(
  clickhouse: ClickHouseClient,
  db: pg.PoolClient,
  connectionId: string,
  lastReceivedAtMs: number | null,
  now: Date,
): Promise<void> {
  if (lastReceivedAtMs === null) return;
  const batchIds = await batchIdsOfWindow(clickhouse, connectionId, lastReceivedAtMs - RECOUNT_MARGIN_MS, lastReceivedAtMs + 1);
  await markRecountedBatches(db, batchIds, now);
  await db.query('UPDATE connections SET reanalysed_through_ms = GREATEST(reanalysed_through_ms, $2) WHERE id = $1', [
    connectionId,
    lastReceivedAtMs - RECOUNT_MARGIN_MS,
  ]);
}

/** A reanalysis whose ClickHouse read went past the server's limits (its transaction rolled back). */
export class ReanalysisReadRefused extends Error {
  constructor(
    readonly jobId: string,
    cause: Error,
  ) {
    super(`reanalysis job ${jobId}: ${cause.message}`, { cause });
  }
}

/**
 * Handles the oldest pending reanalysis job no other analyzer holds, other than `skip` (outbox
 * ids of jobs this process defers), in one transaction: the outbox row and the connection stay locked until the results and `processed_at` commit, so a
 * job is applied once even when its analyzer dies midway (the lock goes with its connection and
 * the next analyzer takes the job). Returns false when no job was waiting.
 *
 * The connection's stored observations of the last REANALYSIS_WINDOW_MS are analysed again under
 * the version, one comparison per distinct shape; its open shape incidents are recounted,
 * resolved (`resolved_by_contract`) when the version no longer produces them, and new ones open.
 * A job whose version is no longer the active one is skipped: the activation that replaced it
 * has a job of its own, later in the outbox. A read past ClickHouse's limits rolls the job back
 * and throws ReanalysisReadRefused naming it (the caller defers it, see Analyzer).
 */
export async function runNextReanalysis(deps: AnalysisDeps, skip: readonly string[] = []): Promise<boolean> {
  let outcome: 'none' | 'applied' | 'superseded' = 'none';
  let resolved = 0;
  let opened = 0;
  let jobId: string | null = null;
  await withTransaction(deps.pool, async (db) => {
    outcome = 'none';
    jobId = null;
    const { rows } = await db.query<{ id: string; payload: ReanalysisJob }>(
      'SELECT id, payload FROM outbox WHERE topic = $1 AND processed_at IS NULL AND id <> ALL($2::bigint[]) ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED',
      [REANALYSIS_TOPIC, skip],
    );
    if (rows.length === 0) return;
    const [{ id, payload: job }] = rows;
    jobId = id;
    const connection = (await lockConnections(db, [job.connectionId])).get(job.connectionId);
    const now = deps.clock.now();
    if (connection === undefined || connection.activeContractVersionId !== job.contractVersionId) {
      outcome = 'superseded';
    } else {
      const contract = await deps.contracts.get(job.contractVersionId);
      deps.compare.register(contract);
      const open = await openIncidentsOf(db, connection.id, { lock: true });
      const plan = await planReanalysis(
        deps.clickhouse,
        connection.id,
        contract,
        analysisWindow(now.getTime()),
        open,
        deps.compare.compareMany,
      );
      await resolveByContract(
        db,
        plan.resolved.map((incident) => incident.id),
        now,
      );
      for (const { incident, aggregate } of plan.continued) await recountIncident(db, incident, aggregate, now);
      opened = await addToIncidents(
        db,
        plan.opened.map((aggregate) => ({ connection, aggregate })),
        now,
      );
      resolved = plan.resolved.length;
      await markRecounted(deps.clickhouse, db, connection.id, plan.lastReceivedAtMs, now);
      await db.query('UPDATE connections SET reanalysed_revision = $2 WHERE id = $1', [connection.id, job.analysisRevision]);
      // The batches it counted are claimed (markRecounted): their live analysis adds nothing, so
      // the latest observation it saw is recorded here.
      await refreshConnectionStates(db, [{ connectionId: connection.id, latestObservationMs: plan.lastReceivedAtMs }]);
      outcome = 'applied';
    }
    await db.query('UPDATE outbox SET processed_at = $2 WHERE id = $1', [id, now]);
  }).catch((error: Error) => {
    throw jobId !== null && isClickHouseOverload(error) ? new ReanalysisReadRefused(jobId, error) : error;
  });
  if (outcome === 'none') return false;
  deps.metrics.reanalyses.inc({ outcome });
  deps.metrics.incidentsOpened.inc(opened);
  deps.metrics.incidentsResolved.inc(resolved);
  return true;
}
