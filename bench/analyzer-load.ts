// Analyzer load benchmark (analyzer issue): signed envelopes through the real ingest edge, analysed
// by the real analyzer process (`node dist/analyzer/main.js`, 2 Piscina worker threads), on the
// bench stores. Run from the project root:
//
//   npm run bench:analyzer-load
//   node dist/bench/analyzer-load.js [--duration 60] [--rate 25000] [--backlog 200000] [--warmup 3]
//        [--skip-backlog] [--skip-sustained] [--collectors 12] [--workspaces 3] [--keep-data] [--json FILE]
//        [--analyzer-log FILE] [--no-analyzer]
//
// The analyzer runs as its own process from dist/analyzer/main.js, which `npm run bench:build`
// does not compile (no benchmark imports it): the npm script runs `npm run build` first, and the
// driver warns when a dist/analyzer file is older than its source.
//
// Set-up: bench databases migrated, bench Redis flushed and `svc_bench.observations` truncated,
// `--collectors` Live Integrations created (as ingest-load.ts does), and each given an active
// contract (OpenAPI 3.0, `GET /v1/orders/{orderId}` 200 with a 20-property object) registered and
// activated through the management plane in-process; the reanalysis jobs the activations leave
// in the outbox are run before any envelope is sent, so live analysis counts every batch.
// Every batch carries 50 envelopes of 20 distinct shapes (position % 20), 5 of which drift from
// the contract: 10 drifted envelopes per batch.
//
// Phase A "memoised backlog": `--backlog` envelopes sent with no analyzer running, then the
// analyzer started and timed until the stream is drained (XLEN 0 and XPENDING 0); the incidents'
// affectedRecords must add up to the drifted envelopes answered 202.
// Phase B "sustained": a fresh analyzer process (its lag Summary holds only this phase), a
// `--warmup` at the rate, then `--rate` envelopes/s open loop for `--duration` seconds: edge
// latency from the scheduled send time, the analyzer's lag quantiles at load end, the exact
// per-batch lag to the start of its analysis, and the time from load end to a drained stream.
// See bench/README.md "Analyzer load".

import type { ChildProcess } from 'node:child_process';
import { appendFileSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createClient, type ClickHouseClient } from '@clickhouse/client';
import { Redis } from 'ioredis';
import { sqlLiteral } from '../shared/clickhouse/escape.js';
import { createPool } from '../shared/db/pool.js';
import { ANALYSIS_CONSUMER_GROUP, RedisKeys } from '../shared/redis.js';
import {
  BENCH_STORES,
  BatchTemplate,
  ENVELOPES_PER_BATCH,
  LoadGenerator,
  Recorder,
  benchEdgeEnv,
  createBenchCollectors,
  findPid,
  flushBenchRedis,
  fmt,
  machineCpu,
  percentile,
  prepareBenchDatabases,
  processCpuSeconds,
  stopChild,
  tokenKey,
  type BenchCollector,
  type Sender,
} from './ingest-common.js';
import { RawHttpClient } from './rawHttp.js';
import { freePort, parseArgs, spawnNode } from './benchProcess.js';
import { DRIFTED_PER_BATCH, DRIFTING, SHAPES, giveContracts, shapedEnvelope } from './orders-contract.js';

// ------------------------------------------------------------------ options

const args = parseArgs(process.argv.slice(2));
const KNOWN = [
  'duration',
  'rate',
  'backlog',
  'warmup',
  'skip-backlog',
  'skip-sustained',
  'no-analyzer',
  'collectors',
  'workspaces',
  'keep-data',
  'json',
  'analyzer-log',
];
for (const name of args.keys())
  if (!KNOWN.includes(name)) throw new Error(`unknown option --${name} (known: ${KNOWN.map((k) => `--${k}`).join(' ')})`);
const num = (name: string, fallback: number, allowZero = false) => {
  const raw = args.get(name);
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0 || (value === 0 && !allowZero))
    throw new Error(`--${name} must be a positive number, got ${raw}`);
  return value;
};
const options = {
  durationS: num('duration', 60),
  rate: num('rate', 25_000),
  backlog: num('backlog', 200_000),
  warmupS: num('warmup', 3, true),
  skipBacklog: args.has('skip-backlog'),
  skipSustained: args.has('skip-sustained'),
  /** Phase B with no analyzer process: the edge's latency under the same load, for comparison. */
  noAnalyzer: args.has('no-analyzer'),
  collectors: num('collectors', 12),
  workspaces: num('workspaces', 3),
  keepData: args.has('keep-data'),
  json: args.get('json'),
  /** A file that receives the analyzer processes' stderr (the driver only counts its error lines). */
  analyzerLog: args.get('analyzer-log'),
};
const ANALYZER_THREADS = process.env.ANALYZER_WORKER_THREADS ?? '2';
/** Phase A sends its backlog with this many requests in flight (closed loop). */
const BACKLOG_CONCURRENCY = 64;
/** Open loop: connections of the raw client, and sends skipped beyond this many outstanding. */
const CONNECTIONS = 128;
const MAX_OUTSTANDING = 1024;
const TARGETS = { lagP99S: 2, edgeP99Ms: 150, drainS: 5 };

// ------------------------------------------------------------------ processes

const here = dirname(fileURLToPath(import.meta.url));
const CORES = cpus().length;
async function startEdge(): Promise<{ child: ChildProcess; port: number }> {
  const env = { ...process.env, ...benchEdgeEnv(), INGEST_HOST: '127.0.0.1', INGEST_PORT: '0' };
  const { child, line } = await spawnNode('edge', [resolve(here, 'ingest-target.js'), 'edge'], env, /^\{"ready"/);
  return { child, port: (JSON.parse(line) as { port: number }).port };
}

interface RunningAnalyzer {
  child: ChildProcess;
  port: number;
  spawnedAt: number;
  readyAt: number;
  /** The analyzer's own error lines (`analyzer <loop>: <message>`) by text, and the ClickHouse client's error reports. */
  errors: Map<string, number>;
}

/**
 * Counts what the analyzer writes on stderr instead of echoing it (under overload the ClickHouse
 * client reports every timed-out read in 15 lines); `--analyzer-log FILE` keeps the whole text.
 */
function watchAnalyzerErrors(child: ChildProcess, errors: Map<string, number>): void {
  let pending = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    if (options.analyzerLog) appendFileSync(options.analyzerLog, chunk);
    pending += chunk.toString('utf8');
    const lines = pending.split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines) {
      const key = /^analyzer [a-z]+: /.test(line)
        ? line.slice(0, 160)
        : /\]\[ERROR\]\[@clickhouse\/client\]/.test(line)
          ? 'ClickHouse client error report'
          : null;
      if (key !== null) errors.set(key, (errors.get(key) ?? 0) + 1);
    }
  });
}

