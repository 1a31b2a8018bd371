import type { RequestMemory } from '../offload/requestMemory.js';
import { type AppError, INGEST_BATCH_SHAPE_ERROR } from '../../shared/errors/index.js';

/**
 * The transport-agnostic request and response of the ingest pipeline. Adapters (uWebSockets.js,
 * Fastify) read the body with the 1 MiB limit, fill this in and write the answer back.
 */
export interface EdgeRequest {
  method: string;
  /** The path without the query string. */
  path: string;
  /** Lower-case header names; adapters need only fill in EDGE_REQUEST_HEADERS. */
  headers: Readonly<Record<string, string | undefined>>;
  rawBody: Buffer;
  /** The request's shared-slot memory (the body's, from IngestPipeline.requestMemory), if any. */
  memory?: RequestMemory;
}

export interface EdgeResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** The request headers the pipeline reads. */
export const EDGE_REQUEST_HEADERS = ['x-service-connection', 'authorization', 'x-service-signature', 'content-type'] as const;

/** 01/03 Conventions: a body over 1 MiB is refused with 413 `request_too_large`. */
export const MAX_BODY_BYTES = 1024 * 1024;

export const JSON_TYPE = 'application/json; charset=utf-8';

/** Edge answers are per-request results or credential-bound: never cached. */
const BASE_HEADERS = { 'content-type': JSON_TYPE, 'cache-control': 'no-store' } as const;

/**
 * Every 503 of the edge says when to retry (03: collectors honour Retry-After); one without a
 * more precise figure gets a second.
 */
function withRetryAfter(status: number, headers: Record<string, string>): Record<string, string> {
  return status === 503 && headers['retry-after'] === undefined ? { ...headers, 'retry-after': '1' } : headers;
}

export function jsonResponse(status: number, body: unknown, headers: Record<string, string> = {}): EdgeResponse {
  return jsonTextResponse(status, JSON.stringify(body), headers);
}

/** jsonResponse for a body already serialised. */
export function jsonTextResponse(status: number, body: string, headers: Record<string, string> = {}): EdgeResponse {
  return { status, headers: withRetryAfter(status, { ...BASE_HEADERS, ...headers }), body };
}

/** A JSON answer of the adapters that is not an error (health, readiness). */
export function fixedJson(status: number, body: string, headers: Record<string, string> = {}): EdgeResponse {
  return { status, headers: withRetryAfter(status, { 'content-type': JSON_TYPE, ...headers }), body };
}

export function errorResponse(error: AppError): EdgeResponse {
  const headers: Record<string, string> = {};
  if (error.retryAfterSeconds !== undefined) headers['retry-after'] = String(error.retryAfterSeconds);
  return jsonResponse(error.status, error.body(), headers);
}

/**
 * A batch that is not `{envelopes: [...]}` (or holds more than 50): 400 with the literal phrase
 * of 03. Here rather than beside parseBatch so that the edge thread, which only answers it, does
 * not load (and compile) the envelope validators that only the worker threads run.
 */
export class BatchShapeError extends Error {
  response(): EdgeResponse {
    return jsonResponse(400, { error: INGEST_BATCH_SHAPE_ERROR });
  }
}
