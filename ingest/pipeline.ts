import type pg from 'pg';
import type { Redis } from 'ioredis';
import type { ClickHouseClient } from '@clickhouse/client';
import type { Registry } from 'prom-client';
import type { Clock } from '../shared/clock.js';
import type { Config } from '../shared/config.js';
import { AppError, isAppError } from '../shared/errors/index.js';
import { ANALYSIS_CONSUMER_GROUP, RedisKeys, type AnalysisJob } from '../shared/redis.js';
import { Admission, type AdmissionRequest, type AdmissionResult, type AdmissionTicket } from './admission.js';
import { AdmissionResolver } from './admissionResolver.js';
import { presentedCredentials, resolveCredential, tokenMatches, unauthenticated, verifySignature, type Presented } from './authenticate.js';
import type { BatchBinding, CheckedBatch } from './batchCheck.js';
import { BatchChecker, DEFAULT_BATCH_CHECKER_OPTIONS } from './batchChecker.js';
import { BatchPool } from './batchPool.js';
import { newRows } from './batchRows.js';
import { CommitRetryQueue } from './commitRetry.js';
import { CredentialCache, CredentialDecryptError, type IngestCredential } from './credentials.js';
import { BatchShapeError, MAX_BODY_BYTES, errorResponse, jsonResponse, jsonTextResponse, type EdgeRequest, type EdgeResponse } from './edgeHttp.js';
import { GroupCommitWriter, InsertFailedError } from './groupCommit.js';
import { MachineLoad } from './machineLoad.js';
import { encodeBatchRecord } from './log/batchRecord.js';
import { Shipper } from './log/shipper.js';
import { WriteAheadLog } from './log/writeAheadLog.js';
import { IngestMetrics } from './metrics.js';
import { insertObservationRows, insertProvesNothingWritten } from './observationsTable.js';
import { SharedSlots } from './sharedSlots.js';

/** What an edge adapter needs to build the pipeline. */
export interface EdgeDeps {
  config: Config;
  pool: Pick<pg.Pool, 'query'>;
  redis: Redis;
  clickhouse: ClickHouseClient;
  clock: Clock;
  metrics: Registry;
  /** The analysis stream (default `RedisKeys.analysisJobs`); tests point it elsewhere. */
  analysisStream?: string;
  /** Receives store outages and unexpected failures (answered 503/500 without detail). */
  logError?: (message: string, error: unknown) => void;
}

/** Builds and starts the pipeline with its metrics on the given registry (both adapters use this). */
export async function createIngestPipeline(deps: EdgeDeps): Promise<IngestPipeline> {
  const pipeline = new IngestPipeline({ ...deps, metrics: new IngestMetrics(deps.metrics) });
  await pipeline.start();
  return pipeline;
}

/** The pipeline's own view of its dependencies: the edge's, with the metrics already registered. */
export type PipelineDeps = Omit<EdgeDeps, 'metrics'> & { metrics: IngestMetrics };

/** A store (PostgreSQL, Redis, ClickHouse) could not serve the request: 503 `service_unavailable`. */
class StoreUnavailable extends Error {
  constructor(readonly reason: unknown) {
    super(reason instanceof Error ? reason.message : 'store unavailable');
  }
}

async function fromStore<T>(work: Promise<T> | T): Promise<T> {
  try {
    return await work;
  } catch (error) {
    if (isAppError(error) || error instanceof CredentialDecryptError) throw error;
    throw new StoreUnavailable(error);
  }
}

const serviceUnavailable = (retryAfterSeconds: number) => new AppError('service_unavailable', { retryAfterSeconds });

/**
 * Retry-After of a 503 while a store is down (03: a collector retries 5xx with bounded backoff
 * and honours Retry-After): long enough that thousands of collectors do not hammer a
 * recovering store, short enough that an outage of seconds costs little.
 */
export const STORE_RETRY_AFTER_SECONDS = 5;

