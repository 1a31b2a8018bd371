import type { Clock } from '../../shared/clock.js';
import { AppError } from '../../shared/errors/index.js';
import { RECEIPT_TO_ADMISSION_MAX_MS } from '../../shared/admissionTiming.js';
import type { AnalysisJob } from '../../shared/redis.js';
import type { Admission, AdmissionRequest, AdmissionResult, AdmissionTicket } from '../admission/admission.js';
import type { AdmissionResolver } from '../admission/resolver.js';
import type { BatchBinding, CheckedBatch } from '../check/checkBatch.js';
import type { BatchChecker } from '../check/checker.js';
import { newGroups, newRows } from '../check/newRows.js';
import type { IngestCredential } from '../common/credential.js';
import { BatchShapeError, MAX_BODY_BYTES, jsonTextResponse, type EdgeRequest, type EdgeResponse } from '../common/edgeHttp.js';
import type { IngestMetrics } from '../common/metrics.js';
import type { IntakePacer } from '../log/intakePacer.js';
import { encodeBatchRecord } from '../log/logRecord.js';
import type { Shipper } from '../log/shipper.js';
import type { LogPosition, WriteAheadLog } from '../log/writeAheadLog.js';
import type { RequestMemory } from '../offload/requestMemory.js';
import type { EdgeAuthentication } from './edgeAuthentication.js';
import { STORE_RETRY_AFTER_SECONDS, fromStore, serviceUnavailable, timed } from './storeFailure.js';

/** The stages a batch passes through, built by compose.ts. */
export interface BatchIntakeParts {
  auth: EdgeAuthentication;
  checker: BatchChecker;
  admission: Admission;
  resolver: AdmissionResolver;
  log: WriteAheadLog;
  shipper: Shipper;
  pacer: IntakePacer;
  clock: Clock;
  metrics: IngestMetrics;
}

/** Overdue batches settled for one admission before it answers 503 (see AdmissionResolver). */
const MAX_SETTLED_PER_ADMISSION = 5;

