import type { Redis } from 'ioredis';
import { secondsSince } from '../../shared/metrics.js';
import { analysisJobFields } from '../../shared/redis.js';
import { decodeBatchRecord, type BatchRecord } from './logRecord.js';
import { comparePositions, yieldTurn, type LogPosition, type WriteAheadLog } from './writeAheadLog.js';

/**
 * The admission's commit of logged batches (DURABLE, ingest/admission/admission.ts): true for
 * each batch committed, false for one released meanwhile. Declared here so that the log does not
 * depend on the admission stage; the composition root passes the admission itself.
 */
export interface DurableCommits {
  settleDurable(batches: readonly { accountId: string; batchId: string; receivedAtMs: number }[]): Promise<boolean[]>;
}

export interface ShipperOptions {
  log: WriteAheadLog;
  admission: DurableCommits;
  redis: Redis;
  analysisStream: string;
  analysisStreamMaxLen: number;
  /** Inserts TabSeparated observation rows, streamed from these buffers (observationsTable.ts insertObservationRows). */
  insert: (body: readonly Buffer[], signal: AbortSignal) => Promise<void>;
  insertTimeoutMs: number;
  /** One insert takes at most about this many bytes of records. */
  maxInsertBytes: number;
  /** What is in the log is shipped at the latest this long after it arrived. */
  intervalMs: number;
  /** Past either, requests are refused (503) until the log has shipped below them. */
  maxLogBytes: number;
  maxLogAgeMs: number;
  nowMs: () => number;
  onShipped?: (batches: number, rows: number, bytes: number, seconds: number) => void;
  onFailure?: (error: unknown) => void;
}

const RETRY_MIN_MS = 200;
/**
 * Batches per Redis call of a round (DURABLE, then the jobs): Redis runs one call at a time, so
 * a round of a thousand batches in one call would hold every request's admission behind it.
 */
const BATCHES_PER_CALL = 200;
const RETRY_MAX_MS = 2_000;
/**
 * Rounds due by size begin at least this far apart: at most two inserts a second per edge
 * (issue 17), however fast ClickHouse takes them. A flush does not wait.
 */
const MIN_ROUND_SPACING_MS = 500;
/** Records decoded between two turns of the event loop. */
const DECODE_SLICE = 500;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Ships the write-ahead log to ClickHouse (issue 17): large inserts (up to maxInsertBytes, or
 * what arrived within intervalMs), then the analysis jobs of the shipped batches, then the
 * checkpoint. A crash between any two of these re-sends from the checkpoint on restart: the
 * same rows again (same receipt time and eventId, so the ReplacingMergeTree keeps one, and
 * readers count distinct eventIds meanwhile) and the same jobs again (the analyzer's batch
 * markers skip a batch it already analysed).
 *
 * Before shipping, each batch is asked of the admission (DURABLE): a batch whose process died
 * before committing it is committed now, and one that was released meanwhile (never answered as
 * accepted) is dropped, so ClickHouse holds exactly the batches answered 202. A batch this
 * process's request path committed is not asked again (committed()); that is the common case.
 */
export class Shipper {
  private cursor: LogPosition = { segment: 0, offset: 0 };
  private running = false;
  private loop: Promise<void> | null = null;
  private wake: (() => void) | null = null;
  /** Receipt time of the oldest record not yet shipped (null: none, as far as the last read saw). */
  private oldestUnshippedMs: number | null = null;
  /** When records were first seen waiting since the last shipment (for intervalMs). */
  private waitingSinceMs: number | null = null;
  /** What every round is read into (see WriteAheadLog.read); a round's records are done with before the next. */
  private readBuffer: Buffer | null = null;
  /** Callers of flush waiting for the cursor to pass a position. */
  private flushes: { until: LogPosition; resolve: (shipped: boolean) => void }[] = [];
  /** The end of the records the last round read. */
  private readEnd: LogPosition = { segment: 0, offset: 0 };
  /** Batches the request path committed whose records no round has read yet (see committed). */
  private readonly committedAhead = new Set<string>();
  /** Set by a failed round, cleared by the next successful one. */
  private failing = false;
  /** When the last round of the shipping loop began. */
  private lastRoundMs = 0;

