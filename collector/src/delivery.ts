// Delivery of queued envelopes to the edge (document 03 "Ingestion", rules for callers):
// batches of at most 50 envelopes under 1 MiB, up to `maxConcurrentUploads` uploads in flight
// (the edge answers once a batch is durable, tens of milliseconds: one at a time would cap a
// collector near a thousand envelopes a second), each body serialised once and that exact string
// signed (again, with a fresh timestamp, on every retry). A retryable failure pauses new uploads
// until its backoff ends; the failed batches go first then. A batch goes only when the edge's
// request and observation windows have room for it (budget.ts, SendBudget): until then it waits
// in the queue, and the pump looks again when room is due.
//
// Outcomes of an upload:
// - 202 (or another 2xx): delivered. 207: its accepted items delivered, its rejected items
//   counted in `rejected` and never resent.
// - 5xx, 408, 409, 425, 429, no answer (network error, timeout): `failedBatches`, and the same
//   batch (same eventIds, so the edge de-duplicates) is sent again after a capped exponential
//   backoff with full jitter, or after `Retry-After` when the answer has a valid one.
// - 401: `rejected`, and delivery stops for good (the credentials are refused; a new token
//   needs a new collector): what is queued and everything observed later counts in `rejected`.
// - 403 `observation_monthly_quota_exhausted`: `quotaRejected` and `rejected`; the queue is
//   discarded (`dropped`) and new observations are refused locally (`dropped`) until the reset.
// - any other status (400, 403, 404, 413, …): `rejected`; the next batch goes on.

import { backoffDelayMs } from './backoff.js';
import { SendBudget } from './budget.js';
import type { Settings } from './options.js';
import { BoundedQueue, type Queued } from './queue.js';
import { parseRetryAfterMs } from './retryAfter.js';
import type { CollectorCounters } from './types.js';
import { signedHeaders, type Answer, type Uploader } from './uploader.js';

/** 03 Limits: a batch body is under 1 MiB. */
export const MAX_BODY_BYTES = 1024 * 1024;
const BODY_PREFIX = '{"envelopes":[';
const BODY_SUFFIX = ']}';
/** Bytes of a body around its envelopes (ASCII). */
export const BODY_OVERHEAD = BODY_PREFIX.length + BODY_SUFFIX.length;
/** The largest envelope that fits a batch of its own. */
export const MAX_ENVELOPE_BYTES = MAX_BODY_BYTES - 1 - BODY_OVERHEAD;

export const QUOTA_ERROR = 'observation_monthly_quota_exhausted';

export type DeliveryState = NonNullable<CollectorCounters['deliveryState']>;

type Mode = 'running' | 'quota-paused' | 'unauthenticated' | 'closed';

interface Batch {
  items: Queued[];
  body: Buffer;
  text: string;
}

interface Waiter {
  target: number;
  resolve: () => void;
}

/** The counters the library keeps (deliveryState is read from the delivery at snapshot time). */
export type MutableCounters = Required<Omit<CollectorCounters, 'deliveryState' | 'contractVersionId'>>;

/**
 * A wait for the windows re-checks at least this often: timers run in real time, and the clock the
 * windows are read on may jump (a test clock moved forward).
 */
const PACE_RECHECK_MS = 1_000;

const isRetryable = (status: number): boolean =>
  status === 0 || status === 408 || status === 409 || status === 425 || status === 429 || status >= 500;

/** Envelopes in `batches`. */
function itemsOf(batches: Iterable<Batch>): number {
  let count = 0;
  for (const batch of batches) count += batch.items.length;
  return count;
}

/** Start of the next UTC calendar month after `nowMs`. */
function nextUtcMonthMs(nowMs: number): number {
  const now = new Date(nowMs);
  return Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1);
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

export class Delivery {
  private readonly queue: BoundedQueue;
  private mode: Mode = 'running';
  private readonly inFlight = new Set<Batch>();
  /** Batches whose upload failed retryably, oldest first: sent again when the backoff ends. */
  private retries: Batch[] = [];
  private failures = 0;
  private retryTimer: NodeJS.Timeout | null = null;
  private retryAtMs = 0;
  private readonly budget: SendBudget;
  /** Set while a batch waits for room in the edge's windows. */
  private paceTimer: NodeJS.Timeout | null = null;
  private intervalTimer: NodeJS.Timeout | null = null;
  /** The oldest queued item has waited a flush interval: a partial batch may go. */
  private due = false;
  private pumpScheduled = false;
  private seq = 0;
  private flushTarget = 0;
  private readonly waiters: Waiter[] = [];
  /** A ref'd handle kept while someone awaits flush(): every other handle is unref'd. */
  private hold: NodeJS.Timeout | null = null;
  private quotaUntilMs = 0;
  private closing: { deadlineMs: number; timer: NodeJS.Timeout | null; resolve: () => void } | null = null;
  private closed: Promise<void> | null = null;

