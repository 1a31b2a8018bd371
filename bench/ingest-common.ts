import { resolve } from 'node:path';
// Shared pieces of the ingest benchmarks (issue 4) and the analyzer load driver: the bench stores
// and edge configuration, a realistic envelope, cheap signed batch bodies with fresh eventIds, the
// set-up of bench workspaces and Live collectors through the management domain code, per-process
// CPU accounting, and the load drivers' sender (closed and open loop over bench/rawHttp.ts).

import type { ChildProcess } from 'node:child_process';
import { createHmac, createSecretKey, randomBytes, type KeyObject } from 'node:crypto';
import { readFileSync, readdirSync, readlinkSync } from 'node:fs';
import pg from 'pg';
import { Redis } from 'ioredis';
import { migrateClickHouse } from '../shared/clickhouse/migrate.js';
import { migratePostgres } from '../shared/db/migrate.js';
import { createPool } from '../shared/db/pool.js';
import { loadConfig } from '../shared/config.js';
import { systemClock } from '../shared/clock.js';
import { connectRedis } from '../shared/redis.js';
import { bootstrap } from '../management/admin/bootstrap.js';
import { buildApp } from '../management/app.js';
import type { Deps } from '../management/deps.js';
import type { RawAnswer, RawHttpClient } from './rawHttp.js';

/**
 * The bench's own stores, apart from the product (`svc`) and the tests (`svc_test`, Redis db 1):
 * PostgreSQL `svc_bench` (created on first use), Redis database 3 (flushed by the load driver),
 * ClickHouse database `svc_bench`. BENCH_DATABASE_URL, BENCH_REDIS_URL, BENCH_CLICKHOUSE_URL and
 * BENCH_CLICKHOUSE_DATABASE override them.
 */
export const BENCH_STORES = {
  DATABASE_URL: process.env.BENCH_DATABASE_URL ?? 'postgres://svc:svc@127.0.0.1:5432/svc_bench',
  REDIS_URL: process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379/3',
  CLICKHOUSE_URL: process.env.BENCH_CLICKHOUSE_URL ?? 'http://127.0.0.1:8123',
  CLICKHOUSE_DATABASE: process.env.BENCH_CLICKHOUSE_DATABASE ?? 'svc_bench',
};

const UNLIMITED = '1000000000';

/**
 * Operator limits raised so they never bite (03 Limits are per-integration and per-workspace
 * budgets; the bench measures the edge, not the throttle), the real clock (the test clock costs a
 * Redis GET per request), and a short de-duplication window so the bench's millions of eventIds
 * leave Redis soon. The log and shipping settings (INGEST_WAL_*, INGEST_SHIP_*) and
 * INGEST_WORKER_THREADS are left at the product defaults unless set in the driver's environment.
 */
export function benchEdgeEnv(): Record<string, string> {
  const env: Record<string, string> = {
    ...BENCH_STORES,
    ENABLE_TEST_CLOCK: '0',
    LOG_LEVEL: 'info',
    INGEST_INTEGRATION_REQUESTS_PER_MIN: UNLIMITED,
    INGEST_INTEGRATION_OBSERVATIONS_PER_MIN: UNLIMITED,
    INGEST_WORKSPACE_OBSERVATIONS_PER_MIN: UNLIMITED,
    SANDBOX_ACCOUNT_ENVELOPES_PER_MIN: UNLIMITED,
    SANDBOX_ACCOUNT_REQUESTS_PER_MIN: UNLIMITED,
    SANDBOX_MONTHLY_ALLOWANCE: UNLIMITED,
    SANDBOX_QUOTA_ENFORCED: '0',
    INGEST_DEDUP_WINDOW_SECONDS: '900',
    // Not the folder of a product edge running beside the bench (one edge per folder).
    INGEST_WAL_DIR: resolve('.data/bench-ingest-wal'),
  };
  for (const name of [
    'INGEST_INSERT_TIMEOUT_MS',
    'INGEST_ADMISSION_DEADLINE_MS',
    'INGEST_WORKER_THREADS',
    'INGEST_DEDUP_WINDOW_SECONDS',
    'SECRET_ENCRYPTION_KEY',
    'DATA_DIR',
    'INGEST_WAL_DIR',
    'INGEST_WAL_SEGMENT_BYTES',
    'INGEST_WAL_MAX_BYTES',
    'INGEST_WAL_MAX_AGE_MS',
    'INGEST_WAL_PACE_BYTES',
    'INGEST_WAL_PACE_MAX_WAIT_MS',
    'INGEST_SHIP_MAX_BYTES',
    'INGEST_SHIP_INTERVAL_MS',
  ]) {
    const value = process.env[name];
    if (value !== undefined && value !== '') env[name] = value;
  }
  return env;
}

