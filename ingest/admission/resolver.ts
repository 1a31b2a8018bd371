import type { Redis } from 'ioredis';
import type { Clock } from '../../shared/clock.js';
import type { IngestMetrics } from '../common/metrics.js';
import type { Admission, DurableBatch } from './admission.js';
import { IngestKeys } from './keys.js';

/** Overdue batches read per sweep. */
const SWEEP_BATCHES = 100;
/** How long a process holds an overdue batch while it settles it (other edges skip it meanwhile). */
const CLAIM_MS = 10_000;

export interface AdmissionResolverDeps {
  admission: Admission;
  redis: Redis;
  clock: Clock;
  metrics: IngestMetrics;
  sweepIntervalMs: number;
  /** INGEST_ADMISSION_DEADLINE_MS: how long an admitted batch may take to become durable. */
  deadlineMs: number;
  logError?: (message: string, error: unknown) => void;
}

/**
 * Settles admitted batches that were never made durable in a log past their deadline (their edge
 * died between admission and its log write, lost Redis's answer, or its log refused the write),
 * so that usage, windows and de-duplication count only what was answered as accepted: the batch
 * is released, and the collector's retry is admitted and counted once. Such a batch is in no log
 * that will ship it: a log record is shipped only once DURABLE committed it, and DURABLE refuses a
 * released batch, so releasing needs no look at ClickHouse.
 *
 * Every edge sweeps the overdue batches every `sweepIntervalMs`, and settles one at once when a
 * retry meets its eventIds (Admission reply `unsettled`).
 */
export class AdmissionResolver {
  private timer: NodeJS.Timeout | null = null;
  private sweeping = false;

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
      for (const batch of await admission.overdueBatches(clock.nowMs() - this.deps.deadlineMs, SWEEP_BATCHES)) {
        const claim = IngestKeys.resolving(batch.batchId);
        if ((await redis.set(claim, '1', 'PX', CLAIM_MS, 'NX')) !== 'OK') continue;
        await this.settle(batch);
        settled += 1;
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

  /** Settles one batch past its deadline (a retry met its eventIds); rejects when Redis fails. */
  async settle(batch: DurableBatch): Promise<void> {
    const released = await this.deps.admission.release(batch.accountId, batch.batchId, batch.receivedAtMs);
    if (released > 0) this.deps.metrics.admissionsSettled.labels('released').inc();
  }
}
