// Public types of the collector (document 03: "Observation envelope (ingestion)", "Ingestion",
// "Collector-side signals"; 00-decisions §5 for the shape kinds).

export type Direction = 'inbound' | 'outbound';
export type Protocol = 'http-api' | 'http-webhook' | 'queue' | 'scheduled-feed';
export type PayloadLocation = 'request' | 'response' | 'message';

/** 00-decisions §5: a payload's structure, never its values. */
export type SchemaShape =
  | { kind: 'object'; fields: Record<string, SchemaShape> }
  | { kind: 'array'; items?: SchemaShape }
  | { kind: 'string' | 'number' | 'integer' | 'boolean' | 'null' };

export interface CollectorOptions {
  /** Base URL of the ingest edge, e.g. `http://127.0.0.1:8080` (POST `<endpoint>/ingest`). */
  endpoint: string;
  /** The three values of the collector configuration the service returned once. */
  integrationKey: string;
  connectionKey: string;
  ingestToken: string;
  /** The Integration's direction and protocol (03: one batch is bound to both). */
  direction: Direction;
  protocol: Protocol;
  /**
   * Key of the keyed hashes (HMAC-SHA256) of correlation and business object ids: private to the
   * sender, never sent. Give the same key to every process whose hashes must match; without it a
   * random key per process is used.
   */
  hashKey?: string | Uint8Array;
  /** Names the hashing scheme in `correlation.hashNamespace` (default `default`); the library appends its version. */
  hashNamespace?: string;
  /** Envelopes per batch, 1–50 (default 50). */
  maxBatchSize?: number;
  /** Uploads in flight at once, 1–16 (default 4); the edge answers once a batch is durable. */
  maxConcurrentUploads?: number;
  /** Flush interval of a partial batch (default 1,000 ms). */
  flushIntervalMs?: number;
  /** Observations queued before the oldest is dropped (default 10,000). */
  maxQueueSize?: number;
  /** Bytes of queued envelopes before the oldest are dropped (default 64 MiB, at least 1 MiB). */
  maxQueueBytes?: number;
  /** Bodies larger than this are not inspected (default 256 KiB). */
  maxInspectedBodyBytes?: number;
  /** Bounds of the shape tree (defaults: depth 32, 500 fields per object, 64 array items examined). */
  shapeLimits?: { maxDepth?: number; maxFields?: number; maxArrayItems?: number };
  /** Backoff of retried deliveries (defaults: 500 ms doubling up to 30 s; Retry-After capped at 300 s). */
  retry?: { initialDelayMs?: number; maxDelayMs?: number; maxRetryAfterMs?: number };
  /** Timeout of one upload (default 10 s). */
  requestTimeoutMs?: number;
  /** Sent as `payload.redactionPolicyVersion` (default `collector-1`). */
  redactionPolicyVersion?: string;
  /** Called once with the result of the start-up connection check (never throws into the host). */
  onConnectionCheck?: (result: ConnectionCheckResult) => void;
  /**
   * Observations built per minute at most: past it, in any 60 seconds, an observation is counted
   * in `throttled` and nothing of it is read; delivery sends no more than this per 60 seconds
   * either. Default: the edge's budget for the connection, from the connection check (document 03
   * Limits: 6,000 per Integration, 1,000 for a Sandbox account), 6,000 until it answers. 0 lifts
   * the budget (for an edge whose operator raised the limits).
   */
  maxObservationsPerMinute?: number;
  /**
   * Uploads per minute at most (any 60 seconds): past it, batches wait in the queue. Default: the
   * edge's for the connection, from the connection check (600 per Integration, 100 for a Sandbox
   * account), 600 until it answers. 0 lifts it.
   */
  maxRequestsPerMinute?: number;
  /**
   * The collector's "now" in milliseconds since the epoch (default `Date.now`): the budget windows,
   * signature timestamps and the monthly quota's reset are read on it. For tests that move the
   * edge's clock (a test clock); timers still run in real time.
   */
  clock?: () => number;
  /**
   * Skip the start-up connection check (tests, short-lived scripts); no route templates are then
   * learned from the contract either.
   */
  connectionCheck?: boolean;
  /**
   * How often the connection check is repeated to learn a newly activated contract's route
   * templates (HTTP collectors only): default 60,000 ms, at least 1,000; 0 never repeats it.
   * Each check counts in the edge's per-connection budget of checks (60 per minute by default).
   */
  contractRefreshIntervalMs?: number;
}

export interface ConnectionCheckResult {
  ok: boolean;
  /** HTTP status, or 0 when no response arrived. */
  status: number;
  /** The edge's JSON answer when there was one. */
  body?: unknown;
  /** What went wrong, in words, when `ok` is false. */
  error?: string;
}

/** What an observed body was: parsed JSON, raw bytes for the library to parse, or not inspected. */
export type ObservedBody =
  | { json: unknown }
  | { raw: string | Uint8Array; contentType?: string }
  | { notInspected: 'not-json' | 'too-large' | 'stream' | 'absent' | 'error' };

