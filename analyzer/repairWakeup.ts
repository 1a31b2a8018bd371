import type pg from 'pg';

/** The channel the management plane notifies after it queues a repair proposal. */
export const REPAIR_CHANNEL = 'repair_proposals';

/**
 * Wakes the repair loop when a proposal is queued (PostgreSQL LISTEN on one dedicated
 * connection), so a request is picked up at once rather than at the next poll. Best effort: a
 * lost connection or notification only delays the work to the next poll, which always runs.
 */
export class RepairWakeup {
  private client: pg.PoolClient | null = null;
  private waiting: (() => void) | null = null;
  private pending = false;

  constructor(private readonly pool: pg.Pool) {}

  async start(): Promise<void> {
    try {
      const client = await this.pool.connect();
      client.on('notification', () => this.wake());
      client.on('error', () => this.drop());
      await client.query(`LISTEN ${REPAIR_CHANNEL}`);
      this.client = client;
    } catch {
      this.drop();
    }
  }

  /** Resolves after `ms`, or sooner when a proposal is queued (or was since the last wait). */
  wait(ms: number, stopped: AbortSignal): Promise<void> {
    if (this.pending) {
      this.pending = false;
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        stopped.removeEventListener('abort', done);
        this.waiting = null;
        resolve();
      };
      const timer = setTimeout(done, ms);
      stopped.addEventListener('abort', done, { once: true });
      this.waiting = done;
    });
  }

  stop(): void {
    this.waiting?.();
    this.drop();
  }

  private wake(): void {
    if (this.waiting) this.waiting();
    else this.pending = true;
  }

  private drop(): void {
    const client = this.client;
    this.client = null;
    client?.release(true);
  }
}