/** Creates the PostgreSQL bench database when missing, then applies both stores' migrations. */
export async function prepareBenchDatabases(): Promise<void> {
  const url = new URL(BENCH_STORES.DATABASE_URL);
  const name = url.pathname.slice(1);
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`unexpected bench database name ${name}`);
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    const exists = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (exists.rowCount === 0) await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
  await migratePostgres(BENCH_STORES.DATABASE_URL);
  await migrateClickHouse(BENCH_STORES.CLICKHOUSE_URL, BENCH_STORES.CLICKHOUSE_DATABASE);
}

export interface BenchCollector {
  workspaceId: string;
  /** An API key of the collector's workspace (all scopes), for management-plane calls. */
  apiKey: string;
  integrationKey: string;
  connectionKey: string;
  ingestToken: string;
  connectionId: string;
}

/** The management plane in-process on the bench stores (requests through `app.inject`). */
export interface BenchManagement {
  deps: Deps;
  app: Awaited<ReturnType<typeof buildApp>>;
  close(): Promise<void>;
}

export async function openBenchManagement(): Promise<BenchManagement> {
  const config = loadConfig({ ...process.env, ...benchEdgeEnv() });
  const pool = createPool(config.databaseUrl, 4);
  const redis = await connectRedis(config.redisUrl);
  const deps: Deps = { config, pool, redis, clock: systemClock };
  const app = await buildApp(deps);
  await app.ready();
  return {
    deps,
    app,
    async close() {
      await app.close();
      await pool.end();
      redis.disconnect();
    },
  };
}

/**
 * Bootstraps `workspaces` fresh workspaces (operator bootstrap, as `svc-admin bootstrap` does) and
 * creates `collectors` Live Integrations spread over them through POST /v1/integrations (the
 * route a user calls, served in-process with inject), returning each collectorConfiguration.
 */
export async function createBenchCollectors(workspaces: number, collectors: number): Promise<BenchCollector[]> {
  const management = await openBenchManagement();
  const { deps, app } = management;
  try {
    const runTag = randomBytes(4).toString('hex');
    const keys: { workspaceId: string; apiKey: string }[] = [];
    for (let w = 0; w < workspaces; w += 1) {
      const boot = await bootstrap(deps, { email: `bench-${runTag}-${w}@example.test`, workspace: `Bench ${runTag} ${w}` });
      keys.push({ workspaceId: boot.workspace.id, apiKey: boot.apiKey.key });
    }
    const created: BenchCollector[] = [];
    for (let c = 0; c < collectors; c += 1) {
      const { workspaceId, apiKey } = keys[c % keys.length];
      const res = await app.inject({
        method: 'POST',
        url: '/v1/integrations',
        headers: { authorization: `Bearer ${apiKey}`, 'idempotency-key': `bench-${runTag}-${c}` },
        payload: { mode: 'live', name: `Bench orders ${c}`, provider: 'Acme', direction: 'outbound', protocol: 'http-api' },
      });
      if (res.statusCode !== 201) throw new Error(`POST /v1/integrations answered ${res.statusCode}: ${res.body}`);
      const body = res.json() as {
        integration: { connectionId: string };
        collectorConfiguration: { integrationKey: string; connectionKey: string; ingestToken: string };
      };
      created.push({ workspaceId, apiKey, connectionId: body.integration.connectionId, ...body.collectorConfiguration });
    }
    return created;
  } finally {
    await management.close();
  }
}

