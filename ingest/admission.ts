import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { admissionInFlightMs } from '../shared/admissionTiming.js';
import type { Config } from '../shared/config.js';
import { RedisKeys, type AnalysisJob } from '../shared/redis.js';
import { usagePeriodOf } from '../shared/usagePeriod.js';
import { ADMIT, COMMIT, DURABLE, RESOLVE } from './admissionScripts.js';
import type { IngestCredential } from './credentials.js';
import { IngestKeys } from './keys.js';
import { TurnBatcher } from './turnBatcher.js';

/** 03 Limits: every budget is per 60-second window, counted in one-second buckets. */
export const WINDOW_MS = 60_000;
export const BUCKET_MS = 1_000;
/** Monthly usage counters outlive their month so the console can still read them (about 13 months). */
const USAGE_TTL_SECONDS = 400 * 24 * 3600;

export type WindowCode = 'sandbox_request_rate_limited' | 'sandbox_observation_rate_limited' | 'workload_rate_limited' | 'connection_rate_limited';

interface Window {
  key: string;
  limit: number;
  cost: number;
  code: WindowCode;
  /** What the window counts: a batch is one request and its items are observations. */
  counts: 'requests' | 'observations';
}

/**
 * An admitted batch. What it takes to undo the admission or to record its commit is kept in
 * Redis, in the batch's admission record (see RECORD_FUNCTIONS), so that another process can
 * settle it when this one dies.
 */
export interface AdmissionTicket {
  batchId: string;
  /** The de-duplication hash this batch wrote its new eventIds to. */
  dedupKey: string;
  /** The eventIds this batch admitted as new (its fields in that hash). */
  newEventIds: string[];
}

export type AdmissionResult =
  | { kind: 'admitted'; duplicate: boolean[]; newCount: number; ticket: AdmissionTicket }
  | { kind: 'stale_credential' }
  | { kind: 'rate_limited'; code: WindowCode; retryAfterSeconds: number }
  | { kind: 'quota_exhausted'; resetAt: string }
  | { kind: 'in_flight' }
  /** An eventId belongs to batch `batchId`, past its deadline and never settled (see AdmissionResolver). */
  | { kind: 'unsettled'; batchId: string; deadlineMs: number };

export interface AdmissionRequest {
  nowMs: number;
  /** Every item of the batch counts as attempted work (03 Limits, Counting), valid or not. */
  itemCount: number;
  /** eventIds of the structurally valid items, in item order. */
  eventIds: string[];
  /** The batch's id (newBatchId); a new one when absent. */
  batchId?: string;
}

/** Values per analysis job in a COMMIT call: six field, value pairs (see sendCommits). */
const JOB_VALUES = 12;
/** Batches per COMMIT call: a call's arguments stay well under a megabyte (a job is about 1.5 KB). */
const MAX_COMMITS_PER_CALL = 200;

/** A batch whose rows are durable in the write-ahead log. */
export interface DurableBatch {
  batchId: string;
  receivedAtMs: number;
}

const retrySeconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000));

/** Batch ids begin with their process's 12 hex characters (Admission.newBatchId). */
const BATCH_PREFIX_LENGTH = 12;
const insertQueryPrefixOf = (batchPrefix: string) => `ingest_${batchPrefix}_`;
/** The insertQueryPrefix of the process that admitted `batchId`. */
export const insertQueryPrefixOfBatch = (batchId: string) => insertQueryPrefixOf(batchId.slice(0, BATCH_PREFIX_LENGTH));

/**
 * Admission of batches: the credential epoch check, the sliding windows, eventId
 * de-duplication and the Sandbox monthly allowance in one Redis script call per batch, plus the
 * COMMIT and RESOLVE scripts that follow it.
 */
export class Admission {
  private readonly batchPrefix = randomBytes(6).toString('hex');
  private batchCounter = 0;
  private readonly pendingMs: number;
  private readonly commits = new TurnBatcher((jobs: AnalysisJob[]) => this.sendCommits(jobs), MAX_COMMITS_PER_CALL);
  private readonly durables = new TurnBatcher((batches: DurableBatch[]) => this.settleDurable(batches), MAX_COMMITS_PER_CALL);