const errorLine = (errors: Map<string, number>) =>
  errors.size === 0 ? 'none' : [...errors].map(([text, n]) => `"${text}" ×${n}`).join(', ');

/** `node dist/analyzer/main.js` on the bench stores, 2 worker threads, a free port for /metrics. */
async function startAnalyzer(): Promise<RunningAnalyzer> {
  const port = await freePort();
  const env = {
    ...process.env,
    ...benchEdgeEnv(),
    ANALYZER_HOST: '127.0.0.1',
    ANALYZER_PORT: String(port),
    ANALYZER_WORKER_THREADS: ANALYZER_THREADS,
  };
  const spawnedAt = performance.now();
  const { child } = await spawnNode('analyzer', [resolve(here, '../analyzer/main.js')], env, /^analyzer ready at/, { stderr: 'pipe' });
  const errors = new Map<string, number>();
  watchAnalyzerErrors(child, errors);
  return { child, port, spawnedAt, readyAt: performance.now(), errors };
}

// ------------------------------------------------------------------ CPU accounting

interface CpuSnapshot {
  at: number;
  driver: number;
  edge: number;
  analyzer: number;
  redis: number;
  clickhouse: number;
  /** Per postgres process (the server's backends come and go). */
  postgres: Map<number, number>;
  machine: { busy: number; total: number };
}

const stackPids = { redis: findPid('redis-server'), clickhouse: findPid('clickhouse-serv') };

/** Every process whose name starts with `prefix`: PostgreSQL serves each connection in a process of its own. */
function allPids(prefix: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').startsWith(prefix)) found.push(Number(entry));
    } catch {
      /* gone */
    }
  }
  return found;
}

function cpuSnapshot(edgePid: number | undefined, analyzerPid: number | undefined): CpuSnapshot {
  const usage = process.cpuUsage();
  return {
    at: performance.now(),
    driver: (usage.user + usage.system) / 1e6,
    edge: edgePid === undefined ? NaN : processCpuSeconds(edgePid),
    analyzer: analyzerPid === undefined ? NaN : processCpuSeconds(analyzerPid),
    redis: stackPids.redis === null ? NaN : processCpuSeconds(stackPids.redis),
    clickhouse: stackPids.clickhouse === null ? NaN : processCpuSeconds(stackPids.clickhouse),
    postgres: new Map(allPids('postgres').map((pid) => [pid, processCpuSeconds(pid)])),
    machine: machineCpu(),
  };
}

interface CpuUse {
  edge: number;
  analyzer: number;
  driver: number;
  redis: number;
  clickhouse: number;
  postgres: number;
  machineBusy: number;
  other: number;
}

/** CPU use between two snapshots, in % of one core (200 % = both cores). */
function cpuBetween(a: CpuSnapshot, b: CpuSnapshot): CpuUse {
  const seconds = (b.at - a.at) / 1000;
  const pct = (x: number, y: number) => ((y - x) / seconds) * 100;
  let postgres = 0;
  for (const [pid, after] of b.postgres) {
    const before = a.postgres.get(pid) ?? 0; // a backend started in between: all its CPU is this stretch's
    if (Number.isFinite(after)) postgres += after - before;
  }
  const use = {
    edge: pct(a.edge, b.edge),
    analyzer: pct(a.analyzer, b.analyzer),
    driver: pct(a.driver, b.driver),
    redis: pct(a.redis, b.redis),
    clickhouse: pct(a.clickhouse, b.clickhouse),
    postgres: (postgres / seconds) * 100,
    machineBusy: ((b.machine.busy - a.machine.busy) / (b.machine.total - a.machine.total)) * 100,
  };
  // Whatever else ran on the machine (other processes, the kernel's own threads): the machine's
  // busy time less the processes above. Other engineers' jobs share these cores.
  const mine = [use.edge, use.analyzer, use.driver, use.redis, use.clickhouse, use.postgres]
    .filter(Number.isFinite)
    .reduce((sum, value) => sum + value, 0);
  return { ...use, other: Math.max(0, use.machineBusy * CORES - mine) };
}

const pctOf = (value: number) => (Number.isFinite(value) ? fmt(value) : '–');
const cpuLine = (c: CpuUse) =>
  `cpu (% of one core): edge ${pctOf(c.edge)}, analyzer ${pctOf(c.analyzer)} (incl. its worker threads), driver ${pctOf(c.driver)}, `
  + `redis ${pctOf(c.redis)}, clickhouse ${pctOf(c.clickhouse)}, postgres ${pctOf(c.postgres)} (all its processes), anything else ${pctOf(c.other)}; `
  + `machine busy ${fmt(c.machineBusy)} % of ${CORES} cores`;

// ------------------------------------------------------------------ stores

async function resetBenchStores(clickhouse: ClickHouseClient): Promise<void> {
  await Promise.all([flushBenchRedis(), clickhouse.command({ query: 'TRUNCATE TABLE IF EXISTS observations' })]);
  await waitForMerges(clickhouse, 60);
}

/** Waits (at most maxSeconds) until no merge of the bench database runs; returns the seconds waited. */
async function waitForMerges(clickhouse: ClickHouseClient, maxSeconds: number): Promise<number> {
  const started = performance.now();
  while ((performance.now() - started) / 1000 < maxSeconds) {
    const result = await clickhouse.query({
      query: `SELECT count() AS n FROM system.merges WHERE database = ${sqlLiteral(BENCH_STORES.CLICKHOUSE_DATABASE)}`,
      format: 'JSONEachRow',
    });
    if (Number((await result.json<{ n: string }>())[0].n) === 0) break;
    await new Promise((done) => setTimeout(done, 500));
  }
  return (performance.now() - started) / 1000;
}