  constructor(
    private readonly settings: Settings,
    private readonly uploader: Uploader,
    private readonly counters: MutableCounters,
    requestsPerMinute: number,
    observationsPerMinute: number,
  ) {
    this.queue = new BoundedQueue(settings.maxQueueSize, settings.maxQueueBytes);
    this.budget = new SendBudget(requestsPerMinute, observationsPerMinute);
  }

  /** The edge's budgets as the connection check states them (undefined: unchanged). */
  setBudget(requestsPerMinute: number | undefined, observationsPerMinute: number | undefined): void {
    if (requestsPerMinute !== undefined) this.budget.requests.setLimit(requestsPerMinute);
    if (observationsPerMinute !== undefined) this.budget.observations.setLimit(observationsPerMinute);
    this.repace();
  }

  state(): DeliveryState {
    this.refreshQuota();
    if (this.mode === 'running' && this.retryTimer !== null) return 'backoff';
    return this.mode;
  }

  /**
   * Whether a new observation may be queued; when not, it is counted here (quota pause or after
   * close: `dropped`; after a 401: `rejected`).
   */
  admit(): boolean {
    this.refreshQuota();
    switch (this.mode) {
      case 'running':
        return true;
      case 'unauthenticated':
        this.counters.rejected++;
        return false;
      default:
        this.counters.dropped++;
        return false;
    }
  }

  enqueue(eventId: string, text: string, bytes: number): void {
    this.counters.dropped += this.queue.push({ seq: ++this.seq, eventId, text, bytes });
    this.counters.observed++;
    if (this.queue.length >= this.settings.maxBatchSize) this.schedulePump();
    else this.armInterval();
  }

  /** Resolves once what is queued now is settled, or delivery backs off or stops. Never rejects. */
  flush(): Promise<void> {
    this.refreshQuota();
    const target = this.seq;
    if (this.mode !== 'running' || this.retryTimer !== null || this.lowestUnsettled() > target) return Promise.resolve();
    this.flushTarget = Math.max(this.flushTarget, target);
    return new Promise<void>((resolve) => {
      this.waiters.push({ target, resolve });
      this.updateHold();
      this.repace();
    });
  }

  /** Delivers what it can within `timeoutMs`, then stops for good; what is left counts as `dropped`. */
  close(timeoutMs: number): Promise<void> {
    if (this.closed) return this.closed;
    this.refreshQuota();
    this.closed = new Promise<void>((resolve) => {
      // This timer is ref'd on purpose: the host awaits close(), which ends by it at the latest.
      const timer = setTimeout(() => this.finishClose(), timeoutMs);
      this.closing = { deadlineMs: Date.now() + timeoutMs, timer, resolve };
    });
    if (this.mode !== 'running' || (this.retryTimer !== null && this.retryAtMs > (this.closing as { deadlineMs: number }).deadlineMs)) {
      this.finishClose();
    } else {
      this.repace();
    }
    return this.closed;
  }

  private finishClose(): void {
    const closing = this.closing;
    if (!closing || this.mode === 'closed') return;
    this.mode = 'closed';
    if (closing.timer) clearTimeout(closing.timer);
    this.clearTimers();
    this.uploader.abortAll();
    this.counters.dropped += this.pendingItems() + this.queue.clear().length;
    this.inFlight.clear();
    this.retries = [];
    this.settleWaiters();
    closing.resolve();
  }

  private clearTimers(): void {
    if (this.retryTimer) clearTimeout(this.retryTimer);
    if (this.intervalTimer) clearTimeout(this.intervalTimer);
    if (this.paceTimer) clearTimeout(this.paceTimer);
    this.retryTimer = null;
    this.intervalTimer = null;
    this.paceTimer = null;
  }

  /** Looks at the windows again now (flush, close, new limits), rather than when the wait ends. */
  private repace(): void {
    if (this.paceTimer) clearTimeout(this.paceTimer);
    this.paceTimer = null;
    this.schedulePump();
  }

  /**
   * The next batch needs `waitMs` more for room in the edge's windows: the pump looks again then
   * (Infinity: when an upload in flight is answered). A wait is a stall for flush(), as a backoff
   * is; close() ends when the wait outlasts its deadline.
   */
  private pace(waitMs: number): void {
    const closing = this.closing;
    if (closing && Number.isFinite(waitMs) && Date.now() + waitMs > closing.deadlineMs) {
      this.finishClose();
      return;
    }
    if (this.paceTimer === null && Number.isFinite(waitMs)) {
      this.paceTimer = setTimeout(
        () => {
          this.paceTimer = null;
          this.schedulePump();
        },
        Math.min(waitMs, PACE_RECHECK_MS),
      );
      this.paceTimer.unref();
    }
    this.settleWaiters();
  }

