import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

export type EnvelopeResult = 'accepted' | 'rejected' | 'duplicate';

/** The edge's Prometheus metrics (issue 4 item 7). Label children are resolved once per value. */
export class IngestMetrics {
  private readonly requests: Counter<'route' | 'status'>;
  private readonly envelopes: Counter<'result'>;
  private readonly requestChildren = new Map<string, Counter.Internal>();
  readonly envelopeCounts: Record<EnvelopeResult, Counter.Internal>;
  readonly requestSeconds: Histogram<'route'>;
  readonly admissionSeconds: Histogram;
  readonly insertSeconds: Histogram;
  readonly groupCommitRows: Histogram;
  readonly insertFailures: Counter;
  readonly admissionReleases: Counter<'outcome'>;
  readonly admissionsSettled: Counter<'outcome'>;
  readonly analysisEnqueueFailures: Counter;
  readonly analysisBacklog: Gauge;
  readonly credentialLoads: Counter;
  readonly queuedRows: Gauge;
  /** Read when /metrics is scraped; the pipeline points it at its shared slots. */
  slotsInUse: () => number = () => 0;

  constructor(registry: Registry) {
    const registers = [registry];
    this.requests = new Counter({ name: 'ingest_requests_total', help: 'Ingest edge requests by route and HTTP status', labelNames: ['route', 'status'], registers });
    this.envelopes = new Counter({ name: 'ingest_envelopes_total', help: 'Envelopes by result (accepted and persisted, rejected, duplicate)', labelNames: ['result'], registers });
    this.envelopeCounts = {
      accepted: this.envelopes.labels('accepted'),
      rejected: this.envelopes.labels('rejected'),
      duplicate: this.envelopes.labels('duplicate'),
    };
    this.requestSeconds = new Histogram({
      name: 'ingest_request_duration_seconds', help: 'Time from a complete request body to the answer', labelNames: ['route'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.25, 0.5, 1, 2.5, 5], registers,
    });
    this.admissionSeconds = new Histogram({
      name: 'ingest_admission_duration_seconds', help: 'Duration of the admission script call',
      buckets: [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1], registers,
    });
    this.insertSeconds = new Histogram({
      name: 'ingest_insert_duration_seconds', help: 'Duration of a group-commit ClickHouse insert',
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10], registers,
    });
    this.groupCommitRows = new Histogram({
      name: 'ingest_group_commit_rows', help: 'Rows per group-commit insert',
      buckets: [1, 10, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 25000, 50000], registers,
    });
    this.insertFailures = new Counter({ name: 'ingest_insert_failures_total', help: 'Group-commit inserts that failed or timed out', registers });
    this.admissionReleases = new Counter({ name: 'ingest_admission_releases_total', help: 'Admissions released after a failed insert, by outcome', labelNames: ['outcome'], registers });
    this.admissionsSettled = new Counter({
      name: 'ingest_admissions_settled_total', labelNames: ['outcome'], registers,
      help: 'Batches whose outcome their process never reported, settled from ClickHouse: kept (written), released (not written), postponed (an insert of theirs still ran), failed (a store did not answer)',
    });
    this.analysisEnqueueFailures = new Counter({ name: 'ingest_analysis_enqueue_failures_total', help: 'Analysis jobs that could not be added after their rows committed (retried in process)', registers });
    this.analysisBacklog = new Gauge({ name: 'ingest_analysis_enqueue_backlog', help: 'Committed batches whose analysis job waits for a retry', registers });
    this.credentialLoads = new Counter({ name: 'ingest_credential_loads_total', help: 'Credential bindings read from PostgreSQL', registers });
    this.queuedRows = new Gauge({ name: 'ingest_group_commit_queued_rows', help: 'Rows waiting for a group-commit insert', registers });
    const slotsInUse = () => this.slotsInUse();
    new Gauge({
      name: 'ingest_shared_slots_in_use', help: 'Shared memory slots holding a request body or rows (INGEST_SHARED_SLOTS)', registers,
      collect() { this.set(slotsInUse()); },
    });
  }

  request(route: string, status: number): void {
    const id = `${route} ${status}`;
    let child = this.requestChildren.get(id);
    if (!child) {
      child = this.requests.labels(route, String(status));
      this.requestChildren.set(id, child);
    }
    child.inc();
  }
}