const STREAM = RedisKeys.analysisJobs;

async function streamState(redis: Redis): Promise<{ length: number; pending: number }> {
  const [length, pending] = await Promise.all([
    redis.xlen(STREAM),
    (redis.xpending(STREAM, ANALYSIS_CONSUMER_GROUP) as Promise<[number, ...unknown[]]>).catch(() => [0] as [number]),
  ]);
  return { length, pending: Number(pending[0]) };
}

/** Polls every 20 ms until XLEN and XPENDING are both 0; resolves with performance.now() of the first drained poll. */
async function waitForDrain(redis: Redis, timeoutS: number): Promise<number> {
  const deadline = performance.now() + timeoutS * 1000;
  for (;;) {
    const state = await streamState(redis);
    const now = performance.now();
    if (state.length === 0 && state.pending === 0) return now;
    if (now > deadline) throw new Error(`the stream did not drain within ${timeoutS} s (XLEN ${state.length}, XPENDING ${state.pending})`);
    await new Promise((done) => setTimeout(done, 20));
  }
}

// ------------------------------------------------------------------ analyzer metrics

/** Values of the analyzer's /metrics by `name` or `name{label="value"}` (the process label left out). */
async function scrapeAnalyzer(analyzer: RunningAnalyzer): Promise<Map<string, number>> {
  const res = await fetch(`http://127.0.0.1:${analyzer.port}/metrics`);
  const text = await res.text();
  const values = new Map<string, number>();
  for (const line of text.split('\n')) {
    const match = /^([a-z_]+)(?:\{([^}]*)\})? (\S+)$/.exec(line);
    if (!match?.[1].startsWith('analyzer_')) continue;
    const labels = (match[2] ?? '')
      .split(',')
      .filter((label) => label && !label.startsWith('process='))
      .join(',');
    const key = labels ? `${match[1]}{${labels}}` : match[1];
    values.set(key, (values.get(key) ?? 0) + Number(match[3]));
  }
  return values;
}

/** Sums of the edge's /metrics counters over all label sets; `<histogram>_bucket:<le>` names one bucket. */
async function scrapeEdge(port: number): Promise<Map<string, number>> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const sums = new Map<string, number>();
  for (const line of text.split('\n')) {
    const match = /^(ingest_[a-z_]+)(?:\{([^}]*)\})? (\S+)$/.exec(line);
    if (!match) continue;
    const le = /le="([^"]+)"/.exec(match[2] ?? '');
    const name = le ? `${match[1]}:${le[1]}` : match[1];
    sums.set(name, (sums.get(name) ?? 0) + Number(match[3]));
  }
  return sums;
}

/** The edge's stage times and in-server time over a phase (difference of two scrapes). */
interface EdgeStats {
  inserts: number;
  rowsPerInsert: number;
  meanInsertMs: number;
  insertsOver100: number;
  meanServerMs: number;
  serverOver150: number;
}
function edgeStats(a: Map<string, number>, b: Map<string, number>): EdgeStats {
  const d = (name: string) => (b.get(name) ?? 0) - (a.get(name) ?? 0);
  const inserts = d('ingest_insert_rows_count');
  const requests = d('ingest_request_duration_seconds_count');
  return {
    inserts,
    rowsPerInsert: inserts ? d('ingest_insert_rows_sum') / inserts : 0,
    meanInsertMs: inserts ? (d('ingest_insert_duration_seconds_sum') / inserts) * 1000 : 0,
    insertsOver100: inserts ? 1 - d('ingest_insert_duration_seconds_bucket:0.1') / inserts : 0,
    meanServerMs: requests ? (d('ingest_request_duration_seconds_sum') / requests) * 1000 : 0,
    serverOver150: requests ? 1 - d('ingest_request_duration_seconds_bucket:0.15') / requests : 0,
  };
}

const LAG_BUCKETS = ['0.05', '0.1', '0.25', '0.5', '1', '2', '5', '10'];

interface LagSummary {
  p50: number;
  p90: number;
  p99: number;
  count: number;
}
function lagSummary(m: Map<string, number>): LagSummary {
  return {
    p50: m.get('analyzer_lag_quantiles_seconds{quantile="0.5"}') ?? NaN,
    p90: m.get('analyzer_lag_quantiles_seconds{quantile="0.9"}') ?? NaN,
    p99: m.get('analyzer_lag_quantiles_seconds{quantile="0.99"}') ?? NaN,
    count: m.get('analyzer_lag_quantiles_seconds_count') ?? NaN,
  };
}

// ------------------------------------------------------------------ PostgreSQL and ClickHouse checks

interface IncidentCheck {
  incidents: number;
  affected: number;
  findings: Record<string, number>;
}

async function incidentTotals(pool: ReturnType<typeof createPool>, connectionIds: string[]): Promise<IncidentCheck> {
  const { rows } = await pool.query<{ incidents: string; affected: string | null }>(
    `SELECT count(*) AS incidents, sum(affected_records) AS affected FROM incidents WHERE connection_id = ANY($1::text[]) AND status = 'open'`,
    [connectionIds],
  );
  const findings = await pool.query<{ kind: string; path: string; n: string }>(
    `SELECT f.kind, f.path, sum(f.observation_count) AS n FROM incident_findings f JOIN incidents i ON i.id = f.incident_id
      WHERE i.connection_id = ANY($1::text[]) AND i.status = 'open' GROUP BY f.kind, f.path ORDER BY f.kind, f.path`,
    [connectionIds],
  );
  return {
    incidents: Number(rows[0].incidents),
    affected: Number(rows[0].affected ?? 0),
    findings: Object.fromEntries(findings.rows.map((row) => [`${row.kind} ${row.path}`, Number(row.n)])),
  };
}

async function rowsWithPrefix(clickhouse: ClickHouseClient, collectors: BenchCollector[], prefix: string): Promise<number> {
  const result = await clickhouse.query({
    query: `SELECT count() AS n FROM observations WHERE connection_id IN (${collectors.map((c) => sqlLiteral(c.connectionId)).join(', ')})
             AND event_id LIKE ${sqlLiteral(`evt_${prefix}%`)}`,
    format: 'JSONEachRow',
  });
  return Number((await result.json<{ n: string }>())[0].n);
}

