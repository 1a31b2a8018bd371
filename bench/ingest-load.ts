// Ingest load driver (issues 4 and 17): many signed Live collectors against the edge, and in the
// same run the two references — the bare uWebSockets.js ceiling and the same pipeline behind
// Fastify. Each server runs in its own child process (bench/ingest-target.ts). From the project root:
//
//   npm run bench:ingest-load -- --duration 10
//   node dist/bench/ingest-load.js [--target all|<target>,...] [--duration 60] [--warmup 3]
//        [--mode all|both|<phase>,...] [--concurrent-collectors 64] [--collector-batch 20]
//        [--half-rate <envelopes/s>] [--rate 25000|half] [--concurrency 128] [--collectors 12]
//        [--workspaces 3] [--json results.json] [--keep-data] [--target-node-args "--cpu-prof ..."]
//        [--target-stdout file]
//
// Targets: ceiling, edge, fastify (`all`, in that order), and fastify-ceiling (only when named:
// the ceiling's work behind Fastify, to set beside the ceiling).
//
// Phases of each target (`all`: the four, in this order; `both`: open, closed):
// - collectors: `concurrent-collectors` collectors of their own, each with exactly one
//   `collector-batch`-envelope batch in flight (issue 17's `wrk -c64` measurement);
// - half: an open loop of those collectors' batches at half the target's collectors rate of this
//   run (or `--half-rate`);
// - open: batches of 50 sent on a fixed schedule of `rate` envelopes/s; latency counts from the
//   scheduled send time, so queueing in the driver or the server counts (`--rate half`: half the
//   target's closed-loop rate of this run);
// - closed: `concurrency` requests of 50 envelopes always in flight (max throughput).
// See bench/README.md for what it prints.

import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createClient, type ClickHouseClient } from '@clickhouse/client';
import { Pool } from 'undici';
import { sqlLiteral } from '../shared/clickhouse/escape.js';
import { loadConfig } from '../shared/config.js';
import {
  BENCH_STORES,
  BatchTemplate,
  ENVELOPES_PER_BATCH,
  LoadGenerator,
  Recorder,
  SLICE_MS,
  benchEdgeEnv,
  createBenchCollectors,
  flushBenchRedis,
  fmt,
  machineCpu,
  prepareBenchDatabases,
  processCpuSeconds,
  stopChild,
  storePid,
  tokenKey,
  type BenchCollector,
  type Sender,
} from './ingest-common.js';
import { RawHttpClient } from './rawHttp.js';

type Target = 'edge' | 'fastify' | 'ceiling' | 'fastify-ceiling';
type Phase = 'collectors' | 'half' | 'open' | 'closed';
/** `--mode all`, in the order they run: `half` needs the collectors' rate, and the open loop comes before the full-load closed loop. */
const PHASES: Phase[] = ['collectors', 'half', 'open', 'closed'];
/** `all`: the issue's three targets. `fastify-ceiling` (the ceiling's work behind Fastify) only when named. */
const TARGETS: Target[] = ['ceiling', 'edge', 'fastify'];
const KNOWN_TARGETS: Target[] = [...TARGETS, 'fastify-ceiling'];

// ------------------------------------------------------------------ options

function parseArgs(argv: string[]): Map<string, string> {
  const options = new Map<string, string>();
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i];
    if (!arg.startsWith('--')) throw new Error(`unexpected argument ${arg}`);
    const [name, inline] = arg.slice(2).split('=', 2);
    if (inline !== undefined) options.set(name, inline);
    else if (i + 1 < argv.length && (!argv[i + 1].startsWith('--') || name === 'target-node-args')) options.set(name, argv[++i]);
    else options.set(name, 'true');
  }
  return options;
}

const args = parseArgs(process.argv.slice(2));
const num = (name: string, env: string, fallback: number) => {
  const raw = args.get(name) ?? process.env[env];
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`--${name} must be a positive number, got ${raw}`);
  return value;
};
const targetArg = args.get('target') ?? process.env.BENCH_TARGET ?? 'all';
const targets = targetArg === 'all' ? TARGETS : (targetArg.split(',') as Target[]);
if (!targets.every((target) => KNOWN_TARGETS.includes(target)))
  throw new Error('--target must be all or a comma-separated list of edge, fastify, ceiling, fastify-ceiling');
const mode = args.get('mode') ?? process.env.BENCH_MODE ?? 'all';
const requestedPhases = mode === 'all' ? PHASES : mode === 'both' ? ['open', 'closed'] : mode.split(',');
if (!requestedPhases.every((phase) => (PHASES as string[]).includes(phase)))
  throw new Error('--mode must be all, both or a comma-separated list of collectors, half, open, closed');
const halfRateArg = args.get('half-rate') ?? process.env.BENCH_HALF_RATE;
const options = {
  targets,
  durationS: num('duration', 'BENCH_DURATION', 60),
  warmupS: num('warmup', 'BENCH_WARMUP', 3),
  mode,
  rate: args.get('rate') ?? process.env.BENCH_RATE ?? '25000',
  concurrency: num('concurrency', 'BENCH_CONCURRENCY', 128),
  /** The collectors phase: this many collectors, each with one batch of `collectorBatch` envelopes in flight. */
  concurrentCollectors: Math.round(num('concurrent-collectors', 'BENCH_CONCURRENT_COLLECTORS', 64)),
  collectorBatch: Math.round(num('collector-batch', 'BENCH_COLLECTOR_BATCH', 20)),
  /** The half phase's rate (envelopes/s) when set; otherwise half the target's collectors rate of this run. */
  halfRate: halfRateArg === undefined ? undefined : num('half-rate', 'BENCH_HALF_RATE', 0),
  collectors: num('collectors', 'BENCH_COLLECTORS', 12),
  workspaces: num('workspaces', 'BENCH_WORKSPACES', 3),
  json: args.get('json'),
  /** Extra node flags of the server processes, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof". */
  targetNodeArgs: args.get('target-node-args') ?? process.env.BENCH_TARGET_NODE_ARGS,
  keepData: args.has('keep-data'),
  /** A file that receives the servers' standard output (e.g. with --target-node-args --trace-gc). */
  targetStdout: args.get('target-stdout'),
};
if (options.rate !== 'half' && !(Number(options.rate) > 0)) throw new Error('--rate must be envelopes/s or "half"');
if (options.rate === 'half' && requestedPhases.includes('open') && !requestedPhases.includes('closed'))
  throw new Error('--rate half needs the closed phase');