/**
 * Flushes the bench Redis database (never the product's or the tests'), then has Redis rewrite
 * its append-only file if it keeps one, and waits for that. Redis rewrites the file on its own
 * each time it doubles, serialising the whole dataset (3 s of a core for the 250 MB of eventIds
 * a full-load minute leaves): starting every target from a rewritten file gives each the same
 * rewrites, instead of one falling on whichever target the file's size happened to reach.
 */
export async function flushBenchRedis(): Promise<void> {
  const redis = new Redis(BENCH_STORES.REDIS_URL);
  const persistence = async () => Object.fromEntries((await redis.info('persistence')).split('\r\n').map((line) => line.split(':')));
  try {
    await redis.flushdb('ASYNC');
    if ((await persistence()).aof_enabled !== '1') return;
    // Refused only while a rewrite is already running: then wait for that one.
    await redis.bgrewriteaof().catch(() => undefined);
    for (let waited = 0; waited < 60_000; waited += 200) {
      const state = await persistence();
      if (state.aof_rewrite_in_progress === '0' && state.aof_rewrite_scheduled === '0') return;
      await new Promise((done) => setTimeout(done, 200));
    }
  } finally {
    redis.disconnect();
  }
}

export const FINGERPRINT = `sha256:${'ab'.repeat(32)}`;

/** A realistic valid envelope (same shape as the tests' `envelope()`): ~750 bytes of JSON. */
export function benchEnvelope(integrationKey: string, eventId: string, occurredAt: string): Record<string, unknown> {
  return {
    envelopeVersion: '0.2',
    eventId,
    tenantId: 'ten_authenticated',
    environmentId: 'env_authenticated',
    integrationId: integrationKey,
    direction: 'outbound',
    protocol: 'http-api',
    occurredAt,
    operationIdentityVersion: '1',
    eventType: 'order.created',
    correlation: { sourceEventIdHash: 'hmac:1f2e3d', hashNamespace: 'orders' },
    contract: { observedFingerprint: FINGERPRINT },
    transport: {
      method: 'GET',
      routeTemplate: '/v1/orders/{orderId}',
      payloadLocation: 'response',
      statusCode: 200,
      durationMs: 42.5,
      attempt: 1,
    },
    payload: {
      storage: 'none',
      schemaFingerprint: FINGERPRINT,
      schemaShape: {
        kind: 'object',
        fields: { id: { kind: 'string' }, total: { kind: 'number' }, tags: { kind: 'array', items: { kind: 'string' } } },
      },
      redactionPolicyVersion: '2025-01',
    },
    outcome: { accepted: true, businessObjectType: 'order', businessObjectIdHash: 'hmac:9a8b7c' },
  };
}

export const ENVELOPES_PER_BATCH = 50;
/** Digits of the counter part of a bench eventId (fixed width, so a template slot can be overwritten in place). */
const COUNTER_DIGITS = 12;

/**
 * A pre-serialised `{"envelopes":[...]}` body of one collector with fixed-width eventId slots
 * `evt_<prefix><12-digit counter>`: `fill` copies it and writes fresh counters into the slots,
 * so a new unique batch costs one memcpy and 50 short writes instead of JSON.stringify.
 */
export class BatchTemplate {
  private readonly template: Buffer;
  private readonly slots: number[] = [];

  /**
   * `envelopeOf` builds the envelope at each position of the batch (default: `benchEnvelope`);
   * its eventId must be the `eventId` it is given (the slot the counter is written into).
   */
  constructor(
    integrationKey: string,
    readonly eventIdPrefix: string,
    occurredAt: string,
    readonly size = ENVELOPES_PER_BATCH,
    envelopeOf: (integrationKey: string, eventId: string, occurredAt: string, position: number) => Record<string, unknown> = benchEnvelope,
  ) {
    const marker = `evt_${eventIdPrefix}${'#'.repeat(COUNTER_DIGITS)}`;
    const envelopes = Array.from({ length: size }, (_, position) => envelopeOf(integrationKey, marker, occurredAt, position));
    this.template = Buffer.from(JSON.stringify({ envelopes }), 'latin1');
    const needle = Buffer.from(marker, 'latin1');
    for (let at = this.template.indexOf(needle); at !== -1; at = this.template.indexOf(needle, at + needle.length)) {
      this.slots.push(at + 4 + eventIdPrefix.length);
    }
    if (this.slots.length !== size) throw new Error('eventId slots not found in the template');
  }