/**
 * Per batch of the phase: receipt (ClickHouse `received_at_ms`) to the start of its analysis
 * (`analysed_batches.analysed_at`, the analyzer's clock when it began the delivery's transaction).
 * The commit comes later by the transaction's duration, so these are lower bounds of the lag.
 */
async function startLags(
  clickhouse: ClickHouseClient,
  pool: ReturnType<typeof createPool>,
  collectors: BenchCollector[],
  prefix: string,
): Promise<Float64Array> {
  const result = await clickhouse.query({
    query: `SELECT batch_id, any(received_at_ms) AS received FROM observations
             WHERE connection_id IN (${collectors.map((c) => sqlLiteral(c.connectionId)).join(', ')}) AND event_id LIKE ${sqlLiteral(`evt_${prefix}%`)}
             GROUP BY batch_id`,
    format: 'JSONEachRow',
  });
  const received = new Map(
    (await result.json<{ batch_id: string; received: string }>()).map((row) => [row.batch_id, Number(row.received)]),
  );
  const { rows } = await pool.query<{ batch_id: string; ms: number }>(
    'SELECT batch_id, extract(epoch FROM analysed_at)::float8 * 1000 AS ms FROM analysed_batches WHERE batch_id = ANY($1::text[])',
    [[...received.keys()]],
  );
  const lags = new Float64Array(rows.length);
  rows.forEach((row, i) => {
    lags[i] = (row.ms - received.get(row.batch_id)!) / 1000;
  });
  if (rows.length !== received.size)
    console.log(`   WARNING: ${received.size - rows.length} of ${received.size} batches have no analysed_batches row`);
  return lags.sort();
}

// ------------------------------------------------------------------ set-up

function sendersFor(collectors: BenchCollector[], port: number, prefix: string): Sender[] {
  const occurredAt = new Date().toISOString();
  return collectors.map((collector) => ({
    collector,
    key: tokenKey(collector.ingestToken),
    template: new BatchTemplate(collector.integrationKey, prefix, occurredAt, ENVELOPES_PER_BATCH, shapedEnvelope),
    headPrefix:
      `POST /ingest HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\ncontent-type: application/json\r\n`
      + `x-service-connection: ${collector.connectionKey}\r\nauthorization: Bearer ${collector.ingestToken}\r\nx-service-signature: `,
    spareBodies: [],
  }));
}

const non202 = (statuses: Record<string, number>) => Object.entries(statuses).filter(([status]) => status !== '202');
const statusLine = (statuses: Record<string, number>) => {
  const other = non202(statuses);
  return `statuses: ${
    Object.entries(statuses)
      .map(([s, n]) => `${s}×${fmt(n)}`)
      .join(', ') || 'none'
  }; non-202: ${other.length ? other.map(([s, n]) => `${s}×${n}`).join(', ') : 'none'}`;
};
const ok = (pass: boolean) => (pass ? 'met' : 'NOT met');

// ------------------------------------------------------------------ phases

interface PhaseAResult {
  sendCpu: CpuUse;
  envelopesSent: number;
  accepted202: number;
  sendSeconds: number;
  sendEnvelopesPerSecond: number;
  mergeWaitSeconds: number;
  analyzerStartSeconds: number;
  drainSecondsFromSpawn: number;
  envelopesPerSecond: number;
  analysedEnvelopes: number;
  comparisons: number;
  memoHits: number;
  driftedSent: number;
  incidents: IncidentCheck;
  cpu: CpuUse;
}

interface PhaseBResult {
  rate: number;
  seconds: number;
  acceptedEnvelopesPerSecond: number;
  requests: number;
  skipped: number;
  statuses: Record<string, number>;
  edgeLatencyMs: { p50: number; p90: number; p99: number; max: number; mean: number };
  edgeP99BySliceMs: number[];
  summaryAtLoadEnd: LagSummary;
  summaryAfterDrain: LagSummary;
  measured: { batches: number; meanCommittedLagS: number; shareWithin: Record<string, number> };
  startLagS: { batches: number; p50: number; p90: number; p99: number; max: number; mean: number };
  drainSeconds: number;
  /** Batches answered 202 in the measured phase, and how many of them were analysed by load end (from the histogram). */
  batchesAnswered: number;
  analysedByLoadEnd: number;
  analyzerErrors: Record<string, number>;
  analysedEnvelopes: number;
  driftedSent: number;
  incidents: IncidentCheck;
  cpu: CpuUse;
  edge: EdgeStats;
}

interface Context {
  collectors: BenchCollector[];
  clickhouse: ClickHouseClient;
  redis: Redis;
  pool: ReturnType<typeof createPool>;
  edge: { child: ChildProcess; port: number };
  runId: string;
  /** Drifted envelopes answered 202 so far, all phases and warm-ups. */
  driftedSent: number;
}