  constructor(private readonly options: ShipperOptions) {}

  async start(): Promise<void> {
    this.cursor = (await this.options.log.loadCheckpoint()) ?? { segment: 0, offset: 0 };
    this.running = true;
    this.loop = this.run();
  }

  /**
   * Told by the request path that a batch whose record ends at `recordEnd` is committed (DURABLE
   * answered true, and its sets moved): the round that reads it need not ask again. A record a
   * round already read is not remembered (that round asks for it itself), so every remembered
   * batch is forgotten by the round that reads it. After a restart nothing is remembered and
   * every batch is asked for, which is what recovery needs.
   */
  committed(batchId: string, recordEnd: LogPosition): void {
    if (comparePositions(recordEnd, this.readEnd) > 0) this.committedAhead.add(batchId);
  }

  /** Told after each append: shipping may be due. */
  notify(): void {
    this.waitingSinceMs ??= this.options.nowMs();
    if (this.backlog() >= this.options.maxInsertBytes) this.wake?.();
  }

  /**
   * Ships everything durable now without waiting for intervalMs: true once shipped, false when a
   * shipping round fails first (ClickHouse or Redis down; it is retried as always).
   */
  flush(): Promise<boolean> {
    const until = this.options.log.durable;
    if (comparePositions(this.cursor, until) >= 0 || this.backlog() === 0) return Promise.resolve(true);
    return new Promise<boolean>((resolve) => {
      this.flushes.push({ until, resolve });
      this.wake?.();
    });
  }

  /** Bytes in the log not yet shipped. */
  backlog(): number {
    return this.options.log.bytesFrom(this.cursor);
  }

  /** False while shipping rounds fail (until one succeeds). */
  shipping(): boolean {
    return !this.failing;
  }

  /** Whether the log is past its bounds (requests are then refused with 503). */
  saturated(): boolean {
    if (this.backlog() > this.options.maxLogBytes) return true;
    return this.oldestUnshippedMs !== null && this.options.nowMs() - this.oldestUnshippedMs > this.options.maxLogAgeMs;
  }

  /** Ships everything durable, then stops (graceful shutdown); what cannot be shipped stays in the log. */
  async drain(): Promise<void> {
    this.running = false;
    this.wake?.();
    await this.loop;
    try {
      while (this.backlog() > 0) await this.shipOnce();
    } catch (error) {
      this.options.onFailure?.(error);
    }
  }

  private async run(): Promise<void> {
    let retryMs = RETRY_MIN_MS;
    while (this.running) {
      try {
        const pending = this.backlog();
        const since = this.waitingSinceMs;
        const due =
          pending >= this.options.maxInsertBytes
          || this.flushes.length > 0
          || (pending > 0 && (since === null || this.options.nowMs() - since >= this.options.intervalMs));
        if (!due) {
          await this.pause(
            pending > 0 && since !== null ? Math.max(1, this.options.intervalMs - (this.options.nowMs() - since)) : this.options.intervalMs,
          );
          continue;
        }
        const early = MIN_ROUND_SPACING_MS - (this.options.nowMs() - this.lastRoundMs);
        if (early > 0 && this.flushes.length === 0) {
          await this.pause(early);
          continue;
        }
        this.lastRoundMs = this.options.nowMs();
        await this.shipOnce();
        this.failing = false;
        retryMs = RETRY_MIN_MS;
      } catch (error) {
        this.failing = true;
        this.options.onFailure?.(error);
        for (const flush of this.flushes.splice(0)) flush.resolve(false);
        await this.pause(retryMs);
        retryMs = Math.min(RETRY_MAX_MS, retryMs * 2);
      }
    }
  }

  private pause(ms: number): Promise<void> {
    return Promise.race([
      sleep(ms),
      new Promise<void>((resolve) => {
        this.wake = resolve;
      }),
    ]).finally(() => {
      this.wake = null;
    });
  }

