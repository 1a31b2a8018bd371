import type { AnalysisJob } from '../shared/redis.js';
import type { Admission } from './admission.js';
import type { IngestMetrics } from './metrics.js';

/**
 * Committed batches whose COMMIT call (committed marker + analysis job) failed after their rows
 * were durable. The request was still answered 202; this queue retries the call every second
 * until Redis takes it, bounded so an outage cannot exhaust memory. A job dropped here (overflow,
 * or the process stopping during an outage) is counted in `ingest_analysis_enqueue_failures_total`;
 * its rows carry `batch_id` and `received_at_ms`, from which the analyzer can catch up.
 */
export class CommitRetryQueue {
  private items: AnalysisJob[] = [];
  private timer: NodeJS.Timeout | null = null;
  private running = false;

  constructor(private readonly admission: Admission, private readonly metrics: IngestMetrics, private readonly maxItems = 10_000) {}

  add(job: AnalysisJob): void {
    this.metrics.analysisEnqueueFailures.inc();
    if (this.items.length >= this.maxItems) this.items.shift();
    this.items.push(job);
    this.metrics.analysisBacklog.set(this.items.length);
    this.schedule();
  }

  get size(): number {
    return this.items.length;
  }

  private schedule(): void {
    if (this.timer !== null || this.items.length === 0) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.flush().then(() => this.schedule());
    }, 1_000);
    this.timer.unref();
  }

  /** Tries every waiting call once, keeping the ones that fail again. */
  async flush(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      const waiting = this.items;
      this.items = [];
      for (const job of waiting) {
        const added = await this.admission.commit(job).catch(() => null);
        if (added !== true) this.items.push(job);
      }
      this.metrics.analysisBacklog.set(this.items.length);
    } finally {
      this.running = false;
    }
  }

  stop(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }
}