async function phaseA(ctx: Context): Promise<PhaseAResult> {
  const batches = Math.ceil(options.backlog / ENVELOPES_PER_BATCH);
  const prefix = `${ctx.runId}a`;
  console.log(
    `\n== phase A, memoised backlog: ${fmt(batches * ENVELOPES_PER_BATCH)} envelopes (${fmt(batches)} batches) with no analyzer running`,
  );
  const client = new RawHttpClient('127.0.0.1', ctx.edge.port, BACKLOG_CONCURRENCY, 4_000);
  const load = new LoadGenerator(client, sendersFor(ctx.collectors, ctx.edge.port, prefix));
  const recorder = new Recorder();
  const sendCpuBefore = cpuSnapshot(ctx.edge.child.pid, undefined);
  const sendStarted = performance.now();
  let issued = 0;
  await Promise.all(
    Array.from({ length: BACKLOG_CONCURRENCY }, async () => {
      while (issued < batches) {
        issued += 1;
        await load.send(recorder, performance.now(), Infinity);
      }
    }),
  );
  const sendSeconds = (performance.now() - sendStarted) / 1000;
  const sendCpu = cpuBetween(sendCpuBefore, cpuSnapshot(ctx.edge.child.pid, undefined));
  client.close();
  const accepted = load.totalAccepted202 * ENVELOPES_PER_BATCH;
  const driftedSent = load.totalAccepted202 * DRIFTED_PER_BATCH;
  ctx.driftedSent += driftedSent;
  const stream = await streamState(ctx.redis);
  const rows = await rowsWithPrefix(ctx.clickhouse, ctx.collectors, prefix);
  const sendLatency = recorder.latency();
  console.log(
    `   sent in ${fmt(sendSeconds, 1)} s (${fmt(accepted / sendSeconds)} envelopes/s accepted, ${BACKLOG_CONCURRENCY} in flight: the edge's closed-loop rate `
      + `for these envelopes, no analyzer running; latency p50 ${fmt(sendLatency.p50, 1)} ms, p99 ${fmt(sendLatency.p99, 1)} ms); ${statusLine(recorder.statuses)}`,
  );
  console.log(`   sending: ${cpuLine(sendCpu)}`);
  console.log(
    `   stream: ${fmt(stream.length)} jobs waiting (batches answered 202: ${fmt(load.totalAccepted202)}); ClickHouse rows ${fmt(rows)} vs envelopes answered 202 ${fmt(accepted)}: ${rows === accepted ? 'EQUAL' : 'MISMATCH'}`,
  );
  if (recorder.errorSample) console.log(`   first non-202: ${recorder.errorSample}`);
  const mergeWaitSeconds = await waitForMerges(ctx.clickhouse, 60);
  console.log(
    `   waited ${fmt(mergeWaitSeconds, 1)} s for ClickHouse merges to stop, then started the analyzer (${ANALYZER_THREADS} worker threads)`,
  );

  const before = cpuSnapshot(ctx.edge.child.pid, undefined);
  const analyzer = await startAnalyzer();
  const analyzerPid = analyzer.child.pid!;
  const beforeWithAnalyzer = { ...before, analyzer: 0 };
  const drainedAt = await waitForDrain(ctx.redis, 600);
  const cpu = cpuBetween(beforeWithAnalyzer, cpuSnapshot(ctx.edge.child.pid, analyzerPid));
  const metrics = await scrapeAnalyzer(analyzer);
  await stopChild(analyzer.child);
  const drainSecondsFromSpawn = (drainedAt - analyzer.spawnedAt) / 1000;
  const analysedEnvelopes = metrics.get('analyzer_envelopes_analysed_total') ?? NaN;
  const incidents = await incidentTotals(
    ctx.pool,
    ctx.collectors.map((c) => c.connectionId),
  );
  const result: PhaseAResult = {
    sendCpu,
    envelopesSent: issued * ENVELOPES_PER_BATCH,
    accepted202: accepted,
    sendSeconds,
    sendEnvelopesPerSecond: accepted / sendSeconds,
    mergeWaitSeconds,
    analyzerStartSeconds: (analyzer.readyAt - analyzer.spawnedAt) / 1000,
    drainSecondsFromSpawn,
    envelopesPerSecond: accepted / drainSecondsFromSpawn,
    analysedEnvelopes,
    comparisons: metrics.get('analyzer_comparisons_total') ?? NaN,
    memoHits: metrics.get('analyzer_memo_hits_total') ?? NaN,
    driftedSent: ctx.driftedSent,
    incidents,
    cpu,
  };
  console.log(
    `   drained ${fmt(drainSecondsFromSpawn, 2)} s after the analyzer was spawned (its listening line after ${fmt(result.analyzerStartSeconds, 2)} s): `
      + `**${fmt(result.envelopesPerSecond)} envelopes analysed per second** on ${ANALYZER_THREADS} worker threads`,
  );
  console.log(
    `   analyzer /metrics: ${fmt(analysedEnvelopes)} envelopes analysed (${analysedEnvelopes === accepted ? 'EQUAL to' : 'MISMATCH with'} the 202 envelopes), `
      + `${fmt(metrics.get('analyzer_jobs_total{outcome="analysed"}') ?? 0)} jobs, ${fmt(result.comparisons)} comparisons, ${fmt(result.memoHits)} memo hits`,
  );
  console.log(`   ${cpuLine(cpu)}`);
  console.log(`   analyzer errors logged: ${errorLine(analyzer.errors)}`);
  checkIncidents('phase A', incidents, ctx.driftedSent);
  if (analysedEnvelopes !== accepted)
    throw new Error(`phase A: the analyzer analysed ${analysedEnvelopes} envelopes, ${accepted} were answered 202`);
  return result;
}

function checkIncidents(phase: string, incidents: IncidentCheck, drifted: number): void {
  const equal = incidents.affected === drifted;
  console.log(
    `   incidents: ${incidents.incidents} open, affectedRecords sum ${fmt(incidents.affected)} vs drifted envelopes answered 202 ${fmt(drifted)}: ${equal ? 'EQUAL' : 'MISMATCH'}`,
  );
  console.log(
    `   findings (observations): ${Object.entries(incidents.findings)
      .map(([key, n]) => `${key} ${fmt(n)}`)
      .join('; ')}`,
  );
  if (!equal)
    throw new Error(
      `${phase}: the incidents' affectedRecords add up to ${incidents.affected}, ${drifted} drifted envelopes were answered 202`,
    );
}

interface EdgeOnlyResult {
  rate: number;
  acceptedEnvelopesPerSecond: number;
  skipped: number;
  statuses: Record<string, number>;
  edgeLatencyMs: PhaseBResult['edgeLatencyMs'];
  edgeP99BySliceMs: number[];
  edge: EdgeStats;
  cpu: CpuUse;
}

/**
 * `--no-analyzer`: phase B's load with no analyzer process, to set the edge's latency beside the
 * one measured with the analyzer running (the jobs stay in the stream; the end of the run clears it).
 */
