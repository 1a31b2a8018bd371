import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Config } from '../../shared/config.js';
import { RedisKeys, isCluster } from '../../shared/redis.js';
import { usagePeriodOf } from '../../shared/usagePeriod.js';
import type { IngestCredential } from '../common/credential.js';
import type { EventIdDigests } from '../common/eventIdDigest.js';
import { DEDUP_PERIODS, IngestKeys, dedupPeriods, parsePendingMember, pendingMember, periodExpiresAt } from './keys.js';
import {
  SCRIPTS,
  admitCall,
  admitOutcome,
  connectionCheckCall,
  connectionCheckOutcome,
  durableCall,
  durableOutcome,
  releaseCall,
  releaseOutcome,
  type AdmitInput,
  type AdmitWindow,
} from './scripts.js';
import { TurnBatcher } from './turnBatcher.js';

/** 03 Limits: every budget is per 60-second window, counted in one-second buckets. */
export const WINDOW_MS = 60_000;
export const BUCKET_MS = 1_000;
/** Monthly usage counters outlive their month so the console can still read them (about 13 months). */
const USAGE_TTL_SECONDS = 400 * 24 * 3600;

export type WindowCode =
  | 'sandbox_request_rate_limited'
  | 'sandbox_observation_rate_limited'
  | 'workload_rate_limited'
  | 'connection_rate_limited';

interface Window extends AdmitWindow {
  code: WindowCode;
  /** What the window counts: a batch is one request and its items are observations. */
  counts: 'requests' | 'observations';
}

/** An admitted batch: what its log record and its commit need. */
export interface AdmissionTicket {
  accountId: string;
  batchId: string;
  receivedAtMs: number;
  /** The eventIds this batch admitted as new. */
  newEventIds: string[];
}

export type AdmissionResult =
  | { kind: 'admitted'; duplicate: boolean[]; ticket: AdmissionTicket }
  | { kind: 'stale_credential' }
  | { kind: 'rate_limited'; code: WindowCode; retryAfterSeconds: number }
  | { kind: 'quota_exhausted'; resetAt: string }
  | { kind: 'in_flight' }
  /** An eventId belongs to batch `batchId`, past its deadline and never settled (see AdmissionResolver). */
  | { kind: 'unsettled'; accountId: string; batchId: string; receivedAtMs: number };

export interface AdmissionRequest {
  nowMs: number;
  /** Every item of the batch counts as attempted work (03 Limits, Counting), valid or not. */
  itemCount: number;
  /** eventIds of the structurally valid items, in item order. */
  eventIds: string[];
  /** Their digests (common/eventIdDigest.ts), when the check made them; else made here. */
  digests?: EventIdDigests;
  batchId: string;
}

/** A batch whose rows are durable in the write-ahead log. */
export interface DurableBatch {
  accountId: string;
  batchId: string;
  receivedAtMs: number;
}

const retrySeconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000));

/** Batches per DURABLE call: a call's arguments stay small, and Redis runs other calls between. */
const MAX_DURABLE_PER_CALL = 200;

/**
 * Admission of batches: the credential epoch check, the sliding windows, eventId
 * de-duplication and the Sandbox monthly allowance in one Redis script call per batch (ADMIT),
 * then DURABLE once its rows are durable in the log, or RELEASE when they never will be.
 *
 * Every key of one call carries the account's hash tag (keys.ts). The two sets the analyzer
 * reads across all accounts (RedisKeys.pendingAdmissions, unanalysedBatches) are written by
 * separate commands, ordered so that a batch that may still be analysed is always in one of
 * them: pending before ADMIT, unanalysed before it leaves pending.
 */
export class Admission {
  private readonly batchPrefix = randomBytes(6).toString('hex');
  private batchCounter = 0;
  private readonly durables = new TurnBatcher((batches: DurableBatch[]) => this.settleDurable(batches), MAX_DURABLE_PER_CALL);

  private readonly cluster: boolean;

  constructor(
    private readonly redis: Redis,
    private readonly config: Config,
  ) {
    this.cluster = isCluster(redis);
  }

  /** A batch id unique to this process (its rows, its commit and its analysis job). */
  newBatchId(): string {
    return `${this.batchPrefix}${(this.batchCounter++).toString(36)}`;
  }

  async load(): Promise<void> {
    await Promise.all(Object.values(SCRIPTS).map((script) => script.load(this.redis)));
  }