export interface Observation {
  /** HTTP verb; queue and feed operations use `POST` (03 transport table). Default `POST`. */
  method?: string;
  /** Stable, low-cardinality path or label; never ids, timestamps or query strings. */
  routeTemplate: string;
  /** Default: `response` for http-api, `message` otherwise. */
  payloadLocation?: PayloadLocation;
  /** 0 when an outbound attempt got no protocol response; else 100–599. */
  statusCode: number;
  durationMs: number;
  /** Delivery attempt number, 1 for the first (default 1). */
  attempt?: number;
  /** Default: the routeTemplate for webhooks, queues and feeds; `<method>.<payloadLocation>` for HTTP APIs (spaces never). */
  eventType?: string;
  occurredAt?: Date | number;
  body?: ObservedBody;
  /** Raw ids: only their keyed hashes leave the process. */
  correlation?: { sourceEventId?: string; idempotencyKey?: string };
  outcome?: { accepted?: boolean; businessObjectType?: string; businessObjectId?: string };
  /** Fingerprint of the contract the caller believes applies (`contract.observedFingerprint`), if any. */
  contractFingerprint?: string;
}

/** 03 "Collector-side signals", plus what was sent. */
export interface CollectorCounters {
  /** Observations accepted into the queue. */
  observed: number;
  /** Envelopes the edge accepted (202, or accepted items of a 207). */
  delivered: number;
  /** Retryable delivery failures (5xx, 409, 429, network, timeout). */
  failedBatches: number;
  /** Envelopes permanently rejected (400, 401, 403, 404, rejected items of a 207, quota). */
  rejected: number;
  /** Observations dropped by the bounded queue (oldest first) or discarded after a quota rejection. */
  dropped: number;
  /** Observations the library could not turn into a valid envelope. */
  buildErrors: number;
  /** Bodies not inspected (not JSON, too large, a stream, absent, unreadable). */
  skippedInspections: number;
  /** Bodies being read right now (live gauge). */
  pendingInspections: number;
  /** Monthly quota rejections (also counted in `rejected`). */
  quotaRejected: number;
  /** Unix seconds of the UTC quota reset while a quota pause is active, else 0. */
  quotaResetAtSeconds: number;
  /**
   * Observations not built because the observation budget was spent (`maxObservationsPerMinute`):
   * the edge would have refused them (429). Additive field of this library.
   */
  throttled: number;
  /**
   * HTTP status of the start-up connection check (`GET /v1/collector/connection`): 0 when no
   * answer arrived, -1 while it runs or when it is skipped (`connectionCheck: false`).
   * Additive field of this library (always present in its snapshots).
   */
  connectionStatus?: number;
  /**
   * What delivery is doing: `running`; `backoff` (waiting to retry a batch); `quota-paused`
   * (until `quotaResetAtSeconds`); `unauthenticated` (stopped for good after a 401);
   * `closed`; `misconfigured` (invalid options: nothing is ever sent). Additive field of this
   * library (always present in its snapshots).
   */
  deliveryState?: 'running' | 'backoff' | 'quota-paused' | 'unauthenticated' | 'closed' | 'misconfigured';
  /**
   * The active contract version whose route templates the instrumentation uses, from the last
   * successful connection check; absent while none is known. Additive field of this library.
   */
  contractVersionId?: string;
}

export interface Collector {
  /** Queues one observation (unless the budget is spent, see `throttled`). Never throws. */
  observe(observation: Observation): void;
  /**
   * For instrumentation that must decide before it captures anything: whether an operation
   * starting now will be observed. True takes its place in the budget; then record it with
   * `observeAdmitted`. False is already counted (`throttled`, `dropped` or `rejected`). Never throws.
   */
  admit(): boolean;
  /** Queues an observation `admit()` let in. Never throws. */
  observeAdmitted(observation: Observation): void;
  /** Sends what is queued now; resolves when done, or when delivery backs off, waits for the edge's windows or is paused. Never rejects. */
  flush(): Promise<void>;
  /** Flushes what it can within `timeoutMs` (default 5,000), then stops for good. Never rejects. */
  close(timeoutMs?: number): Promise<void>;
  /** A snapshot of the counters. */
  counters(): CollectorCounters;
  /** Marks a body inspection in progress (`pendingInspections`); call the returned function once done. */
  beginInspection(): () => void;
  /**
   * The active contract's route template for a concrete path (no query) of a call with this verb,
   * e.g. `/models/{model}` for `GET /v1/models/gpt-4o`; undefined when none matches or none was
   * learned. Never throws.
   */
  learnedRoute?(method: string, path: string): string | undefined;
  /** Whether a URL is the collector's own endpoint (instrumentation must not observe its uploads). */
  isOwnRequest(url: string | URL): boolean;
  /** The options' direction and protocol (instrumentation helpers read them). */
  readonly direction: Direction;
  readonly protocol: Protocol;
}