async function phaseEdgeOnly(ctx: Context): Promise<EdgeOnlyResult> {
  console.log(
    `\n== phase B without the analyzer (--no-analyzer): ${fmt(options.rate)} envelopes/s open loop for ${options.durationS} s (warm-up ${options.warmupS} s)`,
  );
  const client = new RawHttpClient('127.0.0.1', ctx.edge.port, CONNECTIONS, 4_000);
  try {
    if (options.warmupS > 0) {
      const warm = new LoadGenerator(client, sendersFor(ctx.collectors, ctx.edge.port, `${ctx.runId}v`));
      await warm.openLoop(options.rate, options.warmupS, MAX_OUTSTANDING, new Recorder());
    }
    const load = new LoadGenerator(client, sendersFor(ctx.collectors, ctx.edge.port, `${ctx.runId}n`));
    const recorder = new Recorder();
    const edgeBefore = await scrapeEdge(ctx.edge.port);
    const before = cpuSnapshot(ctx.edge.child.pid, undefined);
    const open = await load.openLoop(options.rate, options.durationS, MAX_OUTSTANDING, recorder);
    const cpu = cpuBetween(before, cpuSnapshot(ctx.edge.child.pid, undefined));
    const edge = edgeStats(edgeBefore, await scrapeEdge(ctx.edge.port));
    const l = recorder.latency();
    const result: EdgeOnlyResult = {
      rate: options.rate,
      acceptedEnvelopesPerSecond: (recorder.accepted202 * ENVELOPES_PER_BATCH) / options.durationS,
      skipped: open.skipped,
      statuses: recorder.statuses,
      edgeLatencyMs: l,
      edgeP99BySliceMs: recorder.p99BySlice(),
      edge,
      cpu,
    };
    console.log(
      `   edge: ${fmt(result.acceptedEnvelopesPerSecond)} envelopes/s accepted; ${statusLine(recorder.statuses)}${open.skipped ? `; skipped sends: ${open.skipped}` : ''}`,
    );
    console.log(
      `   edge answer latency ms (from the scheduled send time): p50 ${fmt(l.p50, 1)}, p90 ${fmt(l.p90, 1)}, p99 ${fmt(l.p99, 1)}, max ${fmt(l.max, 1)} `
        + `(mean ${fmt(l.mean, 1)}); p99 by 10-s slice: ${result.edgeP99BySliceMs.map((v) => fmt(v)).join(', ')}`,
    );
    console.log(
      `   edge /metrics: ${fmt(edge.inserts)} inserts, ${fmt(edge.rowsPerInsert)} rows/insert, mean insert ${fmt(edge.meanInsertMs, 1)} ms `
        + `(${fmt(100 * edge.insertsOver100, 1)} % over 100 ms); mean in-server time ${fmt(edge.meanServerMs, 1)} ms, ${fmt(100 * edge.serverOver150, 2)} % over 150 ms in the server`,
    );
    console.log(`   ${cpuLine(cpu)}`);
    return result;
  } finally {
    client.close();
  }
}

async function phaseB(ctx: Context): Promise<PhaseBResult> {
  console.log(
    `\n== phase B, sustained: ${fmt(options.rate)} envelopes/s open loop for ${options.durationS} s (warm-up ${options.warmupS} s at the same rate), fresh analyzer process`,
  );
  const analyzer = await startAnalyzer();
  const client = new RawHttpClient('127.0.0.1', ctx.edge.port, CONNECTIONS, 4_000);
  try {
    if (options.warmupS > 0) {
      const warm = new LoadGenerator(client, sendersFor(ctx.collectors, ctx.edge.port, `${ctx.runId}w`));
      await warm.openLoop(options.rate, options.warmupS, MAX_OUTSTANDING, new Recorder());
      ctx.driftedSent += warm.totalAccepted202 * DRIFTED_PER_BATCH;
      await waitForDrain(ctx.redis, 300);
    }
    const prefix = `${ctx.runId}b`;
    const load = new LoadGenerator(client, sendersFor(ctx.collectors, ctx.edge.port, prefix));
    const recorder = new Recorder();
    const metricsBefore = await scrapeAnalyzer(analyzer);
    const edgeBefore = await scrapeEdge(ctx.edge.port);
    const before = cpuSnapshot(ctx.edge.child.pid, analyzer.child.pid);
    const open = await load.openLoop(options.rate, options.durationS, MAX_OUTSTANDING, recorder);
    const loadEnd = performance.now();
    const cpu = cpuBetween(before, cpuSnapshot(ctx.edge.child.pid, analyzer.child.pid));
    const atLoadEnd = await scrapeAnalyzer(analyzer);
    const edge = edgeStats(edgeBefore, await scrapeEdge(ctx.edge.port));
    const drainedAt = await waitForDrain(ctx.redis, 600);
    const drainSeconds = (drainedAt - loadEnd) / 1000;
    const afterDrain = await scrapeAnalyzer(analyzer);
    ctx.driftedSent += load.totalAccepted202 * DRIFTED_PER_BATCH;

    const d = (name: string) => (afterDrain.get(name) ?? 0) - (metricsBefore.get(name) ?? 0);
    const measuredBatches = d('analyzer_lag_histogram_seconds_count');
    const shareWithin = Object.fromEntries(
      LAG_BUCKETS.map((le) => [le, measuredBatches ? d(`analyzer_lag_histogram_seconds_bucket{le="${le}"}`) / measuredBatches : NaN]),
    );
    const lags = await startLags(ctx.clickhouse, ctx.pool, ctx.collectors, prefix);
    let lagSum = 0;
    for (const lag of lags) lagSum += lag;
    const incidents = await incidentTotals(
      ctx.pool,
      ctx.collectors.map((c) => c.connectionId),
    );
    const latency = recorder.latency();
    const result: PhaseBResult = {
      rate: options.rate,
      seconds: open.seconds,
      acceptedEnvelopesPerSecond: (recorder.accepted202 * ENVELOPES_PER_BATCH) / options.durationS,
      requests: recorder.requests,
      skipped: open.skipped,
      statuses: recorder.statuses,
      edgeLatencyMs: latency,
      edgeP99BySliceMs: recorder.p99BySlice(),
      summaryAtLoadEnd: lagSummary(atLoadEnd),
      summaryAfterDrain: lagSummary(afterDrain),
      measured: {
        batches: measuredBatches,
        meanCommittedLagS: measuredBatches ? d('analyzer_lag_histogram_seconds_sum') / measuredBatches : NaN,
        shareWithin,
      },
      startLagS: {
        batches: lags.length,
        p50: percentile(lags, 50),
        p90: percentile(lags, 90),
        p99: percentile(lags, 99),
        max: lags.length ? lags[lags.length - 1] : NaN,
        mean: lags.length ? lagSum / lags.length : NaN,
      },
      drainSeconds,
      batchesAnswered: recorder.accepted202,
      analysedByLoadEnd:
        (atLoadEnd.get('analyzer_lag_histogram_seconds_count') ?? 0) - (metricsBefore.get('analyzer_lag_histogram_seconds_count') ?? 0),
      analyzerErrors: Object.fromEntries(analyzer.errors),
      analysedEnvelopes: d('analyzer_envelopes_analysed_total'),
      driftedSent: ctx.driftedSent,
      incidents,
      cpu,
      edge,
    };
    printPhaseB(result, recorder.accepted202 * ENVELOPES_PER_BATCH, recorder.errorSample);
    checkIncidents('phase B', incidents, ctx.driftedSent);
    return result;
  } finally {
    client.close();
    await stopChild(analyzer.child);
  }
}

