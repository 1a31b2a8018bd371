// The bounded FIFO of serialised envelopes waiting for delivery, bounded by count and by bytes
// (an envelope may be up to 1 MiB): full, it drops its oldest items.

export interface Queued {
  /** Position in the order of arrival (flush() waits for the items queued before it). */
  seq: number;
  eventId: string;
  text: string;
  /** UTF-8 length of `text`. */
  bytes: number;
}

export class BoundedQueue {
  private items: Queued[] = [];
  private head = 0;
  /** UTF-8 bytes of the queued texts. */
  bytes = 0;

  constructor(
    readonly capacity: number,
    readonly maxBytes = Infinity,
  ) {}

  get length(): number {
    return this.items.length - this.head;
  }

  peek(): Queued | undefined {
    return this.items[this.head];
  }

  /** Appends `item`; returns how many of the oldest items it pushed out to stay within bounds. */
  push(item: Queued): number {
    let dropped = 0;
    while (this.length > 0 && (this.length >= this.capacity || this.bytes + item.bytes > this.maxBytes)) {
      this.shift();
      dropped++;
    }
    this.items.push(item);
    this.bytes += item.bytes;
    return dropped;
  }

  shift(): Queued | undefined {
    if (this.head >= this.items.length) return undefined;
    const item = this.items[this.head];
    this.items[this.head] = undefined as unknown as Queued;
    this.head++;
    this.bytes -= item.bytes;
    // Compact now and then, so that shifting stays O(1) amortised and memory is released.
    if (this.head >= 1024 && this.head * 2 >= this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return item;
  }

  /** Removes and returns everything. */
  clear(): Queued[] {
    const all = this.items.slice(this.head);
    this.items = [];
    this.head = 0;
    this.bytes = 0;
    return all;
  }
}