  private refreshQuota(): void {
    if (this.mode === 'quota-paused' && this.settings.clock() >= this.quotaUntilMs) {
      this.mode = 'running';
      this.quotaUntilMs = 0;
      this.counters.quotaResetAtSeconds = 0;
    }
  }

  private lowestUnsettled(): number {
    let lowest = this.queue.peek()?.seq ?? Infinity;
    for (const batch of this.inFlight) lowest = Math.min(lowest, batch.items[0].seq);
    for (const batch of this.retries) lowest = Math.min(lowest, batch.items[0].seq);
    return lowest;
  }

  /** Envelopes taken from the queue and not settled: in flight or waiting for a retry. */
  private pendingItems(): number {
    return itemsOf(this.inFlight) + itemsOf(this.retries);
  }

  private settleWaiters(): void {
    const stalled = this.mode !== 'running' || this.retryTimer !== null || this.paceTimer !== null;
    const lowest = this.lowestUnsettled();
    for (let i = this.waiters.length - 1; i >= 0; i--) {
      const waiter = this.waiters[i];
      if (stalled || lowest > waiter.target) {
        this.waiters.splice(i, 1);
        waiter.resolve();
      }
    }
    this.updateHold();
  }

  private updateHold(): void {
    if (this.waiters.length > 0 && this.hold === null) this.hold = setInterval(() => undefined, 60_000);
    else if (this.waiters.length === 0 && this.hold !== null) {
      clearInterval(this.hold);
      this.hold = null;
    }
  }

  private armInterval(): void {
    if (this.intervalTimer !== null || this.mode !== 'running') return;
    this.intervalTimer = setTimeout(() => {
      this.intervalTimer = null;
      this.due = true;
      this.schedulePump();
    }, this.settings.flushIntervalMs);
    this.intervalTimer.unref();
  }

  private schedulePump(): void {
    if (this.pumpScheduled) return;
    this.pumpScheduled = true;
    // Off the host's call stack: the batch is built and sent in a later turn of the event loop.
    setImmediate(() => {
      this.pumpScheduled = false;
      try {
        this.pump();
      } catch {
        // Nothing here throws by design; never let a surprise escape into the host's loop.
      }
    }).unref();
  }

  private pump(): void {
    if (this.mode !== 'running' || this.retryTimer !== null || this.paceTimer !== null) return;
    while (this.inFlight.size < this.settings.maxConcurrentUploads) {
      let batch = this.retries[0];
      if (batch !== undefined) {
        const wait = this.budget.waitMs(this.settings.clock(), this.budget.maxBatch(batch.items.length));
        if (wait > 0) {
          this.pace(wait);
          break;
        }
        this.retries.shift();
      } else {
        const head = this.queue.peek();
        if (!head) break;
        const partial = this.closing !== null || this.due || head.seq <= this.flushTarget;
        if (this.queue.length < this.settings.maxBatchSize && !partial) {
          this.armInterval();
          break;
        }
        // Wait for room for a whole batch rather than send what room there is: small batches
        // would spend the request budget (600 a minute) long before the observation budget.
        const size = this.budget.maxBatch(Math.min(this.settings.maxBatchSize, this.queue.length));
        const wait = this.budget.waitMs(this.settings.clock(), size);
        if (wait > 0) {
          this.pace(wait);
          break;
        }
        batch = this.takeBatch(size);
        this.due = false;
        if (this.queue.length > 0) this.armInterval();
      }
      this.budget.sent(batch.items.length);
      this.send(batch);
    }
    if (this.inFlight.size === 0 && this.retries.length === 0 && this.queue.length === 0) {
      this.settleWaiters();
      if (this.closing) this.finishClose();
    }
  }

  private send(batch: Batch): void {
    this.inFlight.add(batch);
    void this.upload(batch).then((answer) => {
      // After close() the batch was counted as dropped and forgotten.
      if (!this.inFlight.delete(batch) || this.mode === 'closed') return;
      this.handle(batch, answer);
    });
  }

  /** Up to `size` queued envelopes, under MAX_BODY_BYTES together. */
  private takeBatch(size: number): Batch {
    const items: Queued[] = [];
    let bytes = BODY_OVERHEAD;
    for (let item = this.queue.peek(); item && items.length < size; item = this.queue.peek()) {
      const next = bytes + item.bytes + (items.length > 0 ? 1 : 0);
      if (next >= MAX_BODY_BYTES && items.length > 0) break;
      items.push(this.queue.shift() as Queued);
      bytes = next;
    }
    const text = BODY_PREFIX + items.map((item) => item.text).join(',') + BODY_SUFFIX;
    return { items, text, body: Buffer.from(text, 'utf8') };
  }

