import { copyBytes } from './sharedSlots.js';

/**
 * Group commit: rows of many requests go to ClickHouse in one INSERT. A flush starts when
 * `maxRows` rows wait, or when the wait has passed since the previous flush started: rows never
 * wait longer than that for a flush, a lone request after a quiet spell is written at once, and
 * under load there is at most one insert per wait (plus full ones), each carrying everything
 * that arrived meanwhile (few, large parts: ClickHouse's guidance). The wait is twice the recent
 * insert duration, within [`minWaitMs`, `maxWaitMs`]: while inserts are quick, answers wait
 * little; when ClickHouse slows down (full load, merges) inserts become fewer and larger, which
 * is what costs it less. While the machine's cores are saturated (`isBusy`, see
 * ingest/machineLoad.ts) the wait is at least `busyWaitMs`: CPU is then what limits the requests,
 * and much larger inserts cost ClickHouse much less of it. At most `maxInFlight` inserts run at once; while they run the queue
 * keeps growing. Every write resolves only after the insert holding its rows succeeded, and
 * rejects when that insert failed or timed out, or when its rows waited too long for a slot.
 */

export interface GroupCommitOptions {
  maxRows: number;
  /**
   * The wait while inserts are quick; `maxWaitMs` when absent (a fixed wait). One above
   * `maxWaitMs` also gives a fixed wait of `maxWaitMs`.
   */
  minWaitMs?: number;
  maxWaitMs: number;
  /** The wait while `isBusy()` says the machine is saturated (when both are given). */
  busyWaitMs?: number;
  isBusy?: () => boolean;
  maxInFlight: number;
  insertTimeoutMs: number;
  /** Writes are refused (`saturated()`) once this many rows wait. */
  maxQueuedRows: number;
  /** Each insert's query id is this prefix and a sequence number (see InsertFailedError). */
  queryIdPrefix?: string;
  /**
   * Whether an insert's error proves that nothing of it was written (ClickHouse refused it, or
   * could not be reached). Any other failure, a timeout among them, leaves the outcome unknown.
   */
  provesNothingWritten?: (error: unknown) => boolean;
}

export type InsertRows = (body: Buffer, rowCount: number, signal: AbortSignal, queryId: string) => Promise<void>;

export interface GroupCommitObserver {
  inserted?(rowCount: number, seconds: number): void;
  failed?(rowCount: number, error: unknown): void;
}

interface Pending {
  rows: Buffer;
  count: number;
  enqueuedAt: number;
  resolve(): void;
  reject(error: Error): void;
}

/**
 * Rows that were not answered as committed. `outcome` says whether they may still have been
 * written: `not_written` when they never left the process or ClickHouse refused the insert,
 * `unknown` when the insert timed out or its connection failed (ClickHouse may still be
 * writing them under `queryId`; see ingest/admissionResolver.ts).
 */
export class InsertFailedError extends Error {
  constructor(message: string, readonly outcome: 'not_written' | 'unknown', readonly queryId: string | null) {
    super(message);
  }
}

export class GroupCommitWriter {
  /**
   * Bodies of finished inserts, kept for the next ones: a new buffer of megabytes per insert
   * is one more large allocation for the edge thread's garbage collector to account for and free.
   * (Handing ClickHouse the requests' buffers as separate chunks costs it more CPU.)
   */
  private spareBodies: Buffer[] = [];
  private queue: Pending[] = [];
  private queuedRows = 0;
  private inFlight = 0;
  private timer: NodeJS.Timeout | null = null;
  private draining = false;
  private lastFlushAt = -Infinity;
  /** Moving average of recent successful inserts' durations (ms). */
  private insertMs = 0;
  private idleWaiters: (() => void)[] = [];
  private insertCount = 0;

  constructor(private readonly insert: InsertRows, private readonly options: GroupCommitOptions, private readonly observer: GroupCommitObserver = {}) {}

