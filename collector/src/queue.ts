// The bounded FIFO of serialised envelopes waiting for delivery: full, it drops its oldest item.

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

  constructor(readonly capacity: number) {}

  get length(): number {
    return this.items.length - this.head;
  }

  peek(): Queued | undefined {
    return this.items[this.head];
  }

  /** Appends `item`; returns the oldest item it pushed out, if the queue was full. */
  push(item: Queued): Queued | undefined {
    const dropped = this.length >= this.capacity ? this.shift() : undefined;
    this.items.push(item);
    return dropped;
  }

  shift(): Queued | undefined {
    if (this.head >= this.items.length) return undefined;
    const item = this.items[this.head];
    this.items[this.head] = undefined as unknown as Queued;
    this.head++;
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
    return all;
  }
}