/** Overdue batches settled for one admission before it answers 503 (see AdmissionResolver). */
const MAX_SETTLED_PER_ADMISSION = 5;

/** Requests in progress from which the long group-commit wait pays (see longWaitPays). */
export const LONG_WAIT_MIN_REQUESTS = 256;

/**
 * Whether the group commit should wait its long, busy wait (INGEST_GROUP_COMMIT_BUSY_WAIT_MS):
 * while the cores are saturated and many requests are in progress, CPU is what every answer
 * waits for, and larger inserts cost ClickHouse much less of it. With few requests in progress
 * the cores may be saturated by something else (ClickHouse merging what a burst left behind):
 * a long wait would then only lengthen the answers (the open-loop p99 at 25,000 envelopes/s rose
 * from about 90 ms to 368 in the 10-s slices right after a full-load minute; bench/RESULTS.md).
 */
export const longWaitPays = (machineBusy: boolean, requestsInProgress: number): boolean =>
  machineBusy && requestsInProgress >= LONG_WAIT_MIN_REQUESTS;

/** What the batch checks need of a credential (no secret: it goes to a worker thread). */
const bindingOf = (credential: IngestCredential): BatchBinding => ({
  connectionId: credential.connectionId, workspaceId: credential.workspaceId, accountId: credential.accountId,
  integrationId: credential.integrationId, integrationKey: credential.integrationKey, tenantId: credential.tenantId,
  environmentId: credential.environmentId, mode: credential.mode, direction: credential.direction, protocol: credential.protocol,
});

/** An admitted batch, reduced to what persisting and answering it need. */
interface PreparedBatch {
  /** TabSeparated lines of the new observations, or null when there is nothing to write. */
  rows: Buffer | null;
  ticket: AdmissionTicket;
  job: AnalysisJob;
  response: EdgeResponse;
  counts: { accepted: number; duplicate: number; rejected: number };
}

/**
 * The ingest pipeline (issue 4): verify → parse → validate → admit → persist → enqueue, free
 * of any HTTP server. `handle` never throws: every outcome is an EdgeResponse.
 */
export class IngestPipeline {
  readonly credentials: CredentialCache;
  readonly admission: Admission;
  readonly writer: GroupCommitWriter;
  private readonly batches: BatchChecker;
  private readonly slots: SharedSlots | null;
  private readonly commitRetry: CommitRetryQueue;
  private readonly resolver: AdmissionResolver;
  private readonly machineLoad: MachineLoad | null;
  /** The write-ahead log and its shipper, when INGEST_WAL_DIR is set (issue 17). */
  private log: WriteAheadLog | null = null;
  shipper: Shipper | null = null;
  private active = 0;
  private idle: (() => void)[] = [];

  constructor(private readonly deps: PipelineDeps) {
    const { config, metrics } = deps;
    this.credentials = new CredentialCache({
      pool: deps.pool, redis: deps.redis, encryptionKey: config.secretEncryptionKey, onReload: () => metrics.credentialLoads.inc(),
    });
    this.admission = new Admission(deps.redis, config, deps.analysisStream ?? RedisKeys.analysisJobs);
    this.commitRetry = new CommitRetryQueue(this.admission, metrics);
    this.resolver = new AdmissionResolver({
      admission: this.admission, redis: deps.redis, clickhouse: deps.clickhouse, clock: deps.clock, metrics, sweepIntervalMs: config.ingest.settleIntervalMs,
      ...(deps.logError ? { logError: deps.logError } : {}),
    });
    const slots = config.ingest.sharedSlots > 0 ? new SharedSlots(config.ingest.sharedSlots) : null;
    this.slots = slots;
    if (slots !== null) metrics.slotsInUse = () => slots.count - slots.available;
    this.batches = new BatchChecker(config.ingest.workerThreads > 0 ? new BatchPool(config.ingest.workerThreads, { slots }) : null, DEFAULT_BATCH_CHECKER_OPTIONS, slots);
    this.machineLoad = config.ingest.groupCommitBusyWaitMs > 0 ? new MachineLoad() : null;
    const machineLoad = this.machineLoad;
    this.writer = new GroupCommitWriter(
      (body, _rows, signal, queryId) => insertObservationRows(deps.clickhouse, body, signal, queryId),
      {
        maxRows: config.ingest.groupCommitMaxRows,
        minWaitMs: config.ingest.groupCommitMinWaitMs,
        maxWaitMs: config.ingest.groupCommitMaxWaitMs,
        ...(machineLoad ? { busyWaitMs: config.ingest.groupCommitBusyWaitMs, isBusy: () => longWaitPays(machineLoad.busy, this.active) } : {}),
        maxInFlight: config.ingest.groupCommitMaxInFlight,
        insertTimeoutMs: config.ingest.insertTimeoutMs,
        maxQueuedRows: Math.max(4 * config.ingest.groupCommitMaxRows, 2_000),
        queryIdPrefix: this.admission.insertQueryPrefix,
        provesNothingWritten: insertProvesNothingWritten,
      },
      {
        inserted: (rows, seconds) => {
          metrics.groupCommitRows.observe(rows);
          metrics.insertSeconds.observe(seconds);
        },
        failed: () => metrics.insertFailures.inc(),
      },
    );
  }

