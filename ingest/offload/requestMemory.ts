import type { SharedSlots } from './sharedSlots.js';

/**
 * The shared-slot memory of one request (sharedSlots.ts), and the only code that takes and gives
 * slots: its body's, the copy a worker thread reads, the rows its check wrote. Whoever holds the
 * request holds this: the adapter while it reads the body, then the pipeline, which releases it
 * once the body and rows are no longer read (the log writes the rows from where they are, so once
 * they are durable). Releasing twice does nothing; a buffer that is not a slot is left to the
 * garbage collector.
 */
export class RequestMemory {
  private readonly held: Uint8Array[] = [];

  constructor(private readonly slots: SharedSlots | null) {}

  /** The size of one slot (0 without slots): what a worker may write into one. */
  get slotBytes(): number {
    return this.slots?.slotBytes ?? 0;
  }

  /** Memory for a body of `length` bytes: a slot when one is free and large enough, else its own. */
  body(length: number): Buffer {
    return this.slot(length) ?? Buffer.allocUnsafe(length);
  }

  /** A free slot's first `length` bytes for this request, or null (none free, or too long). */
  slot(length: number): Buffer | null {
    const view = this.slots?.take(length) ?? null;
    if (view !== null) this.held.push(view);
    return view;
  }

  /** The index of a slot this request holds (what a worker thread is told), else -1. */
  slotOf(bytes: Uint8Array): number {
    return this.held.includes(bytes) ? this.slots!.slotOf(bytes) : -1;
  }

  /** The first `length` bytes of a slot this request holds, replacing the view it had. */
  shrink(bytes: Uint8Array, length: number): Buffer {
    const at = this.held.indexOf(bytes);
    if (at === -1) throw new Error('not a slot of this request');
    const shorter = this.slots!.resize(bytes, length);
    this.held[at] = shorter;
    return shorter;
  }

  release(): void {
    for (const bytes of this.held.splice(0)) this.slots?.give(bytes);
  }
}
