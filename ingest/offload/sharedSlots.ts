/**
 * Fixed-size slots of one SharedArrayBuffer that the edge thread and the batch worker threads
 * all see (threadPool.ts). A request body is written into a slot as it arrives and read
 * there by the worker thread that checks it; the worker writes the batch's rows into another
 * slot, from where the write-ahead log writes them. Nothing is copied or moved between the
 * threads, and no request allocates an ArrayBuffer of its own. Requests take and give slots only
 * through their RequestMemory (requestMemory.ts).
 *
 * Why: V8 counts every new ArrayBuffer as external memory, and each 64 MB of it starts a full
 * (mark-compact) collection of the heap that allocated it. Under full load the edge thread
 * allocated a body and received the rows of 1,500 batches a second, about 130 MB/s: two full
 * collections a second, a few per cent of the machine's CPU (bench/RESULTS.md).
 *
 * A body or rows too large for a slot, or met when every slot is taken, use memory of their own
 * as before: the slots make the common case cheaper and change no answer.
 */

/** Room for a batch of 50 typical envelopes (about 52 KB of JSON) and for its rows. */
export const SLOT_BYTES = 64 * 1024;

/** What a worker thread needs to see the slots (sent once, in its workerData). */
export interface SlotMemory {
  memory: SharedArrayBuffer;
  slotBytes: number;
}

/** `length` bytes at the start of a slot (a view: reads and writes go to the shared memory). */
export function slotView({ memory, slotBytes }: SlotMemory, slot: number, length: number): Buffer {
  return Buffer.from(memory, slot * slotBytes, length);
}

/**
 * Copies `source` into `target` at `offset`; returns the bytes copied. Not TypedArray#set or
 * Buffer#copy: V8 copies into or out of shared memory with relaxed atomic moves, byte by byte
 * unless both sides share their alignment (50 KB at an odd offset: 14 µs), where Buffer#fill
 * with a buffer value is one memcpy (1 µs).
 */
export function copyBytes(source: Uint8Array, target: Buffer, offset: number): number {
  if (source.byteLength > 0) target.fill(source, offset, offset + source.byteLength);
  return source.byteLength;
}

export class SharedSlots implements SlotMemory {
  readonly memory: SharedArrayBuffer;
  private readonly free: number[] = [];
  /** The view handed out for each slot in use: only that very view gives the slot back. */
  private readonly lent: (Uint8Array | null)[];

  constructor(
    readonly count: number,
    readonly slotBytes: number = SLOT_BYTES,
  ) {
    this.memory = new SharedArrayBuffer(count * slotBytes);
    this.lent = new Array<Uint8Array | null>(count).fill(null);
    // Popped from the end: slot 0 first, so a light load touches (and keeps resident) few pages.
    for (let slot = count - 1; slot >= 0; slot -= 1) this.free.push(slot);
  }

  get available(): number {
    return this.free.length;
  }

  /** A free slot's first `length` bytes, or null when none is free or `length` exceeds a slot. */
  take(length: number): Buffer | null {
    if (length > this.slotBytes || this.free.length === 0) return null;
    const slot = this.free.pop()!;
    const view = slotView(this, slot, length);
    this.lent[slot] = view;
    return view;
  }

  /** The slot of a view that `take` handed out and that was not given back yet, else -1. */
  slotOf(bytes: Uint8Array): number {
    if (bytes.buffer !== this.memory) return -1;
    const slot = Math.floor(bytes.byteOffset / this.slotBytes);
    return this.lent[slot] === bytes ? slot : -1;
  }

  /**
   * A view of `length` bytes of a slot in use, to replace the one `take` gave (the rows a worker
   * wrote are shorter than the slot). The slot is then given back with the new view.
   */
  resize(bytes: Uint8Array, length: number): Buffer {
    const slot = this.slotOf(bytes);
    if (slot === -1) throw new Error('not a slot in use');
    const view = slotView(this, slot, length);
    this.lent[slot] = view;
    return view;
  }

  /**
   * Gives back the slot of a view from `take` (or `resize`). Anything else is ignored: memory of
   * its own, and a view already given back (its slot may be someone else's by now).
   */
  give(bytes: Uint8Array): void {
    const slot = this.slotOf(bytes);
    if (slot === -1) return;
    this.lent[slot] = null;
    this.free.push(slot);
  }
}