  private windowsOf(credential: IngestCredential, itemCount: number): Window[] {
    const limits = this.config.limits;
    const { accountId } = credential;
    const windows: Window[] = [];
    if (credential.mode === 'sandbox') {
      windows.push(
        {
          key: IngestKeys.sandboxAccountRequests(accountId),
          limit: limits.sandboxAccountRequestsPerMin,
          cost: 1,
          code: 'sandbox_request_rate_limited',
          counts: 'requests',
        },
        {
          key: IngestKeys.sandboxAccountEnvelopes(accountId),
          limit: limits.sandboxAccountEnvelopesPerMin,
          cost: itemCount,
          code: 'sandbox_observation_rate_limited',
          counts: 'observations',
        },
      );
    }
    windows.push(
      {
        key: IngestKeys.integrationRequests(accountId, credential.connectionId),
        limit: limits.integrationRequestsPerMin,
        cost: 1,
        code: 'workload_rate_limited',
        counts: 'requests',
      },
      {
        key: IngestKeys.integrationObservations(accountId, credential.connectionId),
        limit: limits.integrationObservationsPerMin,
        cost: itemCount,
        code: 'workload_rate_limited',
        counts: 'observations',
      },
      {
        key: IngestKeys.workspaceObservations(accountId, credential.workspaceId),
        limit: limits.workspaceObservationsPerMin,
        cost: itemCount,
        code: 'workload_rate_limited',
        counts: 'observations',
      },
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

  /** ADMIT's input for a credential, its windows and a request. */
  private admitInput(credential: IngestCredential, windows: AdmitWindow[], request: AdmissionRequest): AdmitInput {
    const { accountId, connectionId, workspaceId, mode } = credential;
    const { nowMs, batchId, eventIds, digests } = request;
    const { period } = usagePeriodOf(new Date(nowMs));
    const dedupWindowSeconds = this.config.ingest.dedupWindowSeconds;
    const { current, periodSeconds } = dedupPeriods(nowMs, dedupWindowSeconds);
    const periods = Array.from({ length: DEDUP_PERIODS }, (_, back) => current - back);
    return {
      epochKey: RedisKeys.credentialEpoch(accountId, connectionId),
      allowanceKey: RedisKeys.sandboxAllowanceLimit(accountId),
      accountUsageKey: RedisKeys.sandboxMonthlyUsage(accountId, period),
      workspaceUsageKey: RedisKeys.workspaceMonthlyUsage(accountId, workspaceId, period, mode),
      metaKeys: periods.map((each) => IngestKeys.eventIdMeta(accountId, connectionId, each)),
      legacyKeys: periods.map((each) => IngestKeys.eventIds(accountId, connectionId, each)),
      committedKeys: periods.map((each) => IngestKeys.committedBatches(accountId, each)),
      recordKeys: periods.map((each) => IngestKeys.admissionRecords(accountId, each)),
      windows,
      cachedEpoch: credential.epoch,
      nowMs,
      windowMs: WINDOW_MS,
      bucketMs: BUCKET_MS,
      sandbox: mode === 'sandbox',
      quotaEnforced: this.config.limits.sandboxQuotaEnforced,
      allowanceFallback: credential.sandboxAllowance ?? this.config.limits.sandboxMonthlyAllowance,
      expiresAt: periodExpiresAt(current, periodSeconds, dedupWindowSeconds),
      batchId,
      usageTtlSeconds: USAGE_TTL_SECONDS,
      admissionDeadlineMs: this.config.ingest.admissionDeadlineMs,
      eventIds,
      digests,
    };
  }

  /**
   * Admits a batch. It is put in the pending set first: from then on, whatever happens to this
   * process, the batch is either settled by the resolver's sweep or it holds the analyzer's
   * stream time back; a batch that admitted nothing leaves the set at once.
   */
  async admit(credential: IngestCredential, request: AdmissionRequest): Promise<AdmissionResult> {
    const windows = this.windowsOf(credential, request.itemCount);
    const member = pendingMember(credential.accountId, request.batchId);
    const { keys, args } = admitCall(this.admitInput(credential, windows, request));
    const [, reply] = await this.inOrder(
      () => this.redis.zadd(RedisKeys.pendingAdmissions, request.nowMs, member),
      () => SCRIPTS.ADMIT.run(this.redis, keys, args),
    );
    const outcome = admitOutcome(reply as unknown[], request.eventIds.length);
    const newEventIds = outcome.kind === 'admitted' ? request.eventIds.filter((_, index) => !outcome.duplicate[index]) : [];
    if (newEventIds.length === 0) await this.redis.zrem(RedisKeys.pendingAdmissions, member);
    switch (outcome.kind) {
      case 'admitted':
        return {
          kind: 'admitted',
          duplicate: outcome.duplicate,
          ticket: { accountId: credential.accountId, batchId: request.batchId, receivedAtMs: request.nowMs, newEventIds },
        };
      case 'rate_limited':
        return { kind: 'rate_limited', code: windows[outcome.window].code, retryAfterSeconds: retrySeconds(outcome.retryMs) };
      case 'quota_exhausted':
        return { kind: 'quota_exhausted', resetAt: usagePeriodOf(new Date(request.nowMs)).resetAt.toISOString() };
      case 'unsettled':
        return { ...outcome, accountId: credential.accountId };
      default:
        return outcome;
    }
  }

  /**
   * Commits one batch whose rows are durable in the write-ahead log: the batches asked for in the
   * same turn of the event loop (those of one log write) go to Redis together (see settleDurable).
   */
  durable(batch: DurableBatch): Promise<boolean> {
    return this.durables.add(batch);
  }

  /**
   * Commits batches whose rows are durable in the write-ahead log: one DURABLE call per account
   * and period, then the committed batches move from the pending set to the unanalysed set (in
   * that order). True for each batch committed (now or before), false for one released meanwhile.
   */
  async settleDurable(batches: readonly DurableBatch[]): Promise<boolean[]> {
    const dedupWindowSeconds = this.config.ingest.dedupWindowSeconds;
    const groups = new Map<string, { accountId: string; period: number; periodSeconds: number; indexes: number[] }>();
    batches.forEach((batch, index) => {
      const { current, periodSeconds } = dedupPeriods(batch.receivedAtMs, dedupWindowSeconds);
      const name = `${batch.accountId}/${current}`;
      const group = groups.get(name) ?? { accountId: batch.accountId, period: current, periodSeconds, indexes: [] };
      group.indexes.push(index);
      groups.set(name, group);
    });
    const committed = new Array<boolean>(batches.length).fill(false);
    await Promise.all(
      [...groups.values()].map(async (group) => {
        const { keys, args } = durableCall({
          recordKey: IngestKeys.admissionRecords(group.accountId, group.period),
          committedKey: IngestKeys.committedBatches(group.accountId, group.period),
          expiresAt: periodExpiresAt(group.period, group.periodSeconds, dedupWindowSeconds),
          batchIds: group.indexes.map((index) => batches[index].batchId),
        });
        const replies = durableOutcome(await SCRIPTS.DURABLE.run(this.redis, keys, args), group.indexes.length);
        group.indexes.forEach((index, at) => {
          committed[index] = replies[at];
        });
      }),
    );
    const done = batches.filter((_, index) => committed[index]);
    if (batches.length > 0) {
      await this.inOrder(
        async () =>
          done.length > 0
            ? this.redis.zadd(RedisKeys.unanalysedBatches, ...done.flatMap((batch) => [batch.receivedAtMs, batch.batchId]))
            : 0,
        () => this.redis.zrem(RedisKeys.pendingAdmissions, ...batches.map((batch) => pendingMember(batch.accountId, batch.batchId))),
      );
    }
    return committed;
  }

  /**
   * Runs `second` after `first` has run in Redis. On one server both go down one connection, which
   * Redis serves in order, so `second` is sent without waiting for `first`'s answer (a round trip
   * less per batch); a cluster may serve them on two nodes, so it waits.
   */
  private async inOrder<A, B>(first: () => Promise<A>, second: () => Promise<B>): Promise<[A, B]> {
    const before = first();
    if (this.cluster) await before;
    return Promise.all([before, second()]);
  }

  /**
   * Releases a batch that was never made durable (RELEASE) and takes it out of the pending set:
   * the eventIds it released, 0 when it was already settled.
   */
  async release(accountId: string, batchId: string, receivedAtMs: number): Promise<number> {
    const { current } = dedupPeriods(receivedAtMs, this.config.ingest.dedupWindowSeconds);
    const recordKey = IngestKeys.admissionRecords(accountId, current);
    const record = await this.redis.hget(recordKey, batchId);
    let released = 0;
    if (record !== null) {
      const { keys, args } = releaseCall(recordKey, batchId, record);
      released = releaseOutcome(await SCRIPTS.RELEASE.run(this.redis, keys, args));
    }
    await this.redis.zrem(RedisKeys.pendingAdmissions, pendingMember(accountId, batchId));
    return released;
  }

  /** Pending batches received before `beforeMs`, oldest first. */
  async overdueBatches(beforeMs: number, limit: number): Promise<DurableBatch[]> {
    const flat = await this.redis.zrangebyscore(RedisKeys.pendingAdmissions, '-inf', `(${beforeMs}`, 'WITHSCORES', 'LIMIT', 0, limit);
    const overdue: DurableBatch[] = [];
    for (let index = 0; index < flat.length; index += 2)
      overdue.push({ ...parsePendingMember(flat[index]), receivedAtMs: Number(flat[index + 1]) });
    return overdue;
  }

  /** GET /v1/collector/connection: the epoch check and the per-client budget in one script call (CONNECTION_CHECK). */
  async checkConnection(
    credential: IngestCredential,
    nowMs: number,
  ): Promise<{ kind: 'ok' } | { kind: 'stale_credential' } | { kind: 'rate_limited'; retryAfterSeconds: number }> {
    const { keys, args } = connectionCheckCall({
      epochKey: RedisKeys.credentialEpoch(credential.accountId, credential.connectionId),
      windowKey: IngestKeys.connectionChecks(credential.accountId, credential.connectionKey),
      cachedEpoch: credential.epoch,
      nowMs,
      windowMs: WINDOW_MS,
      bucketMs: BUCKET_MS,
      limit: this.config.ingest.connectionChecksPerMin,
    });
    const outcome = connectionCheckOutcome((await SCRIPTS.CONNECTION_CHECK.run(this.redis, keys, args)) as unknown[]);
    if (outcome.kind !== 'rate_limited') return outcome;
    return { kind: 'rate_limited', retryAfterSeconds: retrySeconds(outcome.retryMs) };
  }
}