  /** Loads the scripts and creates the analysis consumer group (ignoring BUSYGROUP). */
  async start(): Promise<void> {
    await this.admission.load();
    await this.deps.redis.xgroup('CREATE', this.admission.analysisStream, ANALYSIS_CONSUMER_GROUP, '0', 'MKSTREAM').catch((error: Error) => {
      if (!error.message.startsWith('BUSYGROUP')) throw error;
    });
    this.resolver.start();
    const { ingest } = this.deps.config;
    if (ingest.walDir !== null) {
      const log = await WriteAheadLog.open({
        dir: ingest.walDir,
        segmentBytes: ingest.walSegmentBytes,
        onRepair: (repair) => this.deps.logError?.('write-ahead log repaired', new Error(`segment ${repair.segment} cut at ${repair.offset}: ${repair.reason}; ${repair.segmentsRemoved} later segments removed`)),
      });
      this.log = log;
      this.shipper = new Shipper({
        log, admission: this.admission, redis: this.deps.redis, analysisStream: this.admission.analysisStream,
        analysisStreamMaxLen: ingest.analysisStreamMaxLen,
        insert: (body, signal, queryId) => insertObservationRows(this.deps.clickhouse, body, signal, queryId),
        queryIdPrefix: this.admission.insertQueryPrefix, insertTimeoutMs: ingest.insertTimeoutMs,
        maxInsertBytes: ingest.shipMaxBytes, intervalMs: ingest.shipIntervalMs, maxLogBytes: ingest.walMaxBytes, maxLogAgeMs: ingest.walMaxAgeMs,
        nowMs: () => Date.now(),
        onShipped: (_batches, rows, _bytes, seconds) => {
          this.deps.metrics.groupCommitRows.observe(rows);
          this.deps.metrics.insertSeconds.observe(seconds);
        },
        onFailure: (error) => {
          this.deps.metrics.insertFailures.inc();
          this.deps.logError?.('write-ahead log shipping failed', error);
        },
      });
      await this.shipper.start();
    }
  }

  /**
   * Memory for a request body of `length` bytes, for an adapter that reads bodies itself: a
   * shared slot when one is free and large enough (ingest/sharedSlots.ts), else a new buffer.
   * `handle` gives it back once the body is no longer read; an adapter that does not hand the
   * request over (the client went away, the body grew too large) calls `releaseBody`.
   */
  bodyBuffer(length: number): Buffer {
    return this.slots?.take(length) ?? Buffer.allocUnsafe(length);
  }

  /** Gives back memory from `bodyBuffer` (any other buffer is ignored). */
  releaseBody(body: Buffer): void {
    this.slots?.give(body);
  }