  get byteLength(): number {
    return this.template.length;
  }

  /**
   * A fresh body whose eventIds carry the counters first, first + 1, ... first + size - 1, written
   * into `into` when given: a body this template filled before, whose request has completed, so
   * only its eventId slots differ from the template.
   */
  fill(first: number, into?: Buffer): Buffer {
    let body = into;
    if (body === undefined) {
      body = Buffer.allocUnsafe(this.template.length);
      this.template.copy(body);
    }
    for (let i = 0; i < this.slots.length; i += 1) {
      // The counter's decimal digits, right-aligned in the zero-padded slot.
      let value = first + i;
      for (let at = this.slots[i] + COUNTER_DIGITS - 1; at >= this.slots[i]; at -= 1) {
        body[at] = 48 + (value % 10);
        value = Math.floor(value / 10);
      }
    }
    return body;
  }
}

/** `X-Service-Signature` of 03: HMAC-SHA256 over `<t>.<exact body>` keyed with the ingest token. */
export function signature(key: KeyObject | string, body: Buffer, unixSeconds: number): string {
  const t = String(unixSeconds);
  return `t=${t},v1=${createHmac('sha256', key).update(t).update('.').update(body).digest('hex')}`;
}

export const tokenKey = (token: string): KeyObject => createSecretKey(Buffer.from(token, 'utf8'));

/** Pretty numbers for the printed tables. */
export const fmt = (value: number, digits = 0) =>
  value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });

// ------------------------------------------------------------------ CPU accounting (load drivers)

/** utime + stime of a process in seconds (Linux /proc; CLK_TCK 100). */
export function processCpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return NaN;
  }
}

/** The pid of the first process whose name starts with `prefix` (the stack's servers). */
export function findPid(prefix: string): number | null {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').startsWith(prefix)) return Number(entry);
    } catch {
      /* gone */
    }
  }
  return null;
}

/**
 * The pid of the process listening on TCP `port` of this machine (Linux /proc), or null. Finds
 * the bench's Redis and ClickHouse when other servers of the same name run beside them (the
 * cluster tests' shards and nodes).
 */