  constructor(private readonly redis: Redis, private readonly config: Config, readonly analysisStream: string = RedisKeys.analysisJobs) {
    // An admitted eventId stays "in flight" at most this long (the analyzer relies on it too).
    this.pendingMs = admissionInFlightMs(config.ingest);
  }

  /**
   * The query ids of this process's inserts begin with this, and so does it for every batch's
   * process: while any insert of a dead process still runs in ClickHouse, its batches cannot be
   * settled (see AdmissionResolver).
   */
  get insertQueryPrefix(): string {
    return insertQueryPrefixOf(this.batchPrefix);
  }

  /** A batch id unique to this process (its rows, its commit marker and its analysis job). */
  newBatchId(): string {
    return `${this.batchPrefix}${(this.batchCounter++).toString(36)}`;
  }

  async load(): Promise<void> {
    await Promise.all([ADMIT, COMMIT, DURABLE, RESOLVE].map((script) => script.load(this.redis)));
  }

  private windowsOf(credential: IngestCredential, itemCount: number): Window[] {
    const limits = this.config.limits;
    const windows: Window[] = [];
    if (credential.mode === 'sandbox') {
      windows.push(
        { key: IngestKeys.sandboxAccountRequests(credential.accountId), limit: limits.sandboxAccountRequestsPerMin, cost: 1, code: 'sandbox_request_rate_limited', counts: 'requests' },
        { key: IngestKeys.sandboxAccountEnvelopes(credential.accountId), limit: limits.sandboxAccountEnvelopesPerMin, cost: itemCount, code: 'sandbox_observation_rate_limited', counts: 'observations' },
      );
    }
    windows.push(
      { key: IngestKeys.integrationRequests(credential.connectionId), limit: limits.integrationRequestsPerMin, cost: 1, code: 'workload_rate_limited', counts: 'requests' },
      { key: IngestKeys.integrationObservations(credential.connectionId), limit: limits.integrationObservationsPerMin, cost: itemCount, code: 'workload_rate_limited', counts: 'observations' },
      { key: IngestKeys.workspaceObservations(credential.workspaceId), limit: limits.workspaceObservationsPerMin, cost: itemCount, code: 'workload_rate_limited', counts: 'observations' },
    );
    return windows;
  }

  /**
   * The most a collector of this connection can send per minute, from the same windows (the
   * connection check tells collectors, which pace themselves to it; the workspace's window is
   * shared with its other Integrations, so this is an upper bound).
   */
  budgetOf(credential: IngestCredential): { observationsPerMinute: number; requestsPerMinute: number } {
    let observationsPerMinute = Number.MAX_SAFE_INTEGER;
    let requestsPerMinute = Number.MAX_SAFE_INTEGER;
    for (const window of this.windowsOf(credential, 1)) {
      if (window.counts === 'requests') requestsPerMinute = Math.min(requestsPerMinute, window.limit);
      else observationsPerMinute = Math.min(observationsPerMinute, window.limit);
    }
    return { observationsPerMinute, requestsPerMinute };
  }

