// Queue and scheduled-feed operations (03 operation table: method POST, a queue/topic/
// subscription or feed/job label, payloadLocation `message`). Their transport object is a
// compatibility projection whose statuses the reference libraries fix: 202 for an acknowledged
// queue operation, 200 for a completed feed, 422 for an explicit rejection, 500 when the wrapped
// host operation throws.

import type { Collector, Direction, ObservedBody, Observation, PayloadLocation } from '../types.js';
import { elapsed, record, start, tryCall } from './observe.js';

const REJECTED = Symbol.for('integration-watch.collector.rejected-operation');

/**
 * Thrown by a host operation to say it refused the message or run on purpose (invalid payload,
 * business rule): recorded as 422 rather than 500. Rethrown to the caller like any other error.
 */
export class RejectedOperation extends Error {
  readonly reason: string | undefined;

  constructor(reason?: string) {
    super(reason === undefined ? 'operation rejected' : `operation rejected: ${reason}`);
    this.name = 'RejectedOperation';
    this.reason = reason;
    Object.defineProperty(this, REJECTED, { value: true });
  }
}

/** A RejectedOperation to throw from the operation: `throw reject('unknown order')`. */
export function reject(reason?: string): RejectedOperation {
  return new RejectedOperation(reason);
}

/** Also true for a RejectedOperation of another copy of the library. */
export function isRejectedOperation(error: unknown): error is RejectedOperation {
  return (
    error instanceof RejectedOperation
    || (typeof error === 'object' && error !== null && (error as Record<symbol, unknown>)[REJECTED] === true)
  );
}

export interface OperationOptions {
  /** The queue, topic, subscription, feed or job label: stable, no message or run ids, no timestamps. */
  routeTemplate: string;
  /**
   * The direction this operation has (publish: outbound, consume: inbound). A collector stands for
   * one Integration with one direction: when it differs, the operation runs but is not recorded.
   */
  direction?: Direction;
  /** Default: the routeTemplate (03 Observation). */
  eventType?: string;
  /** The message: `{ json: value }`, `{ raw: bytes, contentType }`, or why it was not inspected. Default: `notInspected: 'absent'`. */
  body?: ObservedBody;
  /** Raw ids of the message or run; only their keyed hashes are sent. */
  correlation?: Observation['correlation'];
  /** Business outcome; `accepted` defaults to whether the operation succeeded. */
  outcome?: Observation['outcome'];
  /** Delivery attempt (1 for the first, default 1); e.g. the broker's delivery count. */
  attempt?: number;
  /** Fingerprint of the contract the caller believes applies, if any. */
  contractFingerprint?: string;
  /** Default: `message`, or `request` with an `http-api` collector (where `message` is not allowed). */
  payloadLocation?: PayloadLocation;
}

type Outcome = 'success' | 'rejected' | 'failed';

function observeOperation<T>(
  collector: Collector,
  options: OperationOptions,
  successStatus: number,
  operation: () => T | PromiseLike<T>,
): Promise<Awaited<T>> {
  const began = start();
  const finish = (outcome: Outcome): void => {
    try {
      if (options.direction !== undefined && options.direction !== collector.direction) return;
      const statusCode = outcome === 'success' ? successStatus : outcome === 'rejected' ? 422 : 500;
      const payloadLocation = options.payloadLocation ?? (collector.protocol === 'http-api' ? 'request' : 'message');
      record(collector, {
        method: 'POST',
        routeTemplate: options.routeTemplate,
        payloadLocation,
        statusCode,
        durationMs: elapsed(began),
        occurredAt: began.at,
        body: options.body ?? { notInspected: 'absent' },
        outcome: { accepted: outcome === 'success', ...options.outcome },
        ...(options.eventType !== undefined ? { eventType: options.eventType } : {}),
        ...(options.correlation !== undefined ? { correlation: options.correlation } : {}),
        ...(options.attempt !== undefined ? { attempt: options.attempt } : {}),
        ...(options.contractFingerprint !== undefined ? { contractFingerprint: options.contractFingerprint } : {}),
      });
    } catch {
      // Never into the host.
    }
  };
  let pending: T | PromiseLike<T>;
  try {
    pending = operation();
  } catch (error) {
    // A synchronous throw: still the host's own error, handed back as the returned promise's rejection.
    finish(isRejectedOperation(error) ? 'rejected' : 'failed');
    return Promise.reject(error);
  }
  return Promise.resolve(pending).then(
    (result) => {
      finish('success');
      return result as Awaited<T>;
    },
    (error: unknown) => {
      finish(tryCall(() => isRejectedOperation(error)) ? 'rejected' : 'failed');
      throw error;
    },
  );
}

/**
 * Runs a queue publish or a consume handler and records it: POST, the label, payloadLocation
 * `message`, 202 when it resolves, 422 when it throws a RejectedOperation (`reject()`), 500 when it
 * throws anything else. Resolves to the operation's own result and rejects with the host's own
 * error (the same object), always. With a collector of another protocol, the record follows that
 * collector's rules only as far as the label and payloadLocation allow (`http-api` gets
 * payloadLocation `request`; HTTP protocols need a label that is an absolute path).
 */
export function observeQueue<T>(collector: Collector, options: OperationOptions, operation: () => T | PromiseLike<T>): Promise<Awaited<T>> {
  return observeOperation(collector, options, 202, operation);
}

/** Same as observeQueue for a scheduled export or import job: 200 when it completes. */
export function observeFeed<T>(collector: Collector, options: OperationOptions, job: () => T | PromiseLike<T>): Promise<Awaited<T>> {
  return observeOperation(collector, options, 200, job);
}
