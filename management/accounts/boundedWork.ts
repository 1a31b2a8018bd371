/**
 * At most `concurrency` tasks run at once and at most `queueLength` wait for a turn; a task past
 * both is refused at once (`refuse()`), before it costs anything. Turns pass straight from a
 * finishing task to the oldest waiter, so the count never exceeds `concurrency`.
 */
export class BoundedWork {
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(
    readonly concurrency: number,
    readonly queueLength: number,
  ) {}

  get active(): number {
    return this.running;
  }

  get queued(): number {
    return this.waiting.length;
  }

  async run<T>(task: () => Promise<T>, refuse: () => Error): Promise<T> {
    if (this.running < this.concurrency) {
      this.running += 1;
    } else {
      if (this.waiting.length >= this.queueLength) throw refuse();
      await new Promise<void>((start) => this.waiting.push(start));
    }
    try {
      return await task();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.running -= 1;
    }
  }
}
