import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { CredentialLoadResult } from './credential.js';

export type EnvelopeResult = 'accepted' | 'rejected' | 'duplicate';

/** The edge's Prometheus metrics (issue 4 item 7). Label children are resolved once per value. */
export class IngestMetrics {
  private readonly requests: Counter<'route' | 'status'>;
  private readonly envelopes: Counter<'result'>;
  private readonly requestChildren = new Map<string, Counter.Internal>();
  readonly envelopeCounts: Record<EnvelopeResult, Counter.Internal>;
  readonly requestSeconds: Histogram<'route'>;
  readonly admissionSeconds: Histogram;
  /** The other stages of an accepted batch, by name (see BatchIntake.ingest). */
  readonly stageSeconds: Record<'check' | 'log' | 'commit', Histogram.Internal<'stage'>>;
  readonly insertSeconds: Histogram;
  readonly insertRows: Histogram;
  readonly insertFailures: Counter;
  readonly admissionsSettled: Counter<'outcome'>;
  readonly credentialLoads: Record<CredentialLoadResult, Counter.Internal>;
  /** Read when /metrics is scraped; the pipeline points it at its shared slots. */
  slotsInUse: () => number = () => 0;

  constructor(registry: Registry) {
    const registers = [registry];
    this.requests = new Counter({
      name: 'ingest_requests_total',
      help: 'Ingest edge requests by route and HTTP status',
      labelNames: ['route', 'status'],
      registers,
    });
    this.envelopes = new Counter({
      name: 'ingest_envelopes_total',
      help: 'Envelopes by result (accepted and persisted, rejected, duplicate)',
      labelNames: ['result'],
      registers,
    });
    this.envelopeCounts = {
      accepted: this.envelopes.labels('accepted'),
      rejected: this.envelopes.labels('rejected'),
      duplicate: this.envelopes.labels('duplicate'),
    };
    this.requestSeconds = new Histogram({
      name: 'ingest_request_duration_seconds',
      help: 'Time from a complete request body to the answer',
      labelNames: ['route'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.25, 0.5, 1, 2.5, 5],
      registers,
    });
    this.admissionSeconds = new Histogram({
      name: 'ingest_admission_duration_seconds',
      help: 'Duration of the admission script call',
      buckets: [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1],
      registers,
    });
    const stages = new Histogram({
      name: 'ingest_stage_duration_seconds',
      labelNames: ['stage'],
      registers,
      help: 'Stages of a batch besides admission: check (parse, validate, rows; on a worker thread or in place), log (append until durable), commit (DURABLE)',
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1],
    });
    this.stageSeconds = { check: stages.labels('check'), log: stages.labels('log'), commit: stages.labels('commit') };
    this.insertSeconds = new Histogram({
      name: 'ingest_insert_duration_seconds',
      help: 'Duration of a ClickHouse insert of the log shipper',
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    });
    this.insertRows = new Histogram({
      name: 'ingest_insert_rows',
      help: 'Rows per ClickHouse insert of the log shipper',
      buckets: [1, 10, 100, 1000, 10000, 50000, 100000, 250000, 500000, 1000000],
      registers,
    });
    this.insertFailures = new Counter({
      name: 'ingest_insert_failures_total',
      help: 'Shipping rounds that failed (retried from the log)',
      registers,
    });
    this.admissionsSettled = new Counter({
      name: 'ingest_admissions_settled_total',
      labelNames: ['outcome'],
      registers,
      help: 'Admitted batches never made durable, settled after their deadline: released, or failed (Redis did not answer)',
    });
    const loads = new Counter({
      name: 'ingest_credential_loads_total',
      labelNames: ['result'],
      registers,
      help: 'Credential loads by result: found (a binding read from PostgreSQL), unknown (no connection has the key), failed (a store failed), shed (not read: too many loads waiting, answered 503)',
    });
    this.credentialLoads = {
      found: loads.labels('found'),
      unknown: loads.labels('unknown'),
      failed: loads.labels('failed'),
      shed: loads.labels('shed'),
    };
    const slotsInUse = () => this.slotsInUse();
    new Gauge({
      name: 'ingest_shared_slots_in_use',
      help: 'Shared memory slots holding a request body or rows (INGEST_SHARED_SLOTS)',
      registers,
      collect() {
        this.set(slotsInUse());
      },
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