if (requestedPhases.includes('half') && !requestedPhases.includes('collectors') && options.halfRate === undefined) {
  throw new Error('the half phase needs the collectors phase or --half-rate');
}
/** Canonical order whatever the order asked; closed before open when the open loop's rate is half the closed loop's. */
const phaseOrder: Phase[] = options.rate === 'half' ? ['collectors', 'half', 'closed', 'open'] : PHASES;
const phases = phaseOrder.filter((phase) => requestedPhases.includes(phase));
const usesCollectorShape = phases.includes('collectors') || phases.includes('half');
const usesBulkShape = phases.includes('open') || phases.includes('closed');

// ------------------------------------------------------------------ CPU accounting (helpers in ingest-common.ts)

interface CpuSnapshot {
  at: number;
  driver: number;
  target: number;
  redis: number;
  clickhouse: number;
  machine: { busy: number; total: number; interrupts: number };
}

const CORES = cpus().length;
const stackPids = {
  redis: storePid(BENCH_STORES.REDIS_URL, 6379, 'redis-server'),
  clickhouse: storePid(BENCH_STORES.CLICKHOUSE_URL, 8123, 'clickhouse-serv'),
};

function cpuSnapshot(targetPid: number): CpuSnapshot {
  const usage = process.cpuUsage();
  return {
    at: performance.now(),
    driver: (usage.user + usage.system) / 1e6,
    target: processCpuSeconds(targetPid),
    redis: stackPids.redis === null ? NaN : processCpuSeconds(stackPids.redis),
    clickhouse: stackPids.clickhouse === null ? NaN : processCpuSeconds(stackPids.clickhouse),
    machine: machineCpu(),
  };
}

/** CPU use between two snapshots, in % of one core (200 % = both cores of the machine). */
function cpuBetween(a: CpuSnapshot, b: CpuSnapshot) {
  const seconds = (b.at - a.at) / 1000;
  const pct = (x: number, y: number) => ((y - x) / seconds) * 100;
  return {
    driver: pct(a.driver, b.driver),
    target: pct(a.target, b.target),
    redis: pct(a.redis, b.redis),
    clickhouse: pct(a.clickhouse, b.clickhouse),
    machineBusy: ((b.machine.busy - a.machine.busy) / (b.machine.total - a.machine.total)) * 100,
    /** Interrupts, in % of one core (the machine's figures are shares of all cores). */
    interrupts: ((b.machine.interrupts - a.machine.interrupts) / (b.machine.total - a.machine.total)) * 100 * CORES,
  };
}

// ------------------------------------------------------------------ load generation (Sender, Recorder, LoadGenerator in ingest-common.ts)

interface PhaseResult {
  phase: Phase;
  seconds: number;
  /** Envelopes per batch. */
  batchSize: number;
  /** Closed loops: requests in flight (collectors: one per collector). */
  inFlight?: number;
  /** Open loops (half, open): the requested rate (envelopes/s). */
  rate?: number;
  requests: number;
  accepted202: number;
  envelopesPerSecond: number;
  requestsPerSecond: number;
  latencyMs: { p50: number; p90: number; p99: number; max: number; mean: number };
  /** p99 (ms) of the requests sent in each 10-second slice of the phase: does the tail grow? */
  p99BySlice: number[];
  statuses: Record<string, number>;
  /** Open loop: scheduled sends skipped because too many requests were outstanding. */
  skipped?: number;
  cpu?: ReturnType<typeof cpuBetween>;
  /** Collectors and closed phases of a target other than the ceiling: the ceiling's envelopes/s in the same phase of this run, and this rate's share of it. */
  ceiling?: { envelopesPerSecond: number; share: number };
  /** Persisting targets: what ClickHouse received during the phase (see insertBlocks). */
  clickhouse?: { inserts: number; insertsPerSecond: number; activePartsAtEnd: number };
  /** Persisting targets: seconds waited before the phase for the stores to settle (see settle). */
  settleSeconds?: number;
  /** Edge and Fastify: the server's /metrics over this phase. */
  server?: ServerStats;
  errorSample?: string;
}

// ------------------------------------------------------------------ ClickHouse checks

const receiptPartition = () => new Date().toISOString().slice(0, 7).replace('-', '');

/** The MergeTree table that holds the bench's observations on this server (set by resolveLocalTable). */
const localTable = { database: BENCH_STORES.CLICKHOUSE_DATABASE, table: 'observations' };
const localTableName = () => `${localTable.database}.${localTable.table}`;
const localTableFilter = () => `database = ${sqlLiteral(localTable.database)} AND table = ${sqlLiteral(localTable.table)}`;

/**
 * `observations` itself, or, when it is a `Distributed` table (ClickHouse on a cluster), the local
 * table it writes to: parts and inserts are the local table's. BENCH_CLICKHOUSE_LOCAL_TABLE
 * (`table` or `database.table`) overrides it.
 */