/** What the batch checks need of a credential (no secret: it goes to a worker thread). */
const bindingOf = (credential: IngestCredential): BatchBinding => ({
  connectionId: credential.connectionId,
  workspaceId: credential.workspaceId,
  accountId: credential.accountId,
  integrationId: credential.integrationId,
  integrationKey: credential.integrationKey,
  tenantId: credential.tenantId,
  environmentId: credential.environmentId,
  mode: credential.mode,
  direction: credential.direction,
  protocol: credential.protocol,
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
 * `POST /ingest`: verify → check (parse, validate, serialise) → admit → log → commit → answer.
 * The shipper then inserts the log into ClickHouse and enqueues the analysis jobs.
 */
export class BatchIntake {
  constructor(private readonly parts: BatchIntakeParts) {}

  /** `memory`: where the body lies and the rows are written; its owner releases it after the answer. */
  async ingest(request: EdgeRequest, memory: RequestMemory): Promise<EdgeResponse> {
    const { pacer, log, metrics } = this.parts;
    // Before authentication, so the wait does not count toward RECEIPT_TO_ADMISSION_MAX_MS.
    if (!(await pacer.enter(request.rawBody.length))) throw serviceUnavailable(1);
    const prepared = await this.admitBatch(request, memory);
    // The log writes the rows from where they are (a slot of `memory`, maybe).
    if (prepared.rows !== null) {
      const record = encodeBatchRecord({ accountId: prepared.ticket.accountId, job: prepared.job, rows: prepared.rows });
      prepared.recordEnd = await timed(metrics.stageSeconds.log, () => fromStore(log.append(record)));
    }
    return this.commit(prepared);
  }

  /**
   * Verify, then parse, validate and serialise (checkBatch.ts, maybe on a worker thread), then
   * admit; the answer's text and the new rows are ready before the log write, so nothing of the
   * parsed batch stays alive while the rows wait for it.
   */
  private async admitBatch(request: EdgeRequest, memory: RequestMemory): Promise<PreparedBatch> {
    const { auth, checker, shipper, clock, metrics } = this.parts;
    if (request.rawBody.length > MAX_BODY_BYTES) throw new AppError('request_too_large');
    const authenticated = await auth.authenticate(request);
    let { credential } = authenticated;
    const { nowMs, presented } = authenticated;
    const batchId = this.parts.admission.newBatchId();
    // The body may be moved to a worker thread and back: only the returned one may be read.
    let body = request.rawBody;
    for (let attempt = 0; ; attempt += 1) {
      const input = { body, contentType: request.headers['content-type'], binding: bindingOf(credential), batchId, receivedAtMs: nowMs };
      const answer = await timed(metrics.stageSeconds.check, () => checker.check(input, memory));
      body = answer.body;
      const checked = answer.output;
      if (checked.kind === 'invalid_request') throw new AppError('invalid_request');
      if (checked.kind === 'batch_shape') throw new BatchShapeError();
      if (shipper.saturated()) throw serviceUnavailable(STORE_RETRY_AFTER_SECONDS);
      // Past this, the analyzer's stream time may have passed this batch's receipt time.
      if (clock.nowMs() - nowMs > RECEIPT_TO_ADMISSION_MAX_MS) throw serviceUnavailable(1);
      const admission = { nowMs, itemCount: checked.itemCount, eventIds: checked.eventIds, digests: checked.digests, batchId };
      const result = await timed(metrics.admissionSeconds, () => fromStore(this.admitSettling(credential, admission)));
      if (result.kind !== 'stale_credential') return this.prepare(result, checked, credential, nowMs);
      // 03 Errors/Ingestion 409: the binding moved again while this batch was re-checked.
      if (attempt > 0) throw new AppError('integration_not_available');
      credential = await auth.reauthenticate(credential, presented, body, nowMs);
    }
  }

  /**
   * Admission, after settling the overdue batches that hold this batch's eventIds (their edge
   * died or lost its answer before making them durable): they are released, so these eventIds are
   * new and counted once. Still unsettled → 503, the collector retries.
   */
  private async admitSettling(credential: IngestCredential, request: AdmissionRequest): Promise<AdmissionResult> {
    for (let settled = 0; ; settled += 1) {
      const result = await this.parts.admission.admit(credential, request);
      if (result.kind !== 'unsettled' || settled === MAX_SETTLED_PER_ADMISSION) return result;
      await this.parts.resolver.settle(result);
    }
  }

  private prepare(
    result: Exclude<AdmissionResult, { kind: 'stale_credential' }>,
    checked: CheckedBatch,
    credential: IngestCredential,
    nowMs: number,
  ): PreparedBatch {
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
      job: {
        connectionId: credential.connectionId,
        workspaceId: credential.workspaceId,
        mode: credential.mode,
        batchId: ticket.batchId,
        receivedAtMs: nowMs,
        eventIds: ticket.newEventIds,
        // Indexes into newEventIds: admission's new ids are the batch's eventIds less the duplicates, in order.
        groups: newGroups(checked, duplicate),
      },
      // The text jsonResponse would give { accepted, persisted, results } (results come serialised).
      response: jsonTextResponse(
        checked.rejected === 0 ? 202 : 207,
        `{"accepted":${accepted},"persisted":${newCount},"results":${checked.resultsJson}}`,
      ),
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
    const { admission, shipper, metrics } = this.parts;
    if (batch.recordEnd !== undefined) {
      const { accountId, batchId, receivedAtMs } = batch.ticket;
      const committed = await timed(metrics.stageSeconds.commit, () => fromStore(admission.durable({ accountId, batchId, receivedAtMs })));
      if (committed) shipper.committed(batchId, batch.recordEnd);
      shipper.notify();
      if (!committed) throw serviceUnavailable(1);
    }
    metrics.envelopeCounts.accepted.inc(batch.counts.accepted);
    metrics.envelopeCounts.duplicate.inc(batch.counts.duplicate);
    metrics.envelopeCounts.rejected.inc(batch.counts.rejected);
    return batch.response;
  }
}
