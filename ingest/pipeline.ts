import type pg from 'pg';
import type { Redis } from 'ioredis';
import type { ClickHouseClient } from '@clickhouse/client';
import type { Registry } from 'prom-client';
import type { Clock } from '../shared/clock.js';
import type { Config } from '../shared/config.js';
import { AppError, isAppError } from '../shared/errors/index.js';
import { ANALYSIS_CONSUMER_GROUP, RedisKeys, type AnalysisJob } from '../shared/redis.js';
import { RECEIPT_TO_ADMISSION_MAX_MS } from '../shared/admissionTiming.js';
import { secondsSince } from '../shared/metrics.js';
import { Admission, type AdmissionRequest, type AdmissionResult, type AdmissionTicket } from './admission/admission.js';
import { AdmissionResolver } from './admission/resolver.js';
import { presentedCredentials, resolveCredential, tokenMatches, unauthenticated, verifySignature, type Presented } from './auth/authenticate.js';
import type { BatchBinding, CheckedBatch } from './check/batchCheck.js';
import { BatchChecker, DEFAULT_BATCH_CHECKER_OPTIONS } from './offload/batchChecker.js';
import { BatchPool } from './offload/batchPool.js';
import { newRows } from './check/batchRows.js';
import { CredentialCache, CredentialDecryptError, type IngestCredential } from './auth/credentials.js';
import { BatchShapeError, MAX_BODY_BYTES, errorResponse, jsonResponse, jsonTextResponse, type EdgeRequest, type EdgeResponse } from './http/edgeHttp.js';
import { encodeBatchRecord } from './log/batchRecord.js';
import { IntakePacer } from './log/intakePacer.js';
import { Shipper } from './log/shipper.js';
import { WriteAheadLog, type LogPosition } from './log/writeAheadLog.js';
import { IngestMetrics } from './metrics.js';
import { insertObservationRows } from './observationsTable.js';
import { ActiveRoutesCache } from './contract/activeRoutes.js';
import { RequestMemory } from './offload/requestMemory.js';
import { SharedSlots } from './offload/sharedSlots.js';

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