async function resolveLocalTable(clickhouse: ClickHouseClient): Promise<void> {
  const override = process.env.BENCH_CLICKHOUSE_LOCAL_TABLE;
  if (override) {
    const [database, table] = override.includes('.') ? override.split('.', 2) : [BENCH_STORES.CLICKHOUSE_DATABASE, override];
    Object.assign(localTable, { database, table });
    return;
  }
  const result = await clickhouse.query({
    query: `SELECT engine, engine_full FROM system.tables WHERE database = ${sqlLiteral(BENCH_STORES.CLICKHOUSE_DATABASE)} AND name = 'observations'`,
    format: 'JSONEachRow',
  });
  const row = (await result.json<{ engine: string; engine_full: string }>())[0];
  if (row?.engine !== 'Distributed') return;
  // Distributed(cluster, database, table[, sharding key]); the database may be currentDatabase().
  const match = /^Distributed\(\s*[^,]+,\s*([^,]+?)\s*,\s*([^,)]+?)\s*[,)]/.exec(row.engine_full);
  if (!match) throw new Error(`cannot read the local table of ${row.engine_full}`);
  const unquote = (name: string) => name.replace(/^['"`]|['"`]$/g, '');
  const database = /\(\)$/.test(match[1]) ? BENCH_STORES.CLICKHOUSE_DATABASE : unquote(match[1]);
  Object.assign(localTable, { database, table: unquote(match[2]) });
}

async function activeParts(clickhouse: ClickHouseClient): Promise<number> {
  const result = await clickhouse.query({
    query: `SELECT count() AS n FROM system.parts WHERE ${localTableFilter()} AND active AND partition_id = ${sqlLiteral(receiptPartition())}`,
    format: 'JSONEachRow',
  });
  return Number((await result.json<{ n: string }>())[0].n);
}

/** Active parts of the whole local table (every partition). */
async function activePartsAll(clickhouse: ClickHouseClient): Promise<number> {
  const result = await clickhouse.query({
    query: `SELECT count() AS n FROM system.parts WHERE ${localTableFilter()} AND active`,
    format: 'JSONEachRow',
  });
  return Number((await result.json<{ n: string }>())[0].n);
}

interface BlockNumbers {
  parts: number;
  low: number;
  high: number;
}

/**
 * Block numbers of the local table's parts, active or not yet deleted. A MergeTree table numbers
 * every part an insert writes (one per partition the insert touches; the bench's rows all fall in
 * the current month's) from one counter, and a merged part keeps the range of its sources, so the
 * highest number grows by exactly the inserts in between. ClickHouse 18.16 keeps no query_log
 * unless the inserting client asks and no part_log without server configuration, and
 * system.events counts the other users' inserts on this shared server too.
 */
async function insertBlocks(clickhouse: ClickHouseClient): Promise<BlockNumbers> {
  const result = await clickhouse.query({
    query: `SELECT count() AS parts, min(min_block_number) AS low, max(max_block_number) AS high FROM system.parts WHERE ${localTableFilter()}`,
    format: 'JSONEachRow',
  });
  const row = (await result.json<{ parts: string; low: string; high: string }>())[0];
  return { parts: Number(row.parts), low: Number(row.low), high: Number(row.high) };
}

/** Inserts between two readings; with no part at the first (a truncated table), the range of the second. */
const insertsBetween = (a: BlockNumbers, b: BlockNumbers) => (a.parts > 0 ? b.high - a.high : b.parts > 0 ? b.high - b.low + 1 : 0);

async function mergesRunning(clickhouse: ClickHouseClient): Promise<number> {
  const result = await clickhouse.query({
    query: `SELECT count() AS n FROM system.merges WHERE database = ${sqlLiteral(localTable.database)}`,
    format: 'JSONEachRow',
  });
  return Number((await result.json<{ n: string }>())[0].n);
}

/**
 * Empties the bench stores: Redis flushed (and its append-only file rewritten, see
 * flushBenchRedis) and the observations truncated, both attempted even if the other fails, then
 * waits (at most 60 s) until no merge of them runs. At the start and end of a run, and between
 * targets so that every target starts from the same stores: without that, the Fastify adapter
 * ran with the edge's 6 million eventIds in Redis and its open loop right after the edge's
 * full-load minute (p99 571 ms in one run, while ClickHouse merged).
 */
async function resetBenchStores(clickhouse: ClickHouseClient): Promise<void> {
  await Promise.all([flushBenchRedis(), clickhouse.command({ query: `TRUNCATE TABLE IF EXISTS ${localTableName()}` })]);
  for (let second = 0; second < 60; second += 1) {
    if ((await mergesRunning(clickhouse)) === 0) break;
    await new Promise((done) => setTimeout(done, 1_000));
  }
}

/**
 * Waits (at most 60 s) until every envelope answered 202 so far is in ClickHouse and no merge of
 * the bench database runs, so that a phase neither measures the previous one's merges nor ends
 * with rows still on their way (an edge that answers before its rows reach ClickHouse ships them
 * later). Returns the seconds waited; false in `complete` when 60 s were not enough.
 */
async function settle(
  clickhouse: ClickHouseClient,
  collectors: BenchCollector[],
  eventIdPrefix: string,
  accepted: () => number,
): Promise<{ seconds: number; complete: boolean }> {
  const started = performance.now();
  while (performance.now() - started < 60_000) {
    const [{ rows }, merges] = await Promise.all([rowsOf(clickhouse, collectors, eventIdPrefix, false), mergesRunning(clickhouse)]);
    if (rows >= accepted() && merges === 0) return { seconds: (performance.now() - started) / 1000, complete: true };
    await new Promise((done) => setTimeout(done, 250));
  }
  return { seconds: (performance.now() - started) / 1000, complete: false };
}

async function rowsOf(
  clickhouse: ClickHouseClient,
  collectors: BenchCollector[],
  eventIdPrefix: string,
  distinct = true,
): Promise<{ rows: number; distinct: number }> {
  const result = await clickhouse.query({
    query: `SELECT count() AS rows, ${distinct ? 'uniqExact(connection_id, event_id)' : '0'} AS distinct FROM observations
             WHERE connection_id IN (${collectors.map((c) => sqlLiteral(c.connectionId)).join(', ')})
               AND event_id LIKE ${sqlLiteral(`evt_${eventIdPrefix}%`)}`,
    format: 'JSONEachRow',
  });
  const row = (await result.json<{ rows: string; distinct: string }>())[0];
  return { rows: Number(row.rows), distinct: Number(row.distinct) };
}

/** Sums of a few counters of the edge's /metrics (Prometheus text); `<histogram>_bucket:<le>` names one bucket. */
function metricSums(text: string, names: string[]): Record<string, number> {
  const sums: Record<string, number> = Object.fromEntries(names.map((name) => [name, 0]));
  for (const line of text.split('\n')) {
    const match = /^([a-z_]+)(?:\{([^}]*)\})? (\S+)$/.exec(line);
    if (!match) continue;
    // Named by the stage (if any), then the bucket's bound (if any); other labels are summed over.
    const labels = match[2] ?? '';
    const stage = /stage="([^"]+)"/.exec(labels)?.[1];
    const le = /le="([^"]+)"/.exec(labels)?.[1];
    const name = [match[1], stage, le].filter((part) => part !== undefined).join(':');
    if (name in sums) sums[name] += Number(match[3]);
  }
  return sums;
}