export function findListeningPid(port: number): number | null {
  const inodes = new Set<string>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    try {
      for (const line of readFileSync(table, 'utf8').split('\n').slice(1)) {
        const fields = line.trim().split(/\s+/);
        // local_address is <hex ip>:<hex port>; state 0A is LISTEN; the inode is the tenth field.
        if (fields.length > 9 && fields[3] === '0A' && parseInt(fields[1].split(':')[1], 16) === port) inodes.add(fields[9]);
      }
    } catch {
      /* no IPv6 */
    }
  }
  if (inodes.size === 0) return null;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      for (const fd of readdirSync(`/proc/${entry}/fd`)) {
        const socket = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${entry}/fd/${fd}`));
        if (socket && inodes.has(socket[1])) return Number(entry);
      }
    } catch {
      /* gone, or not ours to read */
    }
  }
  return null;
}

/** The pid of the server of a store URL (its port, or `defaultPort`), else the first process named `prefix`. */
export function storePid(url: string, defaultPort: number, prefix: string): number | null {
  return findListeningPid(Number(new URL(url).port || defaultPort)) ?? findPid(prefix);
}

/** CPU seconds of every process whose name starts with `prefix` (PostgreSQL's backends, say). */
export function processesCpuSeconds(prefix: string): number {
  let seconds = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').startsWith(prefix)) seconds += processCpuSeconds(Number(entry)) || 0;
    } catch {
      /* gone */
    }
  }
  return seconds;
}

/**
 * Busy and total CPU time of the whole machine (seconds, all cores), and the part of the busy time
 * spent in interrupts (irq + softirq: loopback TCP's receive path, which no process's counters hold).
 */
export function machineCpu(): { busy: number; total: number; interrupts: number } {
  const line = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  const total = line.reduce((sum, value) => sum + value, 0) / 100;
  const idle = (line[3] + line[4]) / 100;
  return { busy: total - idle, total, interrupts: (line[5] + line[6]) / 100 };
}

// ------------------------------------------------------------------ load generation (the load drivers' sender)

export interface Sender {
  collector: BenchCollector;
  key: KeyObject;
  template: BatchTemplate;
  /** The request's head up to the signature header's value (see LoadGenerator.post). */
  headPrefix: string;
  /** Bodies of this sender's completed requests, for reuse. */
  spareBodies: Buffer[];
}

export function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

export const SLICE_MS = Number(process.env.BENCH_SLICE_MS ?? 10_000);

export class Recorder {
  private latencies = new Float64Array(1 << 16);
  private count = 0;
  private slices: number[][] = [];
  requests = 0;
  completedInWindow = 0;
  accepted202 = 0;
  acceptedInWindow = 0;
  statuses: Record<string, number> = {};
  errorSample: string | undefined;

  constructor(private readonly phaseStart = performance.now()) {}

  record(latencyMs: number, status: string, inWindow: boolean, sentAt: number): void {
    const slice = Math.max(0, Math.floor((sentAt - this.phaseStart) / SLICE_MS));
    this.slices[slice] ??= [];
    this.slices[slice].push(latencyMs);
    if (this.count === this.latencies.length) {
      const grown = new Float64Array(this.latencies.length * 2);
      grown.set(this.latencies);
      this.latencies = grown;
    }
    this.latencies[this.count++] = latencyMs;
    this.requests += 1;
    this.statuses[status] = (this.statuses[status] ?? 0) + 1;
    if (inWindow) this.completedInWindow += 1;
    if (status === '202') {
      this.accepted202 += 1;
      if (inWindow) this.acceptedInWindow += 1;
    }
  }

  latency() {
    const sorted = this.latencies.slice(0, this.count).sort();
    let sum = 0;
    for (const value of sorted) sum += value;
    return {
      p50: percentile(sorted, 50),
      p90: percentile(sorted, 90),
      p99: percentile(sorted, 99),
      max: sorted.length ? sorted[sorted.length - 1] : NaN,
      mean: sorted.length ? sum / sorted.length : NaN,
    };
  }

  p99BySlice(): number[] {
    return Array.from(this.slices, (slice) => percentile(Float64Array.from(slice ?? []).sort(), 99));
  }
}

export class LoadGenerator {
  private next = 0;
  private counter = 0;
  /** Every 202 of this target, warm-up included: must equal its rows in ClickHouse. */
  totalAccepted202 = 0;
  /** The envelopes of those 202s (the senders' templates may differ in size from ENVELOPES_PER_BATCH). */
  totalAccepted202Envelopes = 0;

  constructor(
    private readonly client: RawHttpClient,
    private readonly senders: Sender[],
  ) {}

  /** Envelopes per batch of this generator (its first sender's template). */
  get batchSize(): number {
    return this.senders[0].template.size;
  }

  /**
   * Sends one fresh signed batch of `sender` (default: the senders in turn); resolves with the
   * status ('202', '503', 'error:ECONNRESET', ...).
   */
  async send(recorder: Recorder | null, startedAt: number, windowEnd: number, sender = this.nextSender()): Promise<void> {
    // Bodies are reused once their request completed: the driver shares the cores with the
    // server under test, and a new 50 KB buffer per request kept its garbage collector busy.
    const body = sender.template.fill(this.counter, sender.spareBodies.pop());
    this.counter += sender.template.size;
    let status: string;
    try {
      const answer = await this.post(sender, body);
      status = String(answer.status);
      // Answered, so the body was sent whole; after an error it might still be in a write.
      sender.spareBodies.push(body);
      if (answer.status === 202) {
        this.totalAccepted202 += 1;
        this.totalAccepted202Envelopes += sender.template.size;
      } else if (recorder && recorder.errorSample === undefined) recorder.errorSample = `${status} ${answer.text.slice(0, 300)}`;
    } catch (error) {
      status = `error:${(error as { code?: string }).code ?? (error as Error).message}`;
      if (recorder && recorder.errorSample === undefined) recorder.errorSample = `${status} ${(error as Error).message}`;
    }
    const done = performance.now();
    recorder?.record(done - startedAt, status, done <= windowEnd, startedAt);
  }

  private nextSender(): Sender {
    const sender = this.senders[this.next];
    this.next = (this.next + 1) % this.senders.length;
    return sender;
  }

  /**
   * POST /ingest on a keep-alive connection of the raw client (the driver shares the 2 cores with
   * the server under test). The body of a 202 is discarded unread.
   */
  private post(sender: Sender, body: Buffer): Promise<RawAnswer> {
    const head = `${sender.headPrefix}${signature(sender.key, body, Math.floor(Date.now() / 1000))}\r\ncontent-length: ${body.length}\r\n\r\n`;
    return this.client.request(head, body);
  }

  /** Closed loop: `concurrency` requests always in flight until `seconds` have passed. */
  async closedLoop(concurrency: number, seconds: number, recorder: Recorder | null): Promise<number> {
    const started = performance.now();
    const end = started + seconds * 1000;
    const worker = async () => {
      while (performance.now() < end) await this.send(recorder, performance.now(), end);
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
    return (end - started) / 1000;
  }

  /**
   * Closed loop of collectors: every sender is one collector with exactly one batch in flight,
   * sending its next batch as soon as the previous one is answered (`wrk -c<senders>` over
   * pre-signed unique batches), until `seconds` have passed. The client needs a connection per sender.
   */
  async collectorLoop(seconds: number, recorder: Recorder | null): Promise<number> {
    const started = performance.now();
    const end = started + seconds * 1000;
    const collector = async (sender: Sender) => {
      while (performance.now() < end) await this.send(recorder, performance.now(), end, sender);
    };
    await Promise.all(this.senders.map(collector));
    return (end - started) / 1000;
  }

  /**
   * Open loop: one batch every 1 / (rate / batchSize) seconds on a fixed schedule, whatever the answers
   * take; latency is measured from the scheduled time. At most `maxOutstanding` requests are
   * outstanding (queued in the pool or in flight); a send due beyond that is skipped and counted.
   */
  async openLoop(rate: number, seconds: number, maxOutstanding: number, recorder: Recorder): Promise<{ seconds: number; skipped: number }> {
    const intervalMs = 1000 / (rate / this.batchSize);
    const started = performance.now();
    const end = started + seconds * 1000;
    const total = Math.floor((seconds * 1000) / intervalMs);
    let issued = 0;
    let outstanding = 0;
    let skipped = 0;
    const inFlight = new Set<Promise<void>>();
    await new Promise<void>((resolveLoop) => {
      const tick = () => {
        const now = performance.now();
        while (issued < total && started + issued * intervalMs <= now) {
          const scheduled = started + issued * intervalMs;
          issued += 1;
          if (outstanding >= maxOutstanding) {
            skipped += 1;
            continue;
          }
          outstanding += 1;
          const promise = this.send(recorder, scheduled, end + 60_000).finally(() => {
            outstanding -= 1;
            inFlight.delete(promise);
          });
          inFlight.add(promise);
        }
        if (issued >= total) return resolveLoop();
        const wait = started + issued * intervalMs - performance.now();
        setTimeout(tick, Math.max(0, Math.min(wait, 5)));
      };
      tick();
    });
    await Promise.all(inFlight);
    return { seconds: (performance.now() - started) / 1000, skipped };
  }
}

/** Stops a server process the driver spawned: SIGTERM, then SIGKILL if it has not exited in 20 s. */
export async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolveExit) => child.once('exit', () => resolveExit()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
  await exited;
  clearTimeout(timer);
}
