import { mkdir, open, readdir, readFile, rename, rm, truncate, writeFile, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { FRAME_HEADER_BYTES, frameHeader, readFrame } from './recordFrame.js';

/** A place in the log: a segment's number and a byte offset in it. */
export interface LogPosition {
  segment: number;
  offset: number;
}

export const comparePositions = (a: LogPosition, b: LogPosition): number => a.segment - b.segment || a.offset - b.offset;

export interface WriteAheadLogOptions {
  dir: string;
  /** A segment is closed and a new one begun once a write would take it past this size. */
  segmentBytes: number;
  /** Told of every cut made when opening: a torn tail after a crash, or corruption. */
  onRepair?: (repair: { segment: number; offset: number; reason: string; segmentsRemoved: number }) => void;
}

interface Waiter {
  /** The frame header, then the payload's pieces. */
  buffers: Buffer[];
  bytes: number;
  resolve: (end: LogPosition) => void;
  reject: (error: unknown) => void;
}

const SEGMENT_NAME = /^(\d{8})\.wal$/;
const segmentName = (segment: number) => `${String(segment).padStart(8, '0')}.wal`;
const CHECKPOINT = 'checkpoint.json';
/**
 * Reading checks each record's CRC on the event loop: after this many bytes it lets requests
 * run (a shipping round reads tens of megabytes, which in one go stalled every answer).
 */
const YIELD_BYTES = 1024 * 1024;
export const yieldTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
const LOCK = 'lock';

/** Whether a process with this id runs (signal 0 checks without signalling). */
function processRuns(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * One edge per log folder: two processes appending to and shipping the same segments would
 * interleave records and both move the checkpoint. The lock file holds the owner's process id;
 * a lock whose process is gone (killed, crashed) is taken over.
 */
async function lockDirectory(dir: string): Promise<void> {
  const path = join(dir, LOCK);
  for (let attempt = 0; attempt < 2; attempt += 1) {
    try {
      await writeFile(path, String(process.pid), { flag: 'wx' });
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const owner = Number(await readFile(path, 'utf8').catch(() => ''));
    if (Number.isInteger(owner) && owner > 0 && processRuns(owner)) {
      throw new Error(`the write-ahead log in ${dir} is in use by process ${owner} (INGEST_WAL_DIR: one folder per edge)`);
    }
    await rm(path, { force: true });
  }
  throw new Error(`could not lock the write-ahead log in ${dir}`);
}

/**
 * The ingest edge's write-ahead log (issue 17), after Prometheus's `tsdb/wlog`: numbered segment
 * files of length-and-CRC-framed records (recordFrame.ts), appended only. Appends that arrive
 * while a write is in progress wait for the next one, so one `write` and one `fdatasync` make
 * the records of many requests durable together; `append` resolves once its record is durable.
 *
 * Opening repairs the log as wlog does: records are read back from the first segment, and at the
 * first one that is torn or fails its CRC the segment is cut there and every later segment
 * removed, so what remains is exactly the records that were durable and intact. A failed write
 * or fdatasync leaves the file in an unknown state (what PostgreSQL learnt as "fsyncgate"): the
 * log then refuses every append until it is opened again, and repaired.
 *
 * Readers (the shipper) read durable records only, and record how far they have shipped in a
 * checkpoint file; whole segments before the checkpoint are deleted.
 */
export class WriteAheadLog {
  private handle!: FileHandle;
  private segment = 0;
  private size = 0;
  /** Sizes of the segments on disk, closed and current. */
  private readonly sizes = new Map<number, number>();
  private queue: Waiter[] = [];
  private writing: Promise<void> | null = null;
  private failure: unknown = null;
  private durableEnd: LogPosition = { segment: 0, offset: 0 };
  private closed = false;
  /** Records made durable and the fdatasync calls that did it (their ratio is the grouping). */
  readonly stats = { records: 0, syncs: 0 };

  private constructor(private readonly options: WriteAheadLogOptions) {}

  static async open(options: WriteAheadLogOptions): Promise<WriteAheadLog> {
    const log = new WriteAheadLog(options);
    await mkdir(options.dir, { recursive: true });
    await lockDirectory(options.dir);
    await log.repair();
    return log;
  }

  /** The end of the durable records: everything before it survives a crash. */
  get durable(): LogPosition {
    return { ...this.durableEnd };
  }

  /** Bytes of durable records from `from` to the end (what is not yet shipped). */
  bytesFrom(from: LogPosition): number {
    let bytes = 0;
    for (const [segment, size] of this.sizes) {
      if (segment < from.segment) continue;
      const end = segment === this.durableEnd.segment ? this.durableEnd.offset : size;
      bytes += Math.max(0, end - (segment === from.segment ? from.offset : 0));
    }
    return bytes;
  }

  /**
   * Appends one record, its payload given whole or in pieces (written as they are: they must not
   * change until the returned promise settles); resolves with the position after it once it is
   * durable.
   */
  append(payload: Buffer | readonly Buffer[]): Promise<LogPosition> {
    if (this.closed) return Promise.reject(new Error('the write-ahead log is closed'));
    if (this.failure !== null) return Promise.reject(this.failure);
    const pieces = Buffer.isBuffer(payload) ? [payload] : payload;
    const buffers = [frameHeader(pieces), ...pieces];
    const bytes = buffers.reduce((sum, buffer) => sum + buffer.length, 0);
    return new Promise<LogPosition>((resolve, reject) => {
      this.queue.push({ buffers, bytes, resolve, reject });
      this.startWriting();
    });
  }

  /** One writer at a time; appends queued while it finished its last round start the next. */
  private startWriting(): void {
    if (this.writing !== null) return;
    this.writing = (async () => {
      try {
        await this.writeQueued();
      } finally {
        this.writing = null;
        if (this.queue.length > 0) this.startWriting();
      }
    })();
  }

  /**
   * Durable records from `from`, about `maxBytes` of them (at least one when there is one), and
   * the position after the last one returned. `into`, when given and large enough, is read into
   * instead of new memory: the records are views of it, valid until it is used again (the shipper
   * reads every round into the same buffer: a new one of tens of megabytes a second set off V8's
   * external-memory collections).
   */
  async read(from: LogPosition, maxBytes: number, into?: Buffer): Promise<{ records: Buffer[]; end: LogPosition }> {
    let at = { ...from };
    // A position at the end of a closed segment is the start of the next one.
    while (at.segment < this.durableEnd.segment && at.offset >= (this.sizes.get(at.segment) ?? 0))
      at = { segment: at.segment + 1, offset: 0 };
    const limit = at.segment === this.durableEnd.segment ? this.durableEnd.offset : (this.sizes.get(at.segment) ?? 0);
    if (at.offset >= limit) return { records: [], end: at };
    const data = await readRange(
      join(this.options.dir, segmentName(at.segment)),
      at.offset,
      Math.min(limit, at.offset + Math.max(maxBytes, FRAME_HEADER_BYTES)),
      into,
    );
    const records: Buffer[] = [];
    let offset = 0;
    let sinceYield = 0;
    for (;;) {
      const read = readFrame(data, offset);
      if (read.kind === 'record') {
        records.push(read.payload);
        sinceYield += read.next - offset;
        offset = read.next;
        if (sinceYield >= YIELD_BYTES) {
          sinceYield = 0;
          await yieldTurn();
        }
        continue;
      }
      if (read.kind === 'end' || records.length > 0) break;
      // The first record is larger than maxBytes: read exactly it.
      const length = data.length >= FRAME_HEADER_BYTES ? data.readUInt32LE(0) : -1;
      if (length < 0 || at.offset + FRAME_HEADER_BYTES + length > limit) {
        throw new Error(`write-ahead log segment ${at.segment} is corrupt at ${at.offset}: ${read.reason}`);
      }
      return this.read(from, FRAME_HEADER_BYTES + length);
    }
    return { records, end: { segment: at.segment, offset: at.offset + offset } };
  }

  /** The shipper's checkpoint: records before it are in ClickHouse. */
  async loadCheckpoint(): Promise<LogPosition | null> {
    const text = await readFile(join(this.options.dir, CHECKPOINT), 'utf8').catch(() => null);
    if (text === null) return null;
    const parsed = JSON.parse(text) as LogPosition;
    return { segment: Number(parsed.segment), offset: Number(parsed.offset) };
  }

  /**
   * Records the checkpoint (written to a temporary file, made durable, renamed over the old one)
   * and deletes the segments wholly before it.
   */
  async saveCheckpoint(position: LogPosition): Promise<void> {
    const path = join(this.options.dir, CHECKPOINT);
    const temporary = `${path}.tmp`;
    await writeFile(temporary, JSON.stringify(position));
    const handle = await open(temporary, 'r+');
    try {
      await handle.datasync();
    } finally {
      await handle.close();
    }
    await rename(temporary, path);
    await syncDirectory(this.options.dir);
    for (const segment of [...this.sizes.keys()].sort((a, b) => a - b)) {
      if (segment >= position.segment || segment === this.segment) break;
      await rm(join(this.options.dir, segmentName(segment)), { force: true });
      this.sizes.delete(segment);
    }
  }

  /** Waits for the writes in progress, then closes the current segment. */
  async close(): Promise<void> {
    this.closed = true;
    while (this.writing) await this.writing;
    await this.handle.close();
    await rm(join(this.options.dir, LOCK), { force: true });
  }

  private async writeQueued(): Promise<void> {
    while (this.queue.length > 0) {
      const waiting = this.queue;
      this.queue = [];
      // What fits in the current segment goes in one write and one fdatasync; the rest in the next segment.
      for (let from = 0; from < waiting.length; ) {
        let to = from;
        let bytes = 0;
        while (to < waiting.length && (to === from || this.size + bytes + waiting[to].bytes <= this.options.segmentBytes))
          bytes += waiting[to++].bytes;
        const batch = waiting.slice(from, to);
        from = to;
        try {
          if (this.failure !== null) throw this.failure;
          if (this.size > 0 && this.size + bytes > this.options.segmentBytes) await this.rotate();
          await writeAll(
            this.handle,
            batch.flatMap((waiter) => waiter.buffers),
            this.size,
          );
          await this.handle.datasync();
          this.stats.syncs += 1;
          this.stats.records += batch.length;
          let offset = this.size;
          this.size += bytes;
          this.sizes.set(this.segment, this.size);
          this.durableEnd = { segment: this.segment, offset: this.size };
          for (const waiter of batch) {
            offset += waiter.bytes;
            waiter.resolve({ segment: this.segment, offset });
          }
        } catch (error) {
          this.failure ??= error;
          for (const waiter of batch) waiter.reject(error);
        }
      }
    }
  }

  private async rotate(): Promise<void> {
    await this.handle.close();
    this.segment += 1;
    this.size = 0;
    this.handle = await open(join(this.options.dir, segmentName(this.segment)), 'w');
    this.sizes.set(this.segment, 0);
    await syncDirectory(this.options.dir);
    this.durableEnd = { segment: this.segment, offset: 0 };
  }

  /** Reads every segment back, cuts at the first torn or corrupt record, opens the last for appends. */
  private async repair(): Promise<void> {
    const segments = (await readdir(this.options.dir))
      .map((name) => SEGMENT_NAME.exec(name)?.[1])
      .filter((match): match is string => match !== undefined)
      .map(Number)
      .sort((a, b) => a - b);
    let cut: { segment: number; offset: number; reason: string } | null = null;
    for (const segment of segments) {
      const path = join(this.options.dir, segmentName(segment));
      if (cut !== null) {
        await rm(path, { force: true });
        continue;
      }
      const data = await readFile(path);
      let offset = 0;
      for (;;) {
        const read = readFrame(data, offset);
        if (read.kind === 'record') {
          offset = read.next;
          continue;
        }
        if (read.kind === 'corrupt') {
          cut = { segment, offset, reason: read.reason };
          await truncate(path, offset);
        }
        break;
      }
      this.sizes.set(segment, offset);
    }
    if (cut !== null) {
      const at = cut;
      const removed = segments.filter((segment) => segment > at.segment);
      for (const segment of removed) this.sizes.delete(segment);
      this.options.onRepair?.({ ...at, segmentsRemoved: removed.length });
    }
    const last = Math.max(-1, ...this.sizes.keys());
    this.segment = Math.max(last, 0);
    this.size = this.sizes.get(this.segment) ?? 0;
    this.handle = await open(join(this.options.dir, segmentName(this.segment)), last < 0 ? 'w' : 'r+');
    this.sizes.set(this.segment, this.size);
    if (last < 0) await syncDirectory(this.options.dir);
    this.durableEnd = { segment: this.segment, offset: this.size };
  }
}

/** Writes the buffers in order from `position`, gathered by writev (no copy into one buffer). */
async function writeAll(handle: FileHandle, buffers: Buffer[], position: number): Promise<void> {
  let pending = buffers;
  let at = position;
  while (pending.length > 0) {
    // At most IOV_MAX (1,024 on Linux) buffers per call.
    const slice = pending.slice(0, WRITEV_BUFFERS);
    let { bytesWritten } = await handle.writev(slice, at);
    at += bytesWritten;
    // A short write: go on from the first byte not written.
    let index = 0;
    while (index < slice.length && bytesWritten >= slice[index].length) bytesWritten -= slice[index++].length;
    pending = [
      ...(index < slice.length ? [slice[index].subarray(bytesWritten)] : []),
      ...slice.slice(index + 1),
      ...pending.slice(WRITEV_BUFFERS),
    ];
  }
}

const WRITEV_BUFFERS = 1_024;

async function readRange(path: string, from: number, to: number, into?: Buffer): Promise<Buffer> {
  const handle = await open(path, 'r');
  try {
    const buffer = into !== undefined && into.length >= to - from ? into.subarray(0, to - from) : Buffer.allocUnsafe(to - from);
    let read = 0;
    while (read < buffer.length) {
      const { bytesRead } = await handle.read(buffer, read, buffer.length - read, from + read);
      if (bytesRead === 0) break;
      read += bytesRead;
    }
    return buffer.subarray(0, read);
  } finally {
    await handle.close();
  }
}

/** A created, renamed or removed file is durable only once its directory is. */
async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