  /** Queues pre-serialised rows (`count` lines); resolves once they are committed. */
  write(rows: Buffer, count: number): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ rows, count, enqueuedAt: Date.now(), resolve, reject });
      this.queuedRows += count;
      this.pump();
    });
  }

  /** True when new batches should be refused (503) rather than queued. */
  saturated(): boolean {
    return this.queuedRows >= this.options.maxQueuedRows;
  }

  get pendingRows(): number {
    return this.queuedRows;
  }

  /** Flushes everything now and resolves once no insert is queued or running (graceful shutdown). */
  drain(): Promise<void> {
    this.draining = true;
    this.pump();
    if (this.queue.length === 0 && this.inFlight === 0) return Promise.resolve();
    return new Promise<void>((resolve) => this.idleWaiters.push(resolve));
  }

  /** The current wait between flushes (see the class comment). */
  waitMs(): number {
    const { minWaitMs = this.options.maxWaitMs, maxWaitMs, busyWaitMs, isBusy } = this.options;
    const wait = Math.min(maxWaitMs, Math.max(minWaitMs, 2 * this.insertMs));
    return busyWaitMs !== undefined && isBusy?.() ? Math.max(wait, busyWaitMs) : wait;
  }

  /** The longest wait there can be (the expiry of rows waiting for a slot counts from it). */
  private longestWaitMs(): number {
    return Math.max(this.options.maxWaitMs, this.options.isBusy ? this.options.busyWaitMs ?? 0 : 0);
  }

  private due(now: number): boolean {
    if (this.queue.length === 0) return false;
    return this.draining || this.queuedRows >= this.options.maxRows || now - this.lastFlushAt >= this.waitMs();
  }

  private pump(): void {
    const now = Date.now();
    this.expire(now);
    while (this.inFlight < this.options.maxInFlight && this.due(now)) this.send(this.take());
    if (this.timer === null && this.queue.length > 0 && this.inFlight < this.options.maxInFlight) {
      const wait = Math.max(0, this.waitMs() - (now - this.lastFlushAt));
      this.timer = setTimeout(() => {
        this.timer = null;
        this.pump();
      }, wait);
    }
    if (this.queue.length === 0 && this.inFlight === 0) this.notifyIdle();
  }

  /**
   * Rows still waiting for an insert slot an insert timeout after they were due fail now, so an
   * answer never waits longer than about the longest wait + 3 × insertTimeoutMs (queue wait, the
   * insert that frees the slot, their own insert).
   */
  private expire(now: number): void {
    const limit = this.longestWaitMs() + this.options.insertTimeoutMs;
    while (this.queue.length > 0 && now - this.queue[0].enqueuedAt > limit) {
      const expired = this.queue.shift()!;
      this.queuedRows -= expired.count;
      expired.reject(new InsertFailedError('rows waited too long for an insert slot', 'not_written', null));
    }
  }

  private take(): Pending[] {
    const chunk: Pending[] = [];
    let rows = 0;
    while (this.queue.length > 0 && (chunk.length === 0 || rows + this.queue[0].count <= this.options.maxRows)) {
      const next = this.queue.shift()!;
      rows += next.count;
      chunk.push(next);
    }
    this.queuedRows -= rows;
    return chunk;
  }

  private send(chunk: Pending[]): void {
    this.inFlight += 1;
    this.lastFlushAt = Date.now();
    let rowCount = 0;
    let bytes = 0;
    for (const pending of chunk) {
      rowCount += pending.count;
      bytes += pending.rows.length;
    }
    const buffer = this.bodyBuffer(bytes);
    let offset = 0;
    for (const pending of chunk) offset += copyBytes(pending.rows, buffer, offset);
    const started = process.hrtime.bigint();
    const signal = AbortSignal.timeout(this.options.insertTimeoutMs);
    const queryId = `${this.options.queryIdPrefix ?? 'insert_'}${this.insertCount++}`;
    let timedOut = false;
    // The insert is given the signal, and counts as failed at the timeout even if it ignores it.
    const outcome = new Promise<void>((resolve, reject) => {
      signal.addEventListener('abort', () => {
        timedOut = true;
        reject(new Error('insert timed out'));
      }, { once: true });
      this.insert(buffer.subarray(0, bytes), rowCount, signal, queryId).then(resolve, reject);
    });
    outcome.then(
      () => {
        const seconds = Number(process.hrtime.bigint() - started) / 1e9;
        this.insertMs = this.insertMs === 0 ? seconds * 1000 : 0.7 * this.insertMs + 0.3 * seconds * 1000;
        // ClickHouse answered after reading the whole body: nothing reads this buffer any more.
        // After a failure the request may still be writing it, so it is not reused.
        this.keepSpare(buffer);
        this.observer.inserted?.(rowCount, seconds);
        for (const pending of chunk) pending.resolve();
      },
      (error: unknown) => {
        this.observer.failed?.(rowCount, error);
        const written = !timedOut && this.options.provesNothingWritten?.(error) ? 'not_written' : 'unknown';
        const failure = new InsertFailedError(error instanceof Error ? error.message : 'insert failed', written, queryId);
        for (const pending of chunk) pending.reject(failure);
      },
    ).finally(() => {
      this.inFlight -= 1;
      this.pump();
    });
  }

  /** Keeps at most one spare body per insert slot, the largest ones. */
  private keepSpare(buffer: Buffer): void {
    this.spareBodies.push(buffer);
    this.spareBodies.sort((a, b) => b.length - a.length);
    this.spareBodies.length = Math.min(this.spareBodies.length, this.options.maxInFlight);
  }

  /** A buffer of at least `bytes` bytes: a spare one when one is large enough. */
  private bodyBuffer(bytes: number): Buffer {
    const index = this.spareBodies.findIndex((spare) => spare.length >= bytes);
    if (index !== -1) return this.spareBodies.splice(index, 1)[0];
    // Room for growth, so that a slowly rising load does not allocate at every insert.
    return Buffer.allocUnsafeSlow(Math.max(64 * 1024, Math.ceil(bytes * 1.25)));
  }

  private notifyIdle(): void {
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of waiters) resolve();
  }
}