/** Runs a stage of a batch and records how long it took, when it succeeds. */
async function timed<T>(histogram: { observe(seconds: number): void }, stage: () => Promise<T>): Promise<T> {
  const started = process.hrtime.bigint();
  const result = await stage();
  histogram.observe(secondsSince(started));
  return result;
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

/** What the batch checks need of a credential (no secret: it goes to a worker thread). */
const bindingOf = (credential: IngestCredential): BatchBinding => ({
  connectionId: credential.connectionId, workspaceId: credential.workspaceId, accountId: credential.accountId,
  integrationId: credential.integrationId, integrationKey: credential.integrationKey, tenantId: credential.tenantId,
  environmentId: credential.environmentId, mode: credential.mode, direction: credential.direction, protocol: credential.protocol,
});

/** An admitted batch, reduced to what logging and answering it need. */
interface PreparedBatch {
  /** Where its log record ends, once appended (none: nothing to write). */
  recordEnd?: LogPosition;
  /** TabSeparated lines of the new observations, or null when there is nothing to write. */
  rows: Buffer | null;
  ticket: AdmissionTicket;
  job: AnalysisJob;
  response: EdgeResponse;
  counts: { accepted: number; duplicate: number; rejected: number };
}

/**
 * The ingest pipeline: verify → parse → validate → admit → log → answer, free of any HTTP
 * server; the shipper then inserts the log into ClickHouse and enqueues the analysis jobs.
 * `handle` never throws: every outcome is an EdgeResponse.
 */
export class IngestPipeline {
  readonly credentials: CredentialCache;
  readonly admission: Admission;
  private readonly batches: BatchChecker;
  private readonly slots: SharedSlots | null;
  private readonly resolver: AdmissionResolver;
  private readonly activeRoutes: ActiveRoutesCache;
  private log!: WriteAheadLog;
  shipper!: Shipper;
  private pacer!: IntakePacer;
  private active = 0;
  private idle: (() => void)[] = [];

  constructor(private readonly deps: PipelineDeps) {
    const { config, metrics } = deps;
    this.credentials = new CredentialCache({
      pool: deps.pool, redis: deps.redis, encryptionKey: config.secretEncryptionKey, onLoad: (result) => metrics.credentialLoads[result].inc(),
    });
    this.admission = new Admission(deps.redis, config);
    this.activeRoutes = new ActiveRoutesCache(deps.pool);
    this.resolver = new AdmissionResolver({
      admission: this.admission, redis: deps.redis, clock: deps.clock, metrics,
      sweepIntervalMs: config.ingest.settleIntervalMs, deadlineMs: config.ingest.admissionDeadlineMs,
      ...(deps.logError ? { logError: deps.logError } : {}),
    });
    const slots = config.ingest.sharedSlots > 0 ? new SharedSlots(config.ingest.sharedSlots) : null;
    this.slots = slots;
    if (slots !== null) metrics.slotsInUse = () => slots.count - slots.available;
    this.batches = new BatchChecker(config.ingest.workerThreads > 0 ? new BatchPool(config.ingest.workerThreads, { slots }) : null, DEFAULT_BATCH_CHECKER_OPTIONS, slots);
  }

  /**
   * Loads the scripts, creates the analysis consumer group (ignoring BUSYGROUP), opens (and
   * repairs) the write-ahead log and starts shipping what it holds.
   */
  async start(): Promise<void> {
    const analysisStream = this.deps.analysisStream ?? RedisKeys.analysisJobs;
    await this.admission.load();
    await this.deps.redis.xgroup('CREATE', analysisStream, ANALYSIS_CONSUMER_GROUP, '0', 'MKSTREAM').catch((error: Error) => {
      if (!error.message.startsWith('BUSYGROUP')) throw error;
    });
    this.resolver.start();
    const { ingest } = this.deps.config;
    const metrics = this.deps.metrics;
    this.log = await WriteAheadLog.open({
      dir: ingest.walDir,
      segmentBytes: ingest.walSegmentBytes,
      onRepair: (repair) => this.deps.logError?.('write-ahead log repaired', new Error(`segment ${repair.segment} cut at ${repair.offset}: ${repair.reason}; ${repair.segmentsRemoved} later segments removed`)),
    });
    this.shipper = new Shipper({
      log: this.log, admission: this.admission, redis: this.deps.redis, analysisStream, analysisStreamMaxLen: ingest.analysisStreamMaxLen,
      insert: (body, signal) => insertObservationRows(this.deps.clickhouse, body, signal),
      insertTimeoutMs: ingest.insertTimeoutMs,
      maxInsertBytes: ingest.shipMaxBytes, intervalMs: ingest.shipIntervalMs, maxLogBytes: ingest.walMaxBytes, maxLogAgeMs: ingest.walMaxAgeMs,
      nowMs: () => Date.now(),
      onShipped: (_batches, rows, bytes, seconds) => {
        metrics.insertRows.observe(rows);
        metrics.insertSeconds.observe(seconds);
        this.pacer.shipped(bytes);
      },
      onFailure: (error) => {
        metrics.insertFailures.inc();
        this.deps.logError?.('write-ahead log shipping failed', error);
        this.pacer.shipped(0);
      },
    });
    this.pacer = new IntakePacer(this.shipper, {
      paceBytes: ingest.walPaceBytes, maxWaitMs: ingest.walPaceMaxWaitMs, maxTokens: Math.max(ingest.shipMaxBytes, MAX_BODY_BYTES),
    });
    await this.shipper.start();
  }

  /** The memory of one request, for an adapter that reads bodies itself (offload/requestMemory.ts). */
  requestMemory(): RequestMemory {
    return new RequestMemory(this.slots);
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
    this.deps.metrics.requestSeconds.labels(route).observe(secondsSince(started));
    return response;
  }

  /** Waits for requests in progress, then ships what the log holds (graceful shutdown). */
  async drain(): Promise<void> {
    if (this.active > 0) await new Promise<void>((resolve) => this.idle.push(resolve));
    await this.shipper.drain();
    await this.log.close();
    this.resolver.stop();
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
    const memory = request.memory ?? this.requestMemory();
    let prepared: EdgeResponse | PreparedBatch;
    try {
      // Before authentication, so the wait does not count toward RECEIPT_TO_ADMISSION_MAX_MS.
      if (!(await this.pacer.enter(request.rawBody.length))) throw serviceUnavailable(1);
      prepared = await this.admitBatch(request, memory);
      // The log writes the rows from where they are: their memory goes back once it is durable.
      if (!('status' in prepared) && prepared.rows !== null) {
        const record = encodeBatchRecord({ accountId: prepared.ticket.accountId, job: prepared.job, rows: prepared.rows });
        prepared.recordEnd = await timed(this.deps.metrics.stageSeconds.log, () => fromStore(this.log.append(record)));
      }
    } finally {
      memory.release();
    }
    return 'status' in prepared ? prepared : this.commit(prepared);
  }

  /**
   * Verify, then parse, validate and serialise on a worker thread (batchCheck.ts), then admit;
   * the answer's text and the new rows are ready before the log write, so nothing of the parsed
   * batch stays alive while the rows wait for it.
   */
  private async admitBatch(request: EdgeRequest, memory: RequestMemory): Promise<EdgeResponse | PreparedBatch> {
    if (request.rawBody.length > MAX_BODY_BYTES) throw new AppError('request_too_large');
    const auth = await this.authenticate(request);
    let { credential } = auth;
    const { nowMs, presented } = auth;
    const batchId = this.admission.newBatchId();
    // The body may be moved to a worker thread and back: only the returned one may be read.
    let body = request.rawBody;
    for (let attempt = 0; ; attempt += 1) {
      const input = { body, contentType: request.headers['content-type'], binding: bindingOf(credential), batchId, receivedAtMs: nowMs };
      const answer = await timed(this.deps.metrics.stageSeconds.check, () => this.batches.check(input));
      body = answer.body;
      const checked = answer.output;
      if (checked.kind === 'invalid_request') throw new AppError('invalid_request');
      if (checked.kind === 'batch_shape') throw new BatchShapeError();
      memory.hold(checked.rows);
      if (this.shipper.saturated()) throw serviceUnavailable(STORE_RETRY_AFTER_SECONDS);
      // Past this, the analyzer's stream time may have passed this batch's receipt time.
      if (this.deps.clock.nowMs() - nowMs > RECEIPT_TO_ADMISSION_MAX_MS) throw serviceUnavailable(1);
      const admission = { nowMs, itemCount: checked.itemCount, eventIds: checked.eventIds, batchId };
      const result = await timed(this.deps.metrics.admissionSeconds, () => fromStore(this.admitSettling(credential, admission)));
      if (result.kind !== 'stale_credential') return this.prepare(result, checked, credential, nowMs);
      // 03 Errors/Ingestion 409: the binding moved again while this batch was re-checked.
      if (attempt > 0) throw new AppError('integration_not_available');
      credential = await this.reauthenticate(credential, presented, body, nowMs);
    }
  }

  /**
   * Admission, after settling the overdue batches that hold this batch's eventIds (their edge
   * died or lost its answer before making them durable): they are released, so these eventIds are
   * new and counted once. Still unsettled → 503, the collector retries.
   */
  private async admitSettling(credential: IngestCredential, request: AdmissionRequest): Promise<AdmissionResult> {
    for (let settled = 0; ; settled += 1) {
      const result = await this.admission.admit(credential, request);
      if (result.kind !== 'unsettled' || settled === MAX_SETTLED_PER_ADMISSION) return result;
      await this.resolver.settle(result);
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
        // An eventId of this batch belongs to another batch not yet durable in a log.
        throw serviceUnavailable(1);
      case 'admitted':
        break;
    }
    const { ticket, duplicate } = result;
    const newCount = ticket.newEventIds.length;
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

  /**
   * The batch (its record made durable by `ingest`) is answered once the admission committed it
   * (DURABLE); the shipper inserts it and enqueues its analysis. A record the admission does not
   * commit (Redis unreachable, or the batch was released meanwhile) is answered 503: the shipper
   * later commits or drops it by the same rule, so the answer and what ClickHouse holds never
   * disagree. A failed append leaves the admission to the resolver, which releases it after its
   * deadline.
   */
  private async commit(batch: PreparedBatch): Promise<EdgeResponse> {
    if (batch.recordEnd !== undefined) {
      const { accountId, batchId, receivedAtMs } = batch.ticket;
      const committed = await timed(this.deps.metrics.stageSeconds.commit, () => fromStore(this.admission.durable({ accountId, batchId, receivedAtMs })));
      if (committed) this.shipper.committed(batchId, batch.recordEnd);
      this.shipper.notify();
      if (!committed) throw serviceUnavailable(1);
    }
    const metrics = this.deps.metrics;
    metrics.envelopeCounts.accepted.inc(batch.counts.accepted);
    metrics.envelopeCounts.duplicate.inc(batch.counts.duplicate);
    metrics.envelopeCounts.rejected.inc(batch.counts.rejected);
    return batch.response;
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
      const contract = await fromStore(this.activeRoutes.of(credential.connectionId, credential.protocol));
      return jsonResponse(200, {
        connectionId: credential.connectionId,
        integrationKey: credential.integrationKey,
        mode: credential.mode,
        environmentId: credential.environmentId,
        direction: credential.direction,
        protocol: credential.protocol,
        credentialStatus: 'active',
        limits: this.admission.budgetOf(credential),
        // What the collector templatises concrete paths with (collector/README.md "Route templates").
        activeContractVersionId: contract.versionId,
        routes: contract.routes,
        routesTruncated: contract.truncated,
      });
    }
  }
}
