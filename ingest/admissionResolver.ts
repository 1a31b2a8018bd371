import type { ClickHouseClient } from '@clickhouse/client';
import type { Redis } from 'ioredis';
import { sqlLiteral } from '../shared/clickhouse/escape.js';
import type { Clock } from '../shared/clock.js';
import { insertQueryPrefixOfBatch, type Admission } from './admission.js';
import { IngestKeys } from './keys.js';
import type { IngestMetrics } from './metrics.js';
import { storedEventIds } from './observationsTable.js';

/** Overdue batches read per sweep. */
const SWEEP_BATCHES = 100;
/** How long a process holds an overdue batch while it settles it (other edges skip it meanwhile). */
const CLAIM_MS = 10_000;
/** Allowance for clocks of the edges and of ClickHouse that differ a little. */
const CLOCK_MARGIN_SECONDS = 1;
/** How long this process waits for its own timed-out insert to end before leaving it to the sweep. */
const OWN_INSERT_WAIT_MS = 60_000;
const POLL_MS = 500;

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

export interface AdmissionResolverDeps {
  admission: Admission;
  redis: Redis;
  clickhouse: ClickHouseClient;
  clock: Clock;
  metrics: IngestMetrics;
  sweepIntervalMs: number;
  logError?: (message: string, error: unknown) => void;
}

/**
 * Settles admitted batches whose outcome their process never reported, so that usage, windows
 * and de-duplication agree with what ClickHouse holds (issue 12): the process died between
 * admission and commit, lost Redis's answer, or its insert timed out. ClickHouse is the truth:
 * the batch's eventIds found there (by `batch_id`) stay counted and are marked committed, with
 * their analysis job; the others are released, so the collector's retry is admitted and
 * counted once.
 *
 * ClickHouse may still be writing an insert whose client is gone (a paused server reads the
 * request later), so a batch is settled only once no insert that can carry it still runs:
 * inserts carry query ids of their process (Admission.insertQueryPrefix), and an insert carrying
 * a batch started before the batch's deadline.
 *
 * Every edge sweeps the overdue batches every `sweepIntervalMs`, and settles one at once when a
 * retry meets its eventIds (Admission reply `unsettled`).
 */
export class AdmissionResolver {
  private timer: NodeJS.Timeout | null = null;
  private sweeping = false;
  /** This process's own inserts of unknown outcome: query id → the batches it carried. */
  private readonly ownInserts = new Map<string, string[]>();

  constructor(private readonly deps: AdmissionResolverDeps) {}

  start(): void {
    this.timer = setInterval(() => void this.sweep(), this.deps.sweepIntervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  /** Settles the overdue batches that no other edge is settling; returns how many were settled. */
  async sweep(): Promise<number> {
    if (this.sweeping) return 0;
    this.sweeping = true;
    let settled = 0;
    try {
      const { admission, redis, clock } = this.deps;
      for (const { batchId, deadlineMs } of await admission.overdueBatches(clock.nowMs(), SWEEP_BATCHES)) {
        const claim = IngestKeys.resolving(batchId);
        if ((await redis.set(claim, '1', 'PX', CLAIM_MS, 'NX')) !== 'OK') continue;
        if (await this.settleOverdue(batchId, deadlineMs)) settled += 1;
        await redis.del(claim);
      }
    } catch (error) {
      this.deps.metrics.admissionsSettled.labels('failed').inc();
      this.deps.logError?.('settling overdue admissions', error);
    } finally {
      this.sweeping = false;
    }
    return settled;
  }

  /**
   * Settles a batch past its deadline, once no insert of its process that started before the
   * deadline still runs. False when one does (try again later); rejects when a store fails.
   */
  async settleOverdue(batchId: string, deadlineMs: number): Promise<boolean> {
    const minElapsedSeconds = Math.max(0, (this.deps.clock.nowMs() - deadlineMs) / 1000 - CLOCK_MARGIN_SECONDS);
    const prefix = insertQueryPrefixOfBatch(batchId);
    if (await this.insertsRunning(`substring(query_id, 1, ${prefix.length}) = ${sqlLiteral(prefix)} AND elapsed >= ${minElapsedSeconds}`)) {
      this.deps.metrics.admissionsSettled.labels('postponed').inc();
      return false;
    }
    await this.settle(batchId);
    return true;
  }

  /**
   * This process's insert `queryId` failed with an unknown outcome (a timeout, a broken
   * connection): once ClickHouse answers that it no longer runs it, settle the batches it
   * carried. Gives up after OWN_INSERT_WAIT_MS (ClickHouse still down, say); the sweep settles
   * them after their deadline.
   */
  settleAfterInsert(queryId: string, batchId: string): void {
    const batches = this.ownInserts.get(queryId);
    if (batches !== undefined) {
      batches.push(batchId);
      return;
    }
    this.ownInserts.set(queryId, [batchId]);
    void this.settleOwnInsert(queryId).finally(() => this.ownInserts.delete(queryId));
  }

  private async settleOwnInsert(queryId: string): Promise<void> {
    const giveUpAt = Date.now() + OWN_INSERT_WAIT_MS;
    let lastError: unknown = null;
    while (Date.now() < giveUpAt) {
      try {
        if (!(await this.insertsRunning(`query_id = ${sqlLiteral(queryId)}`))) {
          for (const batch of this.ownInserts.get(queryId) ?? []) await this.settle(batch);
          return;
        }
      } catch (error) {
        lastError = error;
      }
      await sleep(POLL_MS);
    }
    this.deps.metrics.admissionsSettled.labels('failed').inc();
    this.deps.logError?.('settling the batches of a failed insert', lastError ?? new Error(`insert ${queryId} still running`));
  }

  private async settle(batchId: string): Promise<void> {
    const { admission, clickhouse, metrics } = this.deps;
    const pending = await admission.pendingBatch(batchId);
    const stored = pending === null ? [] : await storedEventIds(clickhouse, { ...pending, batchId }, pending.eventIds);
    const { kept, released } = await admission.resolve(batchId, stored);
    if (kept > 0) metrics.admissionsSettled.labels('kept').inc();
    else if (released > 0) metrics.admissionsSettled.labels('released').inc();
  }

  private async insertsRunning(condition: string): Promise<boolean> {
    const result = await this.deps.clickhouse.query({ query: `SELECT count() AS running FROM system.processes WHERE ${condition}`, format: 'JSONEachRow' });
    const [row] = await result.json<{ running: string | number }>();
    return Number(row?.running ?? 0) > 0;
  }
}
