import type { SharedSlots } from './sharedSlots.js';

/**
 * The shared-slot memory of one request (sharedSlots.ts): its body, and the rows its check wrote
 * into a slot. The adapter takes the body's memory from it, the pipeline adds the rows, and
 * `release` gives everything back at once: by the adapter when the request never reaches the
 * pipeline (the client went away, the body grew too large), else by the pipeline once the body
 * and rows are no longer read (the log writes the rows from where they are, so once they are durable). Releasing twice does nothing, and a
 * buffer that is not a slot is left to the garbage collector.
 */
export class RequestMemory {
  private readonly held: Uint8Array[] = [];

  constructor(private readonly slots: SharedSlots | null) {}

  /** Memory for a body of `length` bytes: a slot when one is free and large enough, else its own. */
  body(length: number): Buffer {
    const memory = this.slots?.take(length) ?? Buffer.allocUnsafe(length);
    this.held.push(memory);
    return memory;
  }

  /** Memory taken for this request elsewhere (the rows of its check). */
  hold(bytes: Uint8Array): void {
    this.held.push(bytes);
  }

  release(): void {
    for (const bytes of this.held.splice(0)) this.slots?.give(bytes);
  }
}