  async handle(request: EdgeRequest): Promise<EdgeResponse> {
    this.active += 1;
    const started = process.hrtime.bigint();
    const route = request.path === '/ingest' ? 'ingest' : request.path === '/v1/collector/connection' ? 'connection' : 'other';
    let response: EdgeResponse;
    try {
      response = await this.route(request);
    } catch (error) {
      response = this.failure(error);
    } finally {
      this.active -= 1;
      if (this.active === 0) for (const resolve of this.idle.splice(0)) resolve();
    }
    this.deps.metrics.request(route, response.status);
    this.deps.metrics.requestSeconds.labels(route).observe(Number(process.hrtime.bigint() - started) / 1e9);
    return response;
  }

  /** Waits for requests in progress and flushes the group commit (graceful shutdown). */
  async drain(): Promise<void> {
    // Flush first: requests in progress are waiting for their rows to commit.
    const flushed = this.writer.drain();
    if (this.active > 0) await new Promise<void>((resolve) => this.idle.push(resolve));
    await flushed;
    await this.writer.drain();
    await this.commitRetry.flush();
    this.commitRetry.stop();
    await this.shipper?.drain();
    await this.log?.close();
    this.resolver.stop();
    this.machineLoad?.stop();
    await this.batches.close();
  }

  private route(request: EdgeRequest): Promise<EdgeResponse> {
    if (request.path === '/ingest' && request.method === 'POST') return this.ingest(request);
    if (request.path === '/v1/collector/connection' && request.method === 'GET') return this.connectionCheck(request);
    return Promise.resolve(errorResponse(new AppError('not_found')));
  }

  private failure(error: unknown): EdgeResponse {
    if (isAppError(error)) return errorResponse(error);
    if (error instanceof BatchShapeError) return error.response();
    if (error instanceof StoreUnavailable) {
      this.deps.logError?.('store unavailable', error.reason);
      return errorResponse(serviceUnavailable(STORE_RETRY_AFTER_SECONDS));
    }
    this.deps.logError?.('unexpected failure', error);
    return errorResponse(new AppError('service_unavailable', { status: 500 }));
  }

  /** Authentication of 03 for both routes; returns the binding and "now" of the service clock. */
  private async authenticate(request: EdgeRequest): Promise<{ presented: Presented; credential: IngestCredential; nowMs: number }> {
    const presented = presentedCredentials(request);
    const credential = await fromStore(resolveCredential(this.credentials, presented));
    await fromStore(this.deps.clock.sync());
    const nowMs = this.deps.clock.nowMs();
    verifySignature(credential, presented, request.rawBody, nowMs);
    return { presented, credential, nowMs };
  }

  /**
   * After the admission script saw a moved credential epoch: the binding is read again and the
   * request re-verified against it (a rotated-away or revoked token fails here).
   */
  private async reauthenticate(credential: IngestCredential, presented: Presented, rawBody: Buffer, nowMs: number): Promise<IngestCredential> {
    const current = await fromStore(this.credentials.reload(credential));
    if (!tokenMatches(current, presented.token)) throw unauthenticated();
    verifySignature(current, presented, rawBody, nowMs);
    return current;
  }

  private async ingest(request: EdgeRequest): Promise<EdgeResponse> {
    let prepared: EdgeResponse | PreparedBatch;
    try {
      prepared = await this.admitBatch(request);
    } finally {
      this.releaseBody(request.rawBody);
    }
    return 'status' in prepared ? prepared : this.persist(prepared);
  }

