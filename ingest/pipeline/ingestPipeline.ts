import { AppError, isAppError } from '../../shared/errors/index.js';
import { secondsSince } from '../../shared/metrics.js';
import type { Admission } from '../admission/admission.js';
import type { CredentialCache } from '../auth/credentials.js';
import { BatchShapeError, errorResponse, type EdgeRequest, type EdgeResponse } from '../common/edgeHttp.js';
import type { Shipper } from '../log/shipper.js';
import { RequestMemory } from '../offload/requestMemory.js';
import type { SharedSlots } from '../offload/sharedSlots.js';
import { BatchIntake, type BatchIntakeParts } from './batchIntake.js';
import { connectionCheck, type ConnectionCheckParts } from './connectionCheck.js';
import { STORE_RETRY_AFTER_SECONDS, StoreUnavailable, serviceUnavailable } from './storeFailure.js';

/** Everything the pipeline routes to and stops, built and started by compose.ts. */
export interface PipelineParts extends BatchIntakeParts, ConnectionCheckParts {
  credentials: CredentialCache;
  slots: SharedSlots | null;
  /** Receives store outages and unexpected failures (answered 503/500 without detail). */
  logError?: (message: string, error: unknown) => void;
}

/**
 * The ingest pipeline, free of any HTTP server: routes a request to the batch intake or the
 * connection check and turns every failure into an answer (`handle` never throws).
 */
export class IngestPipeline {
  private readonly intake: BatchIntake;
  private active = 0;
  private idle: (() => void)[] = [];

  constructor(private readonly parts: PipelineParts) {
    this.intake = new BatchIntake(parts);
  }

  get credentials(): CredentialCache {
    return this.parts.credentials;
  }

  get admission(): Admission {
    return this.parts.admission;
  }

  get shipper(): Shipper {
    return this.parts.shipper;
  }

  /** The memory of one request, for an adapter that reads bodies itself (offload/requestMemory.ts). */
  requestMemory(): RequestMemory {
    return new RequestMemory(this.parts.slots);
  }

  /** Answers a request; the request's memory (its own, if it brings none) is released by then. */
  async handle(request: EdgeRequest): Promise<EdgeResponse> {
    this.active += 1;
    const started = process.hrtime.bigint();
    const route = request.path === '/ingest' ? 'ingest' : request.path === '/v1/collector/connection' ? 'connection' : 'other';
    const memory = request.memory ?? this.requestMemory();
    let response: EdgeResponse;
    try {
      response = await this.route(request, memory);
    } catch (error) {
      response = this.failure(error);
    } finally {
      memory.release();
      this.active -= 1;
      if (this.active === 0) for (const resolve of this.idle.splice(0)) resolve();
    }
    this.parts.metrics.request(route, response.status);
    this.parts.metrics.requestSeconds.labels(route).observe(secondsSince(started));
    return response;
  }

  /** Waits for requests in progress, then ships what the log holds (graceful shutdown). */
  async drain(): Promise<void> {
    if (this.active > 0) await new Promise<void>((resolve) => this.idle.push(resolve));
    await this.parts.shipper.drain();
    await this.parts.log.close();
    this.parts.resolver.stop();
    await this.parts.checker.close();
  }

  private route(request: EdgeRequest, memory: RequestMemory): Promise<EdgeResponse> {
    if (request.path === '/ingest' && request.method === 'POST') return this.intake.ingest(request, memory);
    if (request.path === '/v1/collector/connection' && request.method === 'GET') return connectionCheck(this.parts, request);
    return Promise.resolve(errorResponse(new AppError('not_found')));
  }

  private failure(error: unknown): EdgeResponse {
    if (isAppError(error)) return errorResponse(error);
    if (error instanceof BatchShapeError) return error.response();
    if (error instanceof StoreUnavailable) {
      this.parts.logError?.('store unavailable', error.reason);
      return errorResponse(serviceUnavailable(STORE_RETRY_AFTER_SECONDS));
    }
    this.parts.logError?.('unexpected failure', error);
    return errorResponse(new AppError('service_unavailable', { status: 500 }));
  }
}