  async admit(credential: IngestCredential, request: AdmissionRequest): Promise<AdmissionResult> {
    const { period, resetAt } = usagePeriodOf(new Date(request.nowMs));
    const sandbox = credential.mode === 'sandbox';
    const windows = this.windowsOf(credential, request.itemCount);
    const batchId = request.batchId ?? this.newBatchId();
    const dedupValue = `${request.nowMs + this.pendingMs}:${batchId}`;
    const dedupPrefix = IngestKeys.eventIds(credential.connectionId, '');
    const accountUsageKey = RedisKeys.sandboxMonthlyUsage(credential.accountId, period);
    const workspaceUsageKey = RedisKeys.workspaceMonthlyUsage(credential.workspaceId, period, credential.mode);
    const keys = [
      RedisKeys.credentialEpoch(credential.connectionId),
      RedisKeys.sandboxAllowanceLimit(credential.accountId),
      accountUsageKey,
      workspaceUsageKey,
      ...windows.map((window) => window.key),
      IngestKeys.pendingBatches,
    ];
    // The admission record's first fields (admissionScripts.ts); the script adds the rest.
    const record = `${credential.connectionId}|${credential.workspaceId}|${credential.mode}|${request.nowMs}|${sandbox ? 1 : 0}|`
      + `${accountUsageKey}|${workspaceUsageKey}|${windows.map((window) => window.key).join(',')}|${windows.map((window) => window.cost).join(',')}|`;
    const args: (string | number)[] = [
      credential.epoch, request.nowMs, WINDOW_MS, BUCKET_MS, sandbox ? '1' : '0', this.config.limits.sandboxQuotaEnforced ? '1' : '0',
      credential.sandboxAllowance ?? this.config.limits.sandboxMonthlyAllowance, this.config.ingest.dedupWindowSeconds, dedupValue,
      USAGE_TTL_SECONDS, windows.length, dedupPrefix, request.eventIds.length, record,
    ];
    for (const window of windows) args.push(window.limit, window.cost);
    for (const eventId of request.eventIds) args.push(eventId);
    const reply = (await ADMIT.run(this.redis, keys, args)) as [number, ...unknown[]];
    switch (reply[0]) {
      case 1: {
        const flags = String(reply[1]);
        const duplicate = request.eventIds.map((_, index) => flags.charCodeAt(index) === 49);
        const newEventIds = request.eventIds.filter((_, index) => !duplicate[index]);
        return {
          kind: 'admitted', duplicate, newCount: newEventIds.length,
          ticket: { batchId, dedupKey: IngestKeys.eventIds(credential.connectionId, Number(reply[3])), newEventIds },
        };
      }
      case 2: return { kind: 'stale_credential' };
      case 3: return { kind: 'rate_limited', code: windows[Number(reply[1]) - 1].code, retryAfterSeconds: retrySeconds(Number(reply[2])) };
      case 4: return { kind: 'quota_exhausted', resetAt: resetAt.toISOString() };
      case 5: return { kind: 'in_flight' };
      case 6: return { kind: 'unsettled', batchId: String(reply[1]), deadlineMs: Number(reply[2]) };
      default: throw new Error(`unexpected admission reply ${String(reply[0])}`);
    }
  }

  /** Undoes an admission whose rows were certainly not written: settled with none of them stored. */
  async release(batchId: string): Promise<void> {
    await this.resolve(batchId, []);
  }

  /** Settles a batch from the eventIds ClickHouse holds of it (see RESOLVE). */
  async resolve(batchId: string, storedEventIds: readonly string[]): Promise<{ kept: number; released: number }> {
    const args = [batchId, this.config.ingest.dedupWindowSeconds, this.config.ingest.analysisStreamMaxLen, ...storedEventIds];
    const [kept, released] = (await RESOLVE.run(this.redis, [IngestKeys.pendingBatches, this.analysisStream], args)) as [number, number];
    return { kept, released };
  }

  /** The connection, receipt time and new eventIds of an unsettled batch, or null once it is settled. */
  async pendingBatch(batchId: string): Promise<{ connectionId: string; receivedAtMs: number; eventIds: string[] } | null> {
    const record = await this.redis.get(IngestKeys.admissionRecord(batchId));
    if (record === null) return null;
    const fields = record.split('|');
    return { connectionId: fields[0], receivedAtMs: Number(fields[3]), eventIds: fields[12].split(',') };
  }