  /**
   * Verify, then parse, validate and serialise on a worker thread (batchCheck.ts), then admit;
   * the answer's text and the new rows are ready before the group commit, so nothing of the
   * parsed batch stays alive while the rows wait for it.
   */
  private async admitBatch(request: EdgeRequest): Promise<EdgeResponse | PreparedBatch> {
    if (request.rawBody.length > MAX_BODY_BYTES) throw new AppError('request_too_large');
    const auth = await this.authenticate(request);
    let { credential } = auth;
    const { nowMs, presented } = auth;
    const batchId = this.admission.newBatchId();
    // The body may be moved to a worker thread and back: only the returned one may be read.
    let body = request.rawBody;
    for (let attempt = 0; ; attempt += 1) {
      const answer = await this.batches.check({
        body, contentType: request.headers['content-type'], binding: bindingOf(credential), batchId, receivedAtMs: nowMs,
      });
      body = answer.body;
      const checked = answer.output;
      if (checked.kind === 'invalid_request') throw new AppError('invalid_request');
      if (checked.kind === 'batch_shape') throw new BatchShapeError();
      let prepared: PreparedBatch | undefined;
      try {
        if (this.shipper?.saturated()) throw serviceUnavailable(STORE_RETRY_AFTER_SECONDS);
        if (this.writer.saturated()) throw serviceUnavailable(1);
        const started = process.hrtime.bigint();
        const result = await fromStore(this.admitSettling(credential, { nowMs, itemCount: checked.itemCount, eventIds: checked.eventIds, batchId }));
        this.deps.metrics.admissionSeconds.observe(Number(process.hrtime.bigint() - started) / 1e9);
        if (result.kind !== 'stale_credential') {
          prepared = this.prepare(result, checked, credential, nowMs);
          return prepared;
        }
      } finally {
        // Rows that go no further (refused, re-checked, or copied without the duplicates).
        if (prepared?.rows !== checked.rows) this.batches.release(checked.rows);
      }
      // 03 Errors/Ingestion 409: the binding moved again while this batch was re-checked.
      if (attempt > 0) throw new AppError('integration_not_available');
      credential = await this.reauthenticate(credential, presented, body, nowMs);
    }
  }

  /**
   * Admission, after settling the overdue batches that hold this batch's eventIds (their process
   * died or lost its answer): whether their rows were written decides whether these eventIds are
   * new, so none is ever counted twice. Still unsettled → 503, the collector retries.
   */
  private async admitSettling(credential: IngestCredential, request: AdmissionRequest): Promise<AdmissionResult> {
    for (let settled = 0; ; settled += 1) {
      const result = await this.admission.admit(credential, request);
      if (result.kind !== 'unsettled') return result;
      if (settled === MAX_SETTLED_PER_ADMISSION || !(await this.resolver.settleOverdue(result.batchId, result.deadlineMs))) return result;
    }
  }

  private prepare(result: Exclude<AdmissionResult, { kind: 'stale_credential' }>, checked: CheckedBatch, credential: IngestCredential, nowMs: number): PreparedBatch {
    switch (result.kind) {
      case 'rate_limited':
        throw new AppError(result.code, { retryAfterSeconds: result.retryAfterSeconds });
      case 'quota_exhausted':
        throw new AppError('observation_monthly_quota_exhausted', {
          extra: { mode: 'sandbox', period: 'utc_calendar_month', resetAt: result.resetAt, retryable: false, batchPersisted: 0 },
        });
      case 'in_flight':
      case 'unsettled':
        // An eventId of this batch belongs to another batch whose insert has not finished yet,
        // or whose outcome is not known yet.
        throw serviceUnavailable(1);
      case 'admitted':
        break;
    }
    const { ticket, duplicate, newCount } = result;
    const accepted = checked.eventIds.length;
    return {
      rows: newRows(checked, duplicate),
      ticket,
      job: { connectionId: credential.connectionId, workspaceId: credential.workspaceId, mode: credential.mode, batchId: ticket.batchId, receivedAtMs: nowMs, eventIds: ticket.newEventIds },
      // The text jsonResponse would give { accepted, persisted, results } (results come serialised).
      response: jsonTextResponse(checked.rejected === 0 ? 202 : 207, `{"accepted":${accepted},"persisted":${newCount},"results":${checked.resultsJson}}`),
      counts: { accepted: newCount, duplicate: accepted - newCount, rejected: checked.rejected },
    };
  }

