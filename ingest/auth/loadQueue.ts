/** A credential load for a Connection key this edge holds a binding of, or for one it has never seen. */
export type LoadClass = 'known' | 'unknown';

export interface LoadQueueLimits {
  /** Loads running at once (at most the PostgreSQL pool's size, so that the pool never queues). */
  concurrency: number;
  /** Of those, loads for never-seen keys: the rest stay free for known connections. */
  unknownConcurrency: number;
  /** Loads waiting for a slot, per class; past it a load is refused. */
  maxWaiting: Record<LoadClass, number>;
}

/** The edge's bounds (docs/decisions/ingest.md "Authentication"); the pool has 4 connections. */
export const CREDENTIAL_LOAD_LIMITS: LoadQueueLimits = { concurrency: 4, unknownConcurrency: 2, maxWaiting: { known: 1000, unknown: 256 } };

/**
 * Credential loads of one edge process (issue 25, item 4): a bounded number run at once and wait,
 * known connections first, so that a flood of random well-formed keys neither queues without bound
 * on the pool nor delays the collectors whose binding needs a reload.
 */
export class LoadQueue {
  private readonly running: Record<LoadClass, number> = { known: 0, unknown: 0 };
  private readonly waiting: Record<LoadClass, (() => void)[]> = { known: [], unknown: [] };

  constructor(private readonly limits: LoadQueueLimits = CREDENTIAL_LOAD_LIMITS) {}

  /** Runs `load` when a slot is free; null (nothing started) when its class already has too many waiting. */
  run<T>(kind: LoadClass, load: () => Promise<T>): Promise<T> | null {
    if (this.free(kind)) {
      this.running[kind] += 1;
      return this.execute(kind, load);
    }
    const queue = this.waiting[kind];
    if (queue.length >= this.limits.maxWaiting[kind]) return null;
    // The slot is taken for the waiter when it is handed over (next), before it runs.
    return new Promise<void>((resolve) => queue.push(resolve)).then(() => this.execute(kind, load));
  }

  private async execute<T>(kind: LoadClass, load: () => Promise<T>): Promise<T> {
    try {
      return await load();
    } finally {
      this.running[kind] -= 1;
      this.next();
    }
  }

  private next(): void {
    for (const kind of ['known', 'unknown'] as const) {
      const queue = this.waiting[kind];
      while (queue.length > 0 && this.free(kind)) {
        this.running[kind] += 1;
        queue.shift()!();
      }
    }
  }

  private free(kind: LoadClass): boolean {
    const total = this.running.known + this.running.unknown;
    return total < this.limits.concurrency && (kind === 'known' || this.running.unknown < this.limits.unknownConcurrency);
  }
}