  /** Unsettled batches whose deadline is before `nowMs`, oldest first, with their deadlines. */
  async overdueBatches(nowMs: number, limit: number): Promise<{ batchId: string; deadlineMs: number }[]> {
    const flat = await this.redis.zrangebyscore(IngestKeys.pendingBatches, '-inf', nowMs, 'WITHSCORES', 'LIMIT', 0, limit);
    const overdue: { batchId: string; deadlineMs: number }[] = [];
    for (let index = 0; index < flat.length; index += 2) overdue.push({ batchId: flat[index], deadlineMs: Number(flat[index + 1]) });
    return overdue;
  }

  /**
   * Marks the batch committed and enqueues its analysis job. Resolves true when both happened,
   * false when the job could not be added; rejects when Redis could not be reached.
   *
   * The batches of one insert are answered together: their commits, asked for in the same turn
   * of the event loop, go to Redis as one COMMIT call (up to MAX_COMMITS_PER_CALL), which costs
   * Redis and the edge one script call per insert instead of one per batch.
   */
  commit(job: AnalysisJob): Promise<boolean> {
    return this.commits.add(job);
  }

  private async sendCommits(jobs: readonly AnalysisJob[]): Promise<boolean[]> {
    const keys = [this.analysisStream, IngestKeys.pendingBatches];
    const args: (string | number)[] = [this.config.ingest.dedupWindowSeconds, this.config.ingest.analysisStreamMaxLen, JOB_VALUES];
    for (const job of jobs) {
      args.push(
        'connectionId', job.connectionId, 'workspaceId', job.workspaceId, 'mode', job.mode, 'batchId', job.batchId,
        'receivedAtMs', job.receivedAtMs, 'eventIds', job.eventIds.join(','),
      );
    }
    const added = String(await COMMIT.run(this.redis, keys, args));
    return jobs.map((_, index) => added.charCodeAt(index) === 49);
  }

  /**
   * Commits one batch whose rows are durable in the write-ahead log: the batches asked for in the
   * same turn of the event loop (those of one log write) go to Redis as one DURABLE call.
   */
  durable(batch: DurableBatch): Promise<boolean> {
    return this.durables.add(batch);
  }

  /**
   * Commits batches whose rows are durable in the write-ahead log (see DURABLE): true for each
   * batch committed (now or before), false for one released meanwhile.
   */
  async settleDurable(batches: readonly DurableBatch[]): Promise<boolean[]> {
    if (batches.length === 0) return [];
    const args: (string | number)[] = [this.config.ingest.dedupWindowSeconds];
    for (const batch of batches) args.push(batch.batchId, batch.receivedAtMs);
    const reply = String(await DURABLE.run(this.redis, [IngestKeys.pendingBatches, RedisKeys.unshippedBatches], args));
    return batches.map((_, index) => reply.charCodeAt(index) === 49);
  }

  /** GET /v1/collector/connection: the epoch check and the per-client budget in the same script. */
  async checkConnection(credential: IngestCredential, nowMs: number): Promise<{ kind: 'ok' } | { kind: 'stale_credential' } | { kind: 'rate_limited'; retryAfterSeconds: number }> {
    const key = IngestKeys.connectionChecks(credential.connectionKey);
    const { period } = usagePeriodOf(new Date(nowMs));
    const keys = [
      RedisKeys.credentialEpoch(credential.connectionId), RedisKeys.sandboxAllowanceLimit(credential.accountId),
      RedisKeys.sandboxMonthlyUsage(credential.accountId, period), RedisKeys.workspaceMonthlyUsage(credential.workspaceId, period, credential.mode), key,
      IngestKeys.pendingBatches,
    ];
    const args = [credential.epoch, nowMs, WINDOW_MS, BUCKET_MS, '0', '0', 0, 1, '', 1, 1, '', 0, '', this.config.ingest.connectionChecksPerMin, 1];
    const reply = (await ADMIT.run(this.redis, keys, args)) as [number, ...unknown[]];
    if (reply[0] === 2) return { kind: 'stale_credential' };
    if (reply[0] === 3) return { kind: 'rate_limited', retryAfterSeconds: retrySeconds(Number(reply[2])) };
    return { kind: 'ok' };
  }
}
