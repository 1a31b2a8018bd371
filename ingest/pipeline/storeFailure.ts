import { AppError, isAppError } from '../../shared/errors/index.js';
import { secondsSince } from '../../shared/metrics.js';
import { CredentialDecryptError } from '../auth/credentials.js';

/** A store (PostgreSQL, Redis, ClickHouse) could not serve the request: 503 `service_unavailable`. */
export class StoreUnavailable extends Error {
  constructor(readonly reason: unknown) {
    super(reason instanceof Error ? reason.message : 'store unavailable');
  }
}

/** Awaits a store's work; a failure that is not the request's own becomes StoreUnavailable. */
export async function fromStore<T>(work: Promise<T> | T): Promise<T> {
  try {
    return await work;
  } catch (error) {
    if (isAppError(error) || error instanceof CredentialDecryptError) throw error;
    throw new StoreUnavailable(error);
  }
}

/** Runs a stage of a request and records how long it took, when it succeeds. */
export async function timed<T>(histogram: { observe(seconds: number): void }, stage: () => Promise<T>): Promise<T> {
  const started = process.hrtime.bigint();
  const result = await stage();
  histogram.observe(secondsSince(started));
  return result;
}

export const serviceUnavailable = (retryAfterSeconds: number) => new AppError('service_unavailable', { retryAfterSeconds });

/**
 * Retry-After of a 503 while a store is down (03: a collector retries 5xx with bounded backoff
 * and honours Retry-After): long enough that thousands of collectors do not hammer a
 * recovering store, short enough that an outage of seconds costs little.
 */
export const STORE_RETRY_AFTER_SECONDS = 5;