function printPhaseB(r: PhaseBResult, accepted: number, errorSample: string | undefined): void {
  const l = r.edgeLatencyMs;
  const s = r.summaryAtLoadEnd;
  const t = r.startLagS;
  console.log(
    `   edge: ${fmt(r.acceptedEnvelopesPerSecond)} envelopes/s accepted over ${fmt(r.seconds, 1)} s; ${statusLine(r.statuses)}${r.skipped ? `; skipped sends: ${r.skipped}` : ''}`,
  );
  if (errorSample) console.log(`   first non-202: ${errorSample}`);
  console.log(
    `   edge answer latency ms (from the scheduled send time): p50 ${fmt(l.p50, 1)}, p90 ${fmt(l.p90, 1)}, p99 ${fmt(l.p99, 1)}, max ${fmt(l.max, 1)} (mean ${fmt(l.mean, 1)}); `
      + `p99 by 10-s slice: ${r.edgeP99BySliceMs.map((v) => fmt(v)).join(', ')}  [target p99 <= ${TARGETS.edgeP99Ms} ms: ${ok(l.p99 <= TARGETS.edgeP99Ms)}]`,
  );
  const e = r.edge;
  console.log(
    `   edge /metrics: ${fmt(e.inserts)} inserts, ${fmt(e.rowsPerInsert)} rows/insert, mean insert ${fmt(e.meanInsertMs, 1)} ms `
      + `(${fmt(100 * e.insertsOver100, 1)} % over 100 ms); mean in-server time ${fmt(e.meanServerMs, 1)} ms, ${fmt(100 * e.serverOver150, 2)} % over 150 ms in the server`,
  );
  console.log(
    `   analysis lag, analyzer_lag_quantiles_seconds at load end (receipt -> committed analysis, per batch; warm-up included, `
      + `${fmt(s.count)} batches; by load end ${fmt(r.analysedByLoadEnd)} of the ${fmt(r.batchesAnswered)} measured batches were analysed, the others are not in it yet): `
      + `p50 ${fmt(s.p50, 3)} s, p90 ${fmt(s.p90, 3)} s, p99 ${fmt(s.p99, 3)} s  [target p99 <= ${TARGETS.lagP99S} s: ${ok(s.p99 <= TARGETS.lagP99S)}]`,
  );
  console.log(
    `     same Summary after the drain (${fmt(r.summaryAfterDrain.count)} batches): p50 ${fmt(r.summaryAfterDrain.p50, 3)} s, p99 ${fmt(r.summaryAfterDrain.p99, 3)} s`,
  );
  const share = r.measured.shareWithin;
  console.log(
    `     measured batches only (analyzer_lag_histogram_seconds, exact counts per bucket, ${fmt(r.measured.batches)} batches): `
      + `${LAG_BUCKETS.map((le) => `<= ${le} s ${fmt(100 * share[le], 2)} %`).join(', ')}; mean ${fmt(r.measured.meanCommittedLagS, 3)} s`
      + `  [p99 <= 2 s exactly when >= 99 % are within 2 s: ${ok(share['2'] >= 0.99)}]`,
  );
  console.log(
    `     exact, receipt -> start of the batch's analysis (analysed_batches.analysed_at - received_at_ms; a lower bound: the commit comes `
      + `later by the transaction, ${fmt(1000 * (r.measured.meanCommittedLagS - t.mean), 0)} ms on average): p50 ${fmt(t.p50, 3)} s, p90 ${fmt(t.p90, 3)} s, `
      + `p99 ${fmt(t.p99, 3)} s, max ${fmt(t.max, 3)} s (${fmt(t.batches)} batches)`,
  );
  console.log(
    `   drain: the stream held no job ${fmt(r.drainSeconds, 2)} s after the last answer  [target <= ${TARGETS.drainS} s: ${ok(r.drainSeconds <= TARGETS.drainS)}]`,
  );
  console.log(
    `   analyzer: ${fmt(r.analysedEnvelopes)} envelopes analysed during the phase and drain (${r.analysedEnvelopes === accepted ? 'EQUAL to' : 'vs'} ${fmt(accepted)} answered 202)`,
  );
  console.log(`   ${cpuLine(r.cpu)}`);
  console.log(`   analyzer errors logged: ${errorLine(new Map(Object.entries(r.analyzerErrors)))}`);
}

// ------------------------------------------------------------------ main

/** dist/analyzer/*.js older than their analyzer/*.ts: the analyzer process would run stale code. */
function staleAnalyzerBuild(): string[] {
  const sources = resolve(here, '../../analyzer');
  const stale: string[] = [];
  for (const file of readdirSync(sources)) {
    if (!file.endsWith('.ts')) continue;
    const built = resolve(here, '../analyzer', file.replace(/\.ts$/, '.js'));
    try {
      if (statSync(built).mtimeMs < statSync(resolve(sources, file)).mtimeMs) stale.push(file);
    } catch {
      stale.push(file);
    }
  }
  return stale;
}