const STAGES = ['check', 'log', 'commit'];

const SERVER_METRICS = [
  'ingest_insert_rows_count',
  'ingest_insert_rows_sum',
  'ingest_insert_duration_seconds_sum',
  'ingest_insert_failures_total',
  'ingest_admission_duration_seconds_sum',
  'ingest_admission_duration_seconds_count',
  'ingest_request_duration_seconds_sum',
  'ingest_request_duration_seconds_count',
  'ingest_request_duration_seconds_bucket:0.025',
  'ingest_request_duration_seconds_bucket:0.15',
  'ingest_insert_duration_seconds_bucket:0.05',
  'ingest_insert_duration_seconds_bucket:0.1',
  ...STAGES.flatMap((stage) => [
    `ingest_stage_duration_seconds_sum:${stage}`,
    `ingest_stage_duration_seconds_count:${stage}`,
    `ingest_stage_duration_seconds_bucket:${stage}:0.025`,
  ]),
];

/** What the server's own /metrics say about a stretch of the run (difference of two scrapes). */
interface ServerStats {
  inserts: number;
  rowsPerInsert: number;
  /** Rows the shipper inserted into ClickHouse. */
  rowsShipped: number;
  meanInsertMs: number;
  /** Shares of inserts that took longer than 50 and 100 ms. */
  insertsOver50: number;
  insertsOver100: number;
  insertFailures: number;
  /** Mean duration of the admission script call as the edge sees it (event-loop waits included). */
  meanAdmissionMs: number;
  /** The other stages of a batch (ingest_stage_duration_seconds): mean duration and share over 25 ms. */
  stages: Record<string, { meanMs: number; over25: number }>;
  /** Mean time from a complete request body to the answer, inside the server. */
  meanServerMs: number;
  /** Share of requests that took longer than 25 and 150 ms inside the server. */
  serverOver25: number;
  serverOver150: number;
}

async function scrapeMetrics(pool: Pool): Promise<Record<string, number>> {
  const res = await pool.request({ path: '/metrics', method: 'GET' });
  return metricSums(await res.body.text(), SERVER_METRICS);
}

function serverStats(a: Record<string, number>, b: Record<string, number>): ServerStats {
  const d = (name: string) => b[name] - (a[name] ?? 0);
  const inserts = d('ingest_insert_rows_count');
  const admissions = d('ingest_admission_duration_seconds_count');
  const requests = d('ingest_request_duration_seconds_count');
  return {
    inserts,
    rowsPerInsert: inserts ? d('ingest_insert_rows_sum') / inserts : 0,
    rowsShipped: d('ingest_insert_rows_sum'),
    meanInsertMs: inserts ? (d('ingest_insert_duration_seconds_sum') / inserts) * 1000 : 0,
    insertsOver50: inserts ? 1 - d('ingest_insert_duration_seconds_bucket:0.05') / inserts : 0,
    insertsOver100: inserts ? 1 - d('ingest_insert_duration_seconds_bucket:0.1') / inserts : 0,
    insertFailures: d('ingest_insert_failures_total'),
    meanAdmissionMs: admissions ? (d('ingest_admission_duration_seconds_sum') / admissions) * 1000 : 0,
    stages: Object.fromEntries(
      STAGES.map((stage) => {
        const count = d(`ingest_stage_duration_seconds_count:${stage}`);
        return [
          stage,
          count
            ? {
                meanMs: (d(`ingest_stage_duration_seconds_sum:${stage}`) / count) * 1000,
                over25: 1 - d(`ingest_stage_duration_seconds_bucket:${stage}:0.025`) / count,
              }
            : { meanMs: 0, over25: 0 },
        ];
      }),
    ),
    meanServerMs: requests ? (d('ingest_request_duration_seconds_sum') / requests) * 1000 : 0,
    serverOver25: requests ? 1 - d('ingest_request_duration_seconds_bucket:0.025') / requests : 0,
    serverOver150: requests ? 1 - d('ingest_request_duration_seconds_bucket:0.15') / requests : 0,
  };
}

const printServerStats = (label: string, g: ServerStats) =>
  console.log(
    `   ${label}: ${fmt(g.inserts)} inserts, ${fmt(g.rowsPerInsert)} rows/insert, `
      + `mean insert ${fmt(g.meanInsertMs, 1)} ms (${fmt(100 * g.insertsOver50, 1)} % over 50 ms, ${fmt(100 * g.insertsOver100, 1)} % over 100), `
      + `${g.insertFailures} failed; mean admission call ${fmt(g.meanAdmissionMs, 1)} ms, `
      + `${STAGES.map((stage) => `${stage} ${fmt(g.stages[stage].meanMs, 1)} ms (${fmt(100 * g.stages[stage].over25, 1)} % over 25)`).join(', ')}; `
      + `mean in-server time ${fmt(g.meanServerMs, 1)} ms, ${fmt(100 * g.serverOver25, 2)} % over 25 ms and ${fmt(100 * g.serverOver150, 2)} % over 150 ms in the server`,
  );

// ------------------------------------------------------------------ targets

const here = dirname(fileURLToPath(import.meta.url));
const children = new Set<ChildProcess>();

function killChildren(signal: NodeJS.Signals = 'SIGKILL'): void {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill(signal);
}
process.on('exit', () => killChildren());
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    killChildren();
    process.exit(130);
  });
}

const isCeiling = (target: Target) => target === 'ceiling' || target === 'fastify-ceiling';