  /** One attempt, signed now over the batch's exact body. Never rejects. */
  private async upload(batch: Batch): Promise<Answer> {
    try {
      const headers = { ...signedHeaders(this.settings, batch.text, this.settings.clock()), 'content-type': 'application/json' };
      return await this.uploader.send(this.settings.ingestUrl, 'POST', headers, batch.body);
    } catch (error) {
      return { status: 0, headers: {}, body: '', error: error instanceof Error ? error.message : 'upload failed' };
    }
  }

  private handle(batch: Batch, answer: Answer): void {
    const size = batch.items.length;
    const status = answer.status;
    this.budget.answered(this.settings.clock(), size, status !== 429);
    if (status >= 200 && status <= 299) {
      const accepted = status === 207 ? acceptedOf(answer.body, size) : size;
      this.counters.delivered += accepted;
      this.counters.rejected += size - accepted;
      this.settled();
    } else if (isRetryable(status)) {
      this.counters.failedBatches++;
      // Delivery already stopped or paused by another batch's answer: this one goes with the queue.
      if (this.mode === 'unauthenticated') this.counters.rejected += size;
      else if (this.mode === 'quota-paused') this.counters.dropped += size;
      if (this.mode !== 'running') {
        this.settleWaiters();
        return;
      }
      this.failures++;
      this.retries.push(batch);
      this.retries.sort((a, b) => a.items[0].seq - b.items[0].seq);
      const retryAfter = parseRetryAfterMs(answer.headers['retry-after'], this.settings.maxRetryAfterMs);
      this.retryIn(retryAfter ?? backoffDelayMs(this.failures, this.settings.initialDelayMs, this.settings.maxDelayMs));
    } else if (status === 401) {
      this.counters.rejected += size;
      this.stop('unauthenticated');
    } else if (status === 403 && (parseJson(answer.body) as { error?: unknown } | undefined)?.error === QUOTA_ERROR) {
      this.counters.quotaRejected++;
      this.counters.rejected += size;
      this.pauseForQuota(answer.body);
    } else {
      this.counters.rejected += size;
      this.settled();
    }
  }

  private settled(): void {
    this.failures = 0;
    this.settleWaiters();
    this.schedulePump();
  }

  /** Pauses new uploads for `delayMs` (or until a later pause already set ends). */
  private retryIn(delayMs: number): void {
    const closing = this.closing;
    if (closing && Date.now() + delayMs > closing.deadlineMs) {
      this.finishClose();
      return;
    }
    const retryAtMs = Date.now() + delayMs;
    if (this.retryTimer !== null) {
      if (retryAtMs <= this.retryAtMs) {
        this.settleWaiters();
        return;
      }
      clearTimeout(this.retryTimer);
    }
    this.retryAtMs = retryAtMs;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      this.schedulePump();
    }, delayMs);
    this.retryTimer.unref();
    this.settleWaiters();
  }

  private pauseForQuota(body: string): void {
    const now = this.settings.clock();
    const resetAt = Date.parse(String((parseJson(body) as { resetAt?: unknown } | undefined)?.resetAt));
    // A reset the local clock already passed (or none) would resend at once: wait for the next month.
    const until = Number.isFinite(resetAt) && resetAt > now ? resetAt : nextUtcMonthMs(now);
    this.mode = 'quota-paused';
    this.quotaUntilMs = until;
    this.counters.quotaResetAtSeconds = Math.floor(until / 1000);
    this.counters.dropped += this.queue.clear().length + itemsOf(this.retries);
    this.retries = [];
    this.clearTimers();
    this.due = false;
    this.settleWaiters();
    if (this.closing) this.finishClose();
  }

  private stop(mode: 'unauthenticated'): void {
    this.mode = mode;
    this.counters.rejected += this.queue.clear().length + itemsOf(this.retries);
    this.retries = [];
    this.clearTimers();
    this.settleWaiters();
    if (this.closing) this.finishClose();
  }
}

/** Accepted items of a 207 (`results` by index, else `accepted`); unreadable → none. */
export function acceptedOf(body: string, size: number): number {
  const parsed = parseJson(body) as { results?: unknown; accepted?: unknown } | undefined;
  if (Array.isArray(parsed?.results)) {
    const accepted = parsed.results.filter((result) => (result as { accepted?: unknown } | null)?.accepted === true).length;
    return Math.min(accepted, size);
  }
  const accepted = parsed?.accepted;
  return typeof accepted === 'number' && Number.isInteger(accepted) && accepted >= 0 && accepted <= size ? accepted : 0;
}
