interface Waiting<T, R> {
  item: T;
  resolve(result: R): void;
  reject(error: unknown): void;
}

/**
 * Gathers the items asked for in one turn of the event loop into one call (at most `maxPerCall`
 * items each; the rest go in the next turn): the batches of one insert or one log write settle
 * in one Redis script call instead of one call each. `send` answers one result per item, in order.
 */
export class TurnBatcher<T, R> {
  private waiting: Waiting<T, R>[] = [];

  constructor(
    private readonly send: (items: T[]) => Promise<R[]>,
    private readonly maxPerCall: number,
  ) {}

  add(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      if (this.waiting.push({ item, resolve, reject }) === 1) setImmediate(() => this.flush());
    });
  }

  private flush(): void {
    const waiting = this.waiting.splice(0, this.maxPerCall);
    if (this.waiting.length > 0) setImmediate(() => this.flush());
    this.send(waiting.map((entry) => entry.item)).then(
      (results) => {
        for (const [index, entry] of waiting.entries()) entry.resolve(results[index]);
      },
      (error: unknown) => {
        for (const entry of waiting) entry.reject(error);
      },
    );
  }
}