  /** Persist, then enqueue: the answer is sent only once the rows are committed. */
  private async persist(batch: PreparedBatch): Promise<EdgeResponse> {
    const metrics = this.deps.metrics;
    if (batch.rows !== null && this.log !== null) {
      await this.logBatch(batch, this.log);
    } else if (batch.rows !== null) {
      const failure = await this.writer.write(batch.rows, batch.job.eventIds.length).then(() => null, (error: unknown) => error);
      this.batches.release(batch.rows);
      if (failure !== null) {
        // Nothing of this batch is answered as accepted. Rows certainly not written: the
        // admission is undone now, so the retry with the same eventIds is admitted and counted
        // once (issue 4 item 5). Rows that ClickHouse may still write: settled from what it holds
        // once the insert has ended (the retry meanwhile answers 503).
        if (failure instanceof InsertFailedError && failure.outcome === 'unknown' && failure.queryId !== null) {
          this.resolver.settleAfterInsert(failure.queryId, batch.ticket.batchId);
        } else {
          // A failed release leaves the batch to the resolver's sweep after its deadline.
          await this.admission.release(batch.ticket.batchId).then(
            () => metrics.admissionReleases.labels('released').inc(),
            () => metrics.admissionReleases.labels('failed').inc(),
          );
        }
        throw serviceUnavailable(1);
      }
      const enqueued = await this.admission.commit(batch.job).catch(() => false);
      if (!enqueued) this.commitRetry.add(batch.job);
    }
    metrics.envelopeCounts.accepted.inc(batch.counts.accepted);
    metrics.envelopeCounts.duplicate.inc(batch.counts.duplicate);
    metrics.envelopeCounts.rejected.inc(batch.counts.rejected);
    metrics.queuedRows.set(this.writer.pendingRows);
    return batch.response;
  }

  /**
   * The write-ahead log's persist: the batch is answered once its record is durable in the log
   * and the admission committed it (DURABLE); the shipper inserts it and enqueues its analysis.
   * A record the admission does not commit (Redis unreachable, or the batch was released
   * meanwhile) is answered 503: the shipper later commits or drops it by the same rule, so the
   * answer and what ClickHouse holds never disagree.
   */
  private async logBatch(batch: PreparedBatch, log: WriteAheadLog): Promise<void> {
    const rows = batch.rows!;
    let appended: Promise<unknown>;
    try {
      appended = log.append(encodeBatchRecord({ job: batch.job, rows }));
    } finally {
      this.batches.release(rows);
    }
    // A failed append leaves the admission to the resolver: after the batch's deadline it finds
    // no rows in ClickHouse and releases it, and the shipper then drops the record if it exists.
    await fromStore(appended);
    const committed = await fromStore(this.admission.durable({ batchId: batch.ticket.batchId, receivedAtMs: batch.job.receivedAtMs }));
    this.shipper!.notify();
    if (!committed) throw serviceUnavailable(1);
  }

  /** 03 Collector connection check: signed over `<t>.` and the (empty) body, per-client budget. */
  private async connectionCheck(request: EdgeRequest): Promise<EdgeResponse> {
    const auth = await this.authenticate(request);
    let { credential } = auth;
    for (let attempt = 0; ; attempt += 1) {
      const result = await fromStore(this.admission.checkConnection(credential, auth.nowMs));
      if (result.kind === 'stale_credential') {
        if (attempt > 0) throw new AppError('integration_not_available');
        credential = await this.reauthenticate(credential, auth.presented, request.rawBody, auth.nowMs);
        continue;
      }
      if (result.kind === 'rate_limited') throw new AppError('connection_rate_limited', { retryAfterSeconds: result.retryAfterSeconds });
      return jsonResponse(200, {
        connectionId: credential.connectionId,
        integrationKey: credential.integrationKey,
        mode: credential.mode,
        environmentId: credential.environmentId,
        direction: credential.direction,
        protocol: credential.protocol,
        credentialStatus: 'active',
        limits: this.admission.budgetOf(credential),
      });
    }
  }
}