async function startTarget(target: Target, collectors: BenchCollector[]): Promise<{ child: ChildProcess; port: number }> {
  const env: Record<string, string | undefined> = { ...process.env, ...benchEdgeEnv(), INGEST_HOST: '127.0.0.1', INGEST_PORT: '0' };
  if (isCeiling(target))
    env.BENCH_CEILING_TOKENS = JSON.stringify(Object.fromEntries(collectors.map((c) => [c.connectionKey, c.ingestToken])));
  const nodeArgs = options.targetNodeArgs ? options.targetNodeArgs.split(/\s+/).filter(Boolean) : [];
  const child = spawn(process.execPath, [...nodeArgs, resolve(here, 'ingest-target.js'), target], {
    env,
    stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
  });
  children.add(child);
  child.once('exit', () => children.delete(child));
  const port = await new Promise<number>((resolvePort, reject) => {
    const timer = setTimeout(() => reject(new Error(`${target} did not start within 30 s`)), 30_000);
    let buffered = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      if (options.targetStdout) appendFileSync(options.targetStdout, chunk);
      buffered += chunk.toString('utf8');
      const line = buffered.split('\n').find((l) => l.startsWith('{"ready"'));
      if (line) {
        clearTimeout(timer);
        resolvePort((JSON.parse(line) as { port: number }).port);
      }
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${target} exited before it was ready (code ${code}, signal ${signal})`));
    });
  });
  return { child, port };
}

interface TargetResult {
  target: Target;
  phases: PhaseResult[];
  clickhouse?: {
    partsBefore: number;
    partsMax: number;
    partsAfter: number;
    rows: number;
    distinctRows: number;
    accepted202Envelopes: number;
    equal: boolean;
  };
  /** The server's /metrics over the whole target run, warm-up included. */
  wholeRun?: ServerStats;
}

/** One way of loading a target: its senders' batches, its connections, and whether it was warmed up. */
interface LoadShape {
  load: LoadGenerator;
  client: RawHttpClient;
  warmUp(): Promise<unknown>;
  warmed: boolean;
}

/** What a phase is called in the printed lines and the summary. */
function phaseLabel(p: Pick<PhaseResult, 'phase' | 'inFlight' | 'batchSize' | 'rate'>): string {
  switch (p.phase) {
    case 'collectors':
      return `${p.inFlight} collectors x ${p.batchSize}`;
    case 'half':
      return `half @${fmt(p.rate ?? 0)}/s x ${p.batchSize}`;
    case 'open':
      return `open @${fmt(p.rate ?? 0)}/s`;
    case 'closed':
      return `closed ${p.inFlight} x ${p.batchSize}`;
  }
}

/**
 * `rateOf`: envelopes/s of each `<target>/<phase>` closed loop measured so far in this run (the
 * half and `--rate half` open loops, and the share of the ceiling, come from it).
 */
async function runTarget(
  target: Target,
  collectors: BenchCollector[],
  clickhouse: ClickHouseClient,
  runId: string,
  rateOf: Map<string, number>,
): Promise<TargetResult> {
  const persisting = !isCeiling(target);
  const eventIdPrefix = `${runId}${KNOWN_TARGETS.indexOf(target)}`;
  const occurredAt = new Date().toISOString();
  const partsBefore = persisting ? await activeParts(clickhouse) : 0;
  const { child, port } = await startTarget(target, collectors);
  const sendersOf = (of: BenchCollector[], prefix: string, size: number): Sender[] =>
    of.map((collector) => ({
      collector,
      key: tokenKey(collector.ingestToken),
      template: new BatchTemplate(collector.integrationKey, prefix, occurredAt, size),
      headPrefix:
        `POST /ingest HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\ncontent-type: application/json\r\n`
        + `x-service-connection: ${collector.connectionKey}\r\nauthorization: Bearer ${collector.ingestToken}\r\nx-service-signature: `,
      spareBodies: [],
    }));
  const origin = `http://127.0.0.1:${port}`;
  // uWebSockets.js closes a keep-alive connection after 10 s idle (so does the ceiling, and
  // Fastify after 72 s): the driver lets its idle connections go first, at 4 s, or a request sent
  // as the server closes the socket meets ECONNRESET (seen in the open loop, which leaves many of
  // the closed loop's connections idle).
  const shapes: { bulk?: LoadShape; collectors?: LoadShape } = {};
  if (usesBulkShape) {
    // 50-envelope batches round-robin over the first `--collectors` collectors, eventIds evt_<prefix><digits>.
    const client = new RawHttpClient('127.0.0.1', port, options.concurrency, 4_000);
    const load = new LoadGenerator(client, sendersOf(collectors.slice(0, options.collectors), eventIdPrefix, ENVELOPES_PER_BATCH));
    shapes.bulk = { load, client, warmed: false, warmUp: () => load.closedLoop(options.concurrency, options.warmupS, null) };
  }
  if (usesCollectorShape) {
    // One sender and one connection per collector; eventIds evt_<prefix>c<digits>, apart from the bulk ones.
    const client = new RawHttpClient('127.0.0.1', port, options.concurrentCollectors, 4_000);
    const load = new LoadGenerator(
      client,
      sendersOf(collectors.slice(0, options.concurrentCollectors), `${eventIdPrefix}c`, options.collectorBatch),
    );
    shapes.collectors = { load, client, warmed: false, warmUp: () => load.collectorLoop(options.warmupS, null) };
  }
  const shapeList = Object.values(shapes);
  const accepted202Envelopes = () => shapeList.reduce((sum, shape) => sum + shape.load.totalAccepted202Envelopes, 0);
  // /metrics only: a few requests per phase.
  const pool = new Pool(origin, { connections: 1 });
  const result: TargetResult = { target, phases: [] };
  let partsMax = partsBefore;
  const partsTimer = persisting
    ? setInterval(() => {
        activeParts(clickhouse).then(
          (n) => {
            partsMax = Math.max(partsMax, n);
          },
          () => undefined,
        );
      }, 5_000)
    : null;
  try {
    console.log(`\n== ${target} (pid ${child.pid}, ${origin})`);
    for (const phase of phases) {
      const shape = (phase === 'collectors' || phase === 'half' ? shapes.collectors : shapes.bulk)!;
      if (!shape.warmed) {
        console.log(
          `   warm-up ${options.warmupS} s (${shape === shapes.collectors ? `${options.concurrentCollectors} collectors x ${options.collectorBatch}` : `closed ${options.concurrency} x ${ENVELOPES_PER_BATCH}`}, not measured)`,
        );
        await shape.warmUp();
        shape.warmed = true;
      }
      let settleSeconds: number | undefined;
      if (persisting) {
        const settled = await settle(clickhouse, collectors, eventIdPrefix, accepted202Envelopes);
        settleSeconds = settled.seconds;
        if (!settled.complete)
          console.log(
            `   WARNING: rows still missing in ClickHouse or merges running after ${fmt(settled.seconds, 1)} s; measuring anyway`,
          );
      }
      const recorder = new Recorder();
      const metricsBefore = persisting ? await scrapeMetrics(pool) : null;
      const blocksBefore = persisting ? await insertBlocks(clickhouse) : null;
      const before = cpuSnapshot(child.pid!);
      let seconds: number;
      let rate: number | undefined;
      let skipped: number | undefined;
      let inFlight: number | undefined;
      if (phase === 'collectors') {
        inFlight = options.concurrentCollectors;
        console.log(
          `   collectors: ${inFlight} collectors, each with one ${options.collectorBatch}-envelope batch in flight, for ${options.durationS} s`,
        );
        seconds = await shape.load.collectorLoop(options.durationS, recorder);
      } else if (phase === 'closed') {
        inFlight = options.concurrency;
        console.log(`   closed loop: ${inFlight} in flight for ${options.durationS} s`);
        seconds = await shape.load.closedLoop(options.concurrency, options.durationS, recorder);
      } else {
        rate =
          phase === 'half'
            ? (options.halfRate ?? Math.round((rateOf.get(`${target}/collectors`) ?? 0) / 2))
            : options.rate === 'half'
              ? Math.round((rateOf.get(`${target}/closed`) ?? 0) / 2)
              : Number(options.rate);
        console.log(
          `   ${phase === 'half' ? 'half' : 'open'} loop: ${fmt(rate)} envelopes/s in ${shape.load.batchSize}-envelope batches for ${options.durationS} s`,
        );
        const maxOutstanding = Math.max(4 * (phase === 'half' ? options.concurrentCollectors : options.concurrency), 1024);
        const open = await shape.load.openLoop(rate, options.durationS, maxOutstanding, recorder);
        seconds = open.seconds;
        skipped = open.skipped;
      }
      const cpu = cpuBetween(before, cpuSnapshot(child.pid!));
      const blocksAfter = persisting ? await insertBlocks(clickhouse) : null;
      const server = metricsBefore ? serverStats(metricsBefore, await scrapeMetrics(pool)) : undefined;
      const envelopesPerSecond = (recorder.acceptedInWindow * shape.load.batchSize) / seconds;
      const ceilingRate = phase === 'collectors' || phase === 'closed' ? rateOf.get(`ceiling/${phase}`) : undefined;
      const phaseResult: PhaseResult = {
        ...(server ? { server } : {}),
        phase,
        seconds,
        batchSize: shape.load.batchSize,
        ...(inFlight === undefined ? {} : { inFlight }),
        ...(rate === undefined ? {} : { rate }),
        requests: recorder.requests,
        accepted202: recorder.accepted202,
        envelopesPerSecond,
        requestsPerSecond: recorder.completedInWindow / seconds,
        latencyMs: recorder.latency(),
        p99BySlice: recorder.p99BySlice(),
        statuses: recorder.statuses,
        cpu,
        ...(target !== 'ceiling' && ceilingRate
          ? { ceiling: { envelopesPerSecond: ceilingRate, share: envelopesPerSecond / ceilingRate } }
          : {}),
        ...(blocksBefore && blocksAfter
          ? {
              clickhouse: {
                inserts: insertsBetween(blocksBefore, blocksAfter),
                insertsPerSecond: insertsBetween(blocksBefore, blocksAfter) / seconds,
                activePartsAtEnd: await activePartsAll(clickhouse),
              },
            }
          : {}),
        ...(settleSeconds === undefined ? {} : { settleSeconds }),
        ...(skipped === undefined ? {} : { skipped }),
        ...(recorder.errorSample === undefined ? {} : { errorSample: recorder.errorSample }),
      };
      if (inFlight !== undefined) rateOf.set(`${target}/${phase}`, envelopesPerSecond);
      result.phases.push(phaseResult);
      printPhase(phaseResult);
    }
    if (persisting) {
      result.wholeRun = serverStats({}, await scrapeMetrics(pool));
      // Rows answered 202 but still on their way to ClickHouse would read as a mismatch.
      const settled = await settle(clickhouse, collectors, eventIdPrefix, accepted202Envelopes);
      if (!settled.complete) console.log(`   WARNING: rows still missing in ClickHouse ${fmt(settled.seconds, 1)} s after the last phase`);
    }
  } finally {
    if (partsTimer) clearInterval(partsTimer);
    for (const shape of shapeList) shape.client.close();
    await pool.close().catch(() => undefined);
    await stopChild(child);
  }
  if (persisting) {
    const partsAfter = await activeParts(clickhouse);
    const { rows, distinct } = await rowsOf(clickhouse, collectors, eventIdPrefix);
    const accepted = accepted202Envelopes();
    result.clickhouse = {
      partsBefore,
      partsMax: Math.max(partsMax, partsAfter),
      partsAfter,
      rows,
      distinctRows: distinct,
      accepted202Envelopes: accepted,
      equal: rows === accepted && distinct === rows,
    };
    printServerStats('server, whole run incl. warm-up', result.wholeRun!);
    console.log(
      `   clickhouse: active parts of ${localTableName()} in partition ${receiptPartition()}: before ${partsBefore}, max sampled ${result.clickhouse.partsMax}, after ${partsAfter}`,
    );
    console.log(
      `   clickhouse: rows of this target ${fmt(rows)} (distinct ${fmt(distinct)}) vs envelopes answered 202 (warm-up included) `
        + `${fmt(accepted)}: ${result.clickhouse.equal ? 'EQUAL' : 'MISMATCH'}`,
    );
  }
  return result;
}

function printPhase(p: PhaseResult): void {
  const l = p.latencyMs;
  const statuses = Object.entries(p.statuses)
    .map(([status, count]) => `${status}×${fmt(count)}`)
    .join(', ');
  console.log(
    `   ${phaseLabel(p)}: ${fmt(p.envelopesPerSecond)} envelopes/s accepted, `
      + `${fmt(p.requestsPerSecond)} requests/s over ${fmt(p.seconds, 1)} s${(p.settleSeconds ?? 0) >= 0.05 ? ` (after ${fmt(p.settleSeconds!, 1)} s settling)` : ''}`,
  );
  if (p.ceiling)
    console.log(
      `     verify+parse ceiling in this run (ceiling target, same phase): ${fmt(p.ceiling.envelopesPerSecond)} envelopes/s; this phase = ${p.ceiling.share.toFixed(3)} of it`,
    );
  console.log(
    `     latency ms: p50 ${fmt(l.p50, 1)}, p90 ${fmt(l.p90, 1)}, p99 ${fmt(l.p99, 1)}, max ${fmt(l.max, 1)} (mean ${fmt(l.mean, 1)})`,
  );
  console.log(`     p99 ms by ${SLICE_MS / 1000}-s slice of sending: ${p.p99BySlice.map((value) => fmt(value, 0)).join(', ')}`);
  const non202 = Object.entries(p.statuses).filter(([status]) => status !== '202');
  console.log(
    `     statuses: ${statuses || 'none'}${non202.length ? `; non-202: ${non202.map(([s, n]) => `${s}×${n}`).join(', ')}` : '; non-202: none'}`
      + `${p.skipped ? `; skipped sends (>${'max outstanding'}): ${p.skipped}` : ''}`,
  );
  if (p.errorSample) console.log(`     first non-202: ${p.errorSample}`);
  if (p.clickhouse) {
    console.log(
      `     clickhouse: ${fmt(p.clickhouse.inserts)} inserts into ${localTableName()} (${fmt(p.clickhouse.insertsPerSecond, 2)}/s), `
        + `${fmt(p.clickhouse.activePartsAtEnd)} active parts at the end`,
    );
  }
  if (p.server) {
    printServerStats('  server /metrics', p.server);
    // The log absorbs what the shipper has not inserted yet: only the shipped rate can be sustained.
    console.log(
      `     shipped to ClickHouse during the phase: ${fmt(p.server.rowsShipped / p.seconds)} rows/s `
        + `(${fmt((100 * p.server.rowsShipped) / p.seconds / Math.max(1, p.envelopesPerSecond), 1)} % of the envelopes/s accepted)`,
    );
  }
  if (p.cpu) {
    const c = p.cpu;
    console.log(
      `     cpu (% of one core): target ${fmt(c.target)}, driver ${fmt(c.driver)}, redis ${fmt(c.redis)}, clickhouse ${fmt(c.clickhouse)}; `
        + `machine busy ${fmt(c.machineBusy)} % of ${CORES} cores, of which interrupts ${fmt(c.interrupts)} and anything else ${fmt(c.machineBusy * CORES - c.interrupts - (c.target + c.driver + c.redis + c.clickhouse))} % of one core (other jobs on the machine)`
        // /proc/stat once gave 2 % busy while these processes alone took 28 % of a core (their own
        // counters, read at the same moments). A few points under their sum is tick rounding.
        + `${c.machineBusy * CORES < (c.target + c.driver + c.redis + c.clickhouse) / 2 ? " (under half the processes' own sum: /proc/stat is off, ignore the machine figures)" : ''}`,
    );
    // CPU per request: what the targets' ratios come down to once the machine is saturated.
    const msPerRequest = (percentOfCore: number) => fmt((percentOfCore / 100 / p.requestsPerSecond) * 1000, 3);
    console.log(`     cpu per request (ms): target ${msPerRequest(c.target)}, whole machine ${msPerRequest(c.machineBusy * CORES)}`);
  }
}

// ------------------------------------------------------------------ main

async function main(): Promise<void> {
  const runId = Math.random().toString(36).slice(2, 8);
  console.log(
    `ingest load: targets ${options.targets.join(', ')}; phases ${phases.join(', ')}, ${options.durationS} s each, warm-up ${options.warmupS} s; `
      + `collectors phase ${options.concurrentCollectors} x ${options.collectorBatch} envelopes, closed loop ${options.concurrency} x ${ENVELOPES_PER_BATCH}; `
      + `${options.collectors} Live collectors in ${options.workspaces} workspaces for the 50-envelope phases; run ${runId}`,
  );
  console.log(
    `stores: ${BENCH_STORES.DATABASE_URL.replace(/\/\/[^@]*@/, '//')}, ${BENCH_STORES.REDIS_URL}, ClickHouse ${BENCH_STORES.CLICKHOUSE_URL} db ${BENCH_STORES.CLICKHOUSE_DATABASE}`,
  );
  const edgeEnv = benchEdgeEnv();
  // What the servers will run with: the product's own defaults wherever the environment is silent.
  const { ingest } = loadConfig({ ...process.env, ...edgeEnv });
  const shown = (value: number, name: string) => `${value}${edgeEnv[name] === undefined ? ' (default)' : ''}`;
  console.log(
    `edge: write-ahead log shipped every ${shown(ingest.shipIntervalMs, 'INGEST_SHIP_INTERVAL_MS')} ms `
      + `or ${shown(ingest.shipMaxBytes, 'INGEST_SHIP_MAX_BYTES')} bytes, `
      + `worker threads ${shown(ingest.workerThreads, 'INGEST_WORKER_THREADS')}; limits raised to ${edgeEnv.INGEST_WORKSPACE_OBSERVATIONS_PER_MIN}/min`,
  );

  await prepareBenchDatabases();
  const clickhouse = createClient({
    url: BENCH_STORES.CLICKHOUSE_URL,
    database: BENCH_STORES.CLICKHOUSE_DATABASE,
    request_timeout: 60_000,
    compression: { request: false, response: false },
  });
  try {
    await resolveLocalTable(clickhouse);
    // The bench stores only: previous runs' eventIds and rows go, so parts and memory start clean.
    if (!options.keepData) await resetBenchStores(clickhouse);
    const collectors = await createBenchCollectors(
      options.workspaces,
      Math.max(options.collectors, usesCollectorShape ? options.concurrentCollectors : 0),
    );
    const body = new BatchTemplate(collectors[0].integrationKey, `${runId}x`, new Date().toISOString());
    const collectorBody = new BatchTemplate(collectors[0].integrationKey, `${runId}xc`, new Date().toISOString(), options.collectorBatch);
    console.log(
      `set-up: ${collectors.length} collectors created; batch body ${fmt(body.byteLength)} bytes (${ENVELOPES_PER_BATCH} envelopes), `
        + `${fmt(collectorBody.byteLength)} bytes (${options.collectorBatch}); ClickHouse parts and inserts of ${localTableName()}`,
    );

    const results: TargetResult[] = [];
    const rateOf = new Map<string, number>();
    for (const [index, target] of options.targets.entries()) {
      if (index > 0 && !options.keepData) {
        const started = Date.now();
        await resetBenchStores(clickhouse);
        console.log(
          `\nstores reset for the next target (Redis flushed, observations truncated, no merge running) in ${((Date.now() - started) / 1000).toFixed(1)} s`,
        );
      }
      results.push(await runTarget(target, collectors, clickhouse, runId, rateOf));
    }
    printSummary(results);
    if (options.json)
      writeFileSync(
        options.json,
        JSON.stringify({ date: new Date().toISOString(), options, phases, localTable: localTableName(), results }, null, 2),
      );
  } finally {
    // Leave nothing behind that costs the shared machine memory or background merges.
    if (!options.keepData) await resetBenchStores(clickhouse).catch(() => undefined);
    await clickhouse.close();
  }
}

function printSummary(results: TargetResult[]): void {
  console.log('\n== summary');
  console.log(
    'target          | phase                  | envelopes/s | x ceiling | requests/s |  p50 ms |  p90 ms |  p99 ms |  max ms | inserts/s | parts | non-202',
  );
  for (const r of results) {
    for (const p of r.phases) {
      const non202 = Object.entries(p.statuses)
        .filter(([s]) => s !== '202')
        .reduce((sum, [, n]) => sum + n, 0);
      console.log(
        `${r.target.padEnd(15)} | ${phaseLabel(p).padEnd(22)} | ${fmt(p.envelopesPerSecond).padStart(11)} | ${(p.ceiling ? p.ceiling.share.toFixed(3) : '').padStart(9)} | `
          + `${fmt(p.requestsPerSecond).padStart(10)} | ${fmt(p.latencyMs.p50, 1).padStart(7)} | ${fmt(p.latencyMs.p90, 1).padStart(7)} | ${fmt(p.latencyMs.p99, 1).padStart(7)} | `
          + `${fmt(p.latencyMs.max, 1).padStart(7)} | ${(p.clickhouse ? fmt(p.clickhouse.insertsPerSecond, 2) : '').padStart(9)} | `
          + `${(p.clickhouse ? fmt(p.clickhouse.activePartsAtEnd) : '').padStart(5)} | ${non202}${p.skipped ? ` (+${p.skipped} skipped)` : ''}`,
      );
    }
  }
  const phaseOf = (target: Target, phase: Phase) => results.find((r) => r.target === target)?.phases.find((p) => p.phase === phase);
  const closed = (target: Target) => phaseOf(target, 'closed')?.envelopesPerSecond;
  const edge = closed('edge');
  const ceiling = closed('ceiling');
  const fastify = closed('fastify');
  // Issue 17's targets (bench/RESULTS.md records what was measured against them).
  const edgeCollectors = phaseOf('edge', 'collectors');
  if (edgeCollectors) {
    console.log(
      `edge, ${phaseLabel(edgeCollectors)}: ${edgeCollectors.ceiling ? `${edgeCollectors.ceiling.share.toFixed(3)} of the ceiling` : 'no ceiling in this run (--target ceiling,edge)'} `
        + `(target >= 0.4), p50 ${fmt(edgeCollectors.latencyMs.p50, 1)} ms (target <= 5 ms)`,
    );
  }
  const edgeHalf = phaseOf('edge', 'half');
  if (edgeHalf) console.log(`edge, ${phaseLabel(edgeHalf)}: p99 ${fmt(edgeHalf.latencyMs.p99, 1)} ms (target <= 25 ms)`);
  const edgeClosed = phaseOf('edge', 'closed');
  if (edgeClosed) {
    console.log(
      `edge, ${phaseLabel(edgeClosed)}: ${fmt(edgeClosed.envelopesPerSecond)} envelopes/s (target at 1,024 in flight: >= 72,000)`
        + `${edgeClosed.clickhouse ? `, ${fmt(edgeClosed.clickhouse.insertsPerSecond, 2)} ClickHouse inserts/s (target <= 2 per edge under full load)` : ''}`,
    );
  }
  // Issue 4's figures.
  if (edge !== undefined && ceiling !== undefined)
    console.log(`edge / ceiling (closed loop): ${(edge / ceiling).toFixed(3)} (issue 4's target >= 0.4)`);
  if (edge !== undefined && fastify !== undefined)
    console.log(`edge / fastify (closed loop): ${(edge / fastify).toFixed(3)} (issue 4's 1.3 withdrawn by issue 17)`);
  const fastifyCeiling = closed('fastify-ceiling');
  if (ceiling !== undefined && fastifyCeiling !== undefined) {
    console.log(`ceiling / fastify-ceiling (closed loop, the HTTP layers alone): ${(ceiling / fastifyCeiling).toFixed(3)}`);
  }
  if (edge !== undefined) console.log(`edge closed loop: ${fmt(edge)} envelopes/s (issue 4's target >= 50,000 sustained for 60 s)`);
  const edgeOpen = phaseOf('edge', 'open');
  if (edgeOpen)
    console.log(
      `edge open loop @${fmt(edgeOpen.rate ?? 0)}/s: p99 ${fmt(edgeOpen.latencyMs.p99, 1)} ms (issue 4's target < 150 ms at 25,000/s)`,
    );
  for (const r of results) {
    if (r.clickhouse && !r.clickhouse.equal)
      console.log(`WARNING: ${r.target}: ClickHouse rows ${r.clickhouse.rows} != 202 envelopes ${r.clickhouse.accepted202Envelopes}`);
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    killChildren();
    process.exit(1);
  },
);