  /** Reads one insert's worth of records and ships them; the checkpoint moves only once all is done. */
  private async shipOnce(): Promise<void> {
    this.readBuffer ??= Buffer.allocUnsafe(this.options.maxInsertBytes);
    const { records, end } = await this.options.log.read(this.cursor, this.options.maxInsertBytes, this.readBuffer);
    if (comparePositions(end, this.readEnd) > 0) this.readEnd = end;
    if (records.length === 0) {
      this.cursor = end;
      this.resolveFlushes();
      this.oldestUnshippedMs = null;
      this.waitingSinceMs = null;
      return;
    }
    const batches: BatchRecord[] = [];
    for (const record of records) {
      batches.push(decodeBatchRecord(record));
      // Decoding is on the event loop too: requests run between slices of a round.
      if (batches.length % DECODE_SLICE === 0) await yieldTurn();
    }
    this.oldestUnshippedMs = Math.min(...batches.map((batch) => batch.job.receivedAtMs));
    const committed = batches.map((batch) => this.committedAhead.delete(batch.job.batchId));
    const unknown = batches.flatMap((_batch, index) => (committed[index] ? [] : [index]));
    for (let from = 0; from < unknown.length; from += BATCHES_PER_CALL) {
      const chunk = unknown.slice(from, from + BATCHES_PER_CALL);
      const replies = await this.options.admission.settleDurable(
        chunk.map((index) => {
          const { accountId, job } = batches[index];
          return { accountId, batchId: job.batchId, receivedAtMs: job.receivedAtMs };
        }),
      );
      chunk.forEach((index, at) => {
        committed[index] = replies[at];
      });
    }
    const shipped = batches.filter((_, index) => committed[index]);
    const started = process.hrtime.bigint();
    const body = shipped.map((batch) => batch.rows);
    const bytes = body.reduce((sum, rows) => sum + rows.length, 0);
    if (bytes > 0) await this.insertWithTimeout(body);
    const shippedIds = new Set(shipped.map((batch) => batch.job.batchId));
    for (let from = 0; from < batches.length; from += BATCHES_PER_CALL)
      await this.enqueue(batches.slice(from, from + BATCHES_PER_CALL), shippedIds);
    await this.options.log.saveCheckpoint(end);
    this.cursor = end;
    this.resolveFlushes();
    const rows = shipped.reduce((sum, batch) => sum + batch.job.eventIds.length, 0);
    this.options.onShipped?.(shipped.length, rows, bytes, secondsSince(started));
    if (this.backlog() === 0) {
      this.oldestUnshippedMs = null;
      this.waitingSinceMs = null;
    } else {
      this.waitingSinceMs = this.options.nowMs();
    }
  }

  private resolveFlushes(): void {
    const nothingLeft = this.backlog() === 0;
    this.flushes = this.flushes.filter((flush) => {
      if (!nothingLeft && comparePositions(this.cursor, flush.until) < 0) return true;
      flush.resolve(true);
      return false;
    });
  }

  private async insertWithTimeout(body: readonly Buffer[]): Promise<void> {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), this.options.insertTimeoutMs);
    try {
      await this.options.insert(body, controller.signal);
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * The analysis jobs of the shipped batches among `read` (the analyzer takes each out of
   * `RedisKeys.unanalysedBatches` once analysed). One key, so one pipeline on a cluster too.
   */
  private async enqueue(read: readonly BatchRecord[], shippedIds: ReadonlySet<string>): Promise<void> {
    const pipeline = this.options.redis.pipeline();
    for (const { job } of read) {
      if (!shippedIds.has(job.batchId)) continue;
      pipeline.xadd(this.options.analysisStream, 'MAXLEN', '~', this.options.analysisStreamMaxLen, '*', ...analysisJobFields(job));
    }
    const replies = await pipeline.exec();
    const failed = replies?.find(([error]) => error !== null);
    if (!replies || failed) throw failed?.[0] ?? new Error('the analysis jobs were not added');
  }
}