async function main(): Promise<void> {
  const stale = staleAnalyzerBuild();
  if (stale.length > 0)
    console.log(
      `WARNING: dist/analyzer is older than analyzer/${stale.join(', analyzer/')}: run \`npm run build\` (the analyzer process runs dist/analyzer/main.js)`,
    );
  const runId = Math.random().toString(36).slice(2, 8);
  console.log(
    `analyzer load: ${options.collectors} Live collectors in ${options.workspaces} workspaces, ${ENVELOPES_PER_BATCH} envelopes per batch `
      + `of ${SHAPES} shapes (${DRIFTING.size} drifting: ${DRIFTED_PER_BATCH} drifted envelopes per batch); analyzer worker threads ${ANALYZER_THREADS}; run ${runId}`,
  );
  console.log(
    `stores: ${BENCH_STORES.DATABASE_URL.replace(/\/\/[^@]*@/, '//')}, ${BENCH_STORES.REDIS_URL}, ClickHouse ${BENCH_STORES.CLICKHOUSE_URL} db ${BENCH_STORES.CLICKHOUSE_DATABASE}`,
  );
  await prepareBenchDatabases();
  const clickhouse = createClient({
    url: BENCH_STORES.CLICKHOUSE_URL,
    database: BENCH_STORES.CLICKHOUSE_DATABASE,
    request_timeout: 60_000,
    compression: { request: false, response: false },
  });
  const redis = new Redis(BENCH_STORES.REDIS_URL);
  const pool = createPool(BENCH_STORES.DATABASE_URL, 2);
  let edge: { child: ChildProcess; port: number } | null = null;
  const results: { phaseA?: PhaseAResult; phaseB?: PhaseBResult; edgeOnly?: EdgeOnlyResult } = {};
  try {
    if (!options.keepData) await resetBenchStores(clickhouse);
    const collectors = await createBenchCollectors(options.workspaces, options.collectors);
    await giveContracts(collectors);
    const sample = new BatchTemplate(
      collectors[0].integrationKey,
      `${runId}x`,
      new Date().toISOString(),
      ENVELOPES_PER_BATCH,
      shapedEnvelope,
    );
    console.log(`set-up: ${collectors.length} collectors; batch body ${fmt(sample.byteLength)} bytes`);
    edge = await startEdge();
    console.log(`edge: pid ${edge.child.pid}, http://127.0.0.1:${edge.port}`);
    const ctx: Context = { collectors, clickhouse, redis, pool, edge, runId, driftedSent: 0 };
    if (!options.skipBacklog) results.phaseA = await phaseA(ctx);
    if (!options.skipSustained) {
      if (options.noAnalyzer) results.edgeOnly = await phaseEdgeOnly(ctx);
      else results.phaseB = await phaseB(ctx);
    }
    printSummary(results);
    if (options.json) writeFileSync(options.json, JSON.stringify({ date: new Date().toISOString(), options, results }, null, 2));
  } finally {
    if (edge) await stopChild(edge.child);
    if (!options.keepData) await resetBenchStores(clickhouse).catch(() => undefined);
    redis.disconnect();
    await pool.end();
    await clickhouse.close();
  }
}

function printSummary(r: { phaseA?: PhaseAResult; phaseB?: PhaseBResult; edgeOnly?: EdgeOnlyResult }): void {
  console.log('\n== summary');
  if (r.edgeOnly) {
    const e = r.edgeOnly;
    console.log(
      `no analyzer @${fmt(e.rate)}/s: accepted ${fmt(e.acceptedEnvelopesPerSecond)}/s; edge p50/p99 ${fmt(e.edgeLatencyMs.p50, 1)}/${fmt(e.edgeLatencyMs.p99, 1)} ms; `
        + `cpu % of a core: edge ${fmt(e.cpu.edge)}, clickhouse ${fmt(e.cpu.clickhouse)}, redis ${fmt(e.cpu.redis)}, driver ${fmt(e.cpu.driver)}; machine ${fmt(e.cpu.machineBusy)} % busy`,
    );
  }
  if (r.phaseA) {
    console.log(
      `backlog: ${fmt(r.phaseA.accepted202)} envelopes analysed in ${fmt(r.phaseA.drainSecondsFromSpawn, 2)} s from spawn: `
        + `${fmt(r.phaseA.envelopesPerSecond)} envelopes/s on ${ANALYZER_THREADS} workers (analyzer ${fmt(r.phaseA.cpu.analyzer)} %, clickhouse ${fmt(r.phaseA.cpu.clickhouse)} %, `
        + `postgres ${fmt(r.phaseA.cpu.postgres)} % of a core); incidents' affectedRecords EQUAL to drifted envelopes`,
    );
  }
  if (r.phaseB) {
    const b = r.phaseB;
    console.log(
      `sustained @${fmt(b.rate)}/s: accepted ${fmt(b.acceptedEnvelopesPerSecond)}/s; edge p50/p99 ${fmt(b.edgeLatencyMs.p50, 1)}/${fmt(b.edgeLatencyMs.p99, 1)} ms `
        + `(target p99 <= ${TARGETS.edgeP99Ms}: ${ok(b.edgeLatencyMs.p99 <= TARGETS.edgeP99Ms)}); lag (Summary at load end) p50/p99 ${fmt(b.summaryAtLoadEnd.p50, 3)}/${fmt(b.summaryAtLoadEnd.p99, 3)} s `
        + `(target p99 <= ${TARGETS.lagP99S}: ${ok(b.summaryAtLoadEnd.p99 <= TARGETS.lagP99S)}); within 2 s ${fmt(100 * b.measured.shareWithin['2'], 2)} %; `
        + `start lag p50/p99 ${fmt(b.startLagS.p50, 3)}/${fmt(b.startLagS.p99, 3)} s; drain ${fmt(b.drainSeconds, 2)} s (target <= ${TARGETS.drainS}: ${ok(b.drainSeconds <= TARGETS.drainS)})`,
    );
    console.log(
      `  cpu % of a core: edge ${fmt(b.cpu.edge)}, analyzer ${fmt(b.cpu.analyzer)}, driver ${fmt(b.cpu.driver)}, redis ${fmt(b.cpu.redis)}, `
        + `clickhouse ${fmt(b.cpu.clickhouse)}, postgres ${fmt(b.cpu.postgres)}; machine ${fmt(b.cpu.machineBusy)} % busy`,
    );
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1); // the 'exit' hook of benchProcess.ts kills the children
  },
);
