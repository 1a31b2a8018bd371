// Ingest load driver (issue 4): many signed Live collectors against the edge, and in the same run
// the two references — the bare uWebSockets.js ceiling and the same pipeline behind Fastify.
// Each server runs in its own child process (bench/ingest-target.ts). Run from the project root:
//
//   npm run bench:ingest-load -- --duration 10
//   node dist/bench/ingest-load.js [--target all|<target>,...] [--duration 60] [--warmup 3]
//        [--mode both|closed|open] [--rate 25000|half] [--concurrency 128] [--collectors 12]
//        [--workspaces 3] [--json results.json] [--keep-data] [--target-node-args "--cpu-prof ..."]
//        [--target-stdout file]
//
// Targets: ceiling, edge, fastify (`all`, in that order), and fastify-ceiling (only when named:
// the ceiling's work behind Fastify, to set beside the ceiling).
//
// Closed loop: `concurrency` requests always in flight for `duration` seconds (max throughput).
// Open loop: batches sent on a fixed schedule of `rate` envelopes/s; latency counts from the
// scheduled send time, so queueing in the driver or the server counts. `--rate half` uses half
// the target's closed-loop rate of this run. See bench/README.md for what it prints.

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
  BENCH_STORES, BatchTemplate, ENVELOPES_PER_BATCH, LoadGenerator, Recorder, SLICE_MS, benchEdgeEnv, createBenchCollectors, findPid,
  flushBenchRedis, fmt, machineCpu, prepareBenchDatabases, processCpuSeconds, stopChild, tokenKey, type BenchCollector, type Sender,
} from './ingest-common.js';
import { RawHttpClient } from './rawHttp.js';

type Target = 'edge' | 'fastify' | 'ceiling' | 'fastify-ceiling';
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
const targets = targetArg === 'all' ? TARGETS : targetArg.split(',') as Target[];
if (!targets.every((target) => KNOWN_TARGETS.includes(target))) throw new Error('--target must be all or a comma-separated list of edge, fastify, ceiling, fastify-ceiling');
const options = {
  targets,
  durationS: num('duration', 'BENCH_DURATION', 60),
  warmupS: num('warmup', 'BENCH_WARMUP', 3),
  mode: (args.get('mode') ?? process.env.BENCH_MODE ?? 'both') as 'both' | 'closed' | 'open',
  rate: args.get('rate') ?? process.env.BENCH_RATE ?? '25000',
  concurrency: num('concurrency', 'BENCH_CONCURRENCY', 128),
  collectors: num('collectors', 'BENCH_COLLECTORS', 12),
  workspaces: num('workspaces', 'BENCH_WORKSPACES', 3),
  json: args.get('json'),
  /** Extra node flags of the server processes, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof". */
  targetNodeArgs: args.get('target-node-args') ?? process.env.BENCH_TARGET_NODE_ARGS,
  keepData: args.has('keep-data'),
  /** A file that receives the servers' standard output (e.g. with --target-node-args --trace-gc). */
  targetStdout: args.get('target-stdout'),
};
if (!['both', 'closed', 'open'].includes(options.mode)) throw new Error('--mode must be both, closed or open');
if (options.rate !== 'half' && !(Number(options.rate) > 0)) throw new Error('--rate must be envelopes/s or "half"');
if (options.rate === 'half' && options.mode === 'open') throw new Error('--rate half needs the closed-loop phase (--mode both)');

// ------------------------------------------------------------------ CPU accounting (helpers in ingest-common.ts)

interface CpuSnapshot { at: number; driver: number; target: number; redis: number; clickhouse: number; machine: { busy: number; total: number } }

const stackPids = { redis: findPid('redis-server'), clickhouse: findPid('clickhouse-serv') };

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
  };
}

// ------------------------------------------------------------------ load generation (Sender, Recorder, LoadGenerator in ingest-common.ts)

interface PhaseResult {
  phase: 'closed' | 'open';
  seconds: number;
  /** Open loop: the requested rate (envelopes/s). */
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
  /** Edge and Fastify: the server's /metrics over this phase. */
  server?: ServerStats;
  errorSample?: string;
}

// ------------------------------------------------------------------ ClickHouse checks

const receiptPartition = () => new Date().toISOString().slice(0, 7).replace('-', '');

async function activeParts(clickhouse: ClickHouseClient): Promise<number> {
  const result = await clickhouse.query({
    query: `SELECT count() AS n FROM system.parts WHERE database = ${sqlLiteral(BENCH_STORES.CLICKHOUSE_DATABASE)}
             AND table = 'observations' AND active AND partition_id = ${sqlLiteral(receiptPartition())}`,
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
  await Promise.all([flushBenchRedis(), clickhouse.command({ query: 'TRUNCATE TABLE IF EXISTS observations' })]);
  for (let second = 0; second < 60; second += 1) {
    const result = await clickhouse.query({
      query: `SELECT count() AS n FROM system.merges WHERE database = ${sqlLiteral(BENCH_STORES.CLICKHOUSE_DATABASE)}`, format: 'JSONEachRow',
    });
    if (Number((await result.json<{ n: string }>())[0].n) === 0) break;
    await new Promise((done) => setTimeout(done, 1_000));
  }
}

async function rowsOf(clickhouse: ClickHouseClient, collectors: BenchCollector[], eventIdPrefix: string): Promise<{ rows: number; distinct: number }> {
  const result = await clickhouse.query({
    query: `SELECT count() AS rows, uniqExact(connection_id, event_id) AS distinct FROM observations
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
    const le = /le="([^"]+)"/.exec(match[2] ?? '');
    const name = le ? `${match[1]}:${le[1]}` : match[1];
    if (name in sums) sums[name] += Number(match[3]);
  }
  return sums;
}

const SERVER_METRICS = [
  'ingest_group_commit_rows_count', 'ingest_group_commit_rows_sum', 'ingest_insert_duration_seconds_sum', 'ingest_insert_failures_total',
  'ingest_admission_duration_seconds_sum', 'ingest_admission_duration_seconds_count', 'ingest_request_duration_seconds_sum',
  'ingest_request_duration_seconds_count', 'ingest_request_duration_seconds_bucket:0.15',
  'ingest_insert_duration_seconds_bucket:0.05', 'ingest_insert_duration_seconds_bucket:0.1',
];

/** What the server's own /metrics say about a stretch of the run (difference of two scrapes). */
interface ServerStats {
  inserts: number;
  rowsPerInsert: number;
  meanInsertMs: number;
  /** Shares of inserts that took longer than 50 and 100 ms. */
  insertsOver50: number;
  insertsOver100: number;
  insertFailures: number;
  /** Mean duration of the admission script call as the edge sees it (event-loop waits included). */
  meanAdmissionMs: number;
  /** Mean time from a complete request body to the answer, inside the server. */
  meanServerMs: number;
  /** Share of requests that took longer than 150 ms inside the server. */
  serverOver150: number;
}

async function scrapeMetrics(pool: Pool): Promise<Record<string, number>> {
  const res = await pool.request({ path: '/metrics', method: 'GET' });
  return metricSums(await res.body.text(), SERVER_METRICS);
}

function serverStats(a: Record<string, number>, b: Record<string, number>): ServerStats {
  const d = (name: string) => b[name] - (a[name] ?? 0);
  const inserts = d('ingest_group_commit_rows_count');
  const admissions = d('ingest_admission_duration_seconds_count');
  const requests = d('ingest_request_duration_seconds_count');
  return {
    inserts,
    rowsPerInsert: inserts ? d('ingest_group_commit_rows_sum') / inserts : 0,
    meanInsertMs: inserts ? (d('ingest_insert_duration_seconds_sum') / inserts) * 1000 : 0,
    insertsOver50: inserts ? 1 - d('ingest_insert_duration_seconds_bucket:0.05') / inserts : 0,
    insertsOver100: inserts ? 1 - d('ingest_insert_duration_seconds_bucket:0.1') / inserts : 0,
    insertFailures: d('ingest_insert_failures_total'),
    meanAdmissionMs: admissions ? (d('ingest_admission_duration_seconds_sum') / admissions) * 1000 : 0,
    meanServerMs: requests ? (d('ingest_request_duration_seconds_sum') / requests) * 1000 : 0,
    serverOver150: requests ? 1 - d('ingest_request_duration_seconds_bucket:0.15') / requests : 0,
  };
}

const printServerStats = (label: string, g: ServerStats) => console.log(`   ${label}: ${fmt(g.inserts)} inserts, ${fmt(g.rowsPerInsert)} rows/insert, `
  + `mean insert ${fmt(g.meanInsertMs, 1)} ms (${fmt(100 * g.insertsOver50, 1)} % over 50 ms, ${fmt(100 * g.insertsOver100, 1)} % over 100), `
  + `${g.insertFailures} failed; mean admission call ${fmt(g.meanAdmissionMs, 1)} ms; `
  + `mean in-server time ${fmt(g.meanServerMs, 1)} ms, ${fmt(100 * g.serverOver150, 2)} % over 150 ms in the server`);

// ------------------------------------------------------------------ targets

const here = dirname(fileURLToPath(import.meta.url));
const CORES = cpus().length;
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
  if (isCeiling(target)) env.BENCH_CEILING_TOKENS = JSON.stringify(Object.fromEntries(collectors.map((c) => [c.connectionKey, c.ingestToken])));
  const nodeArgs = options.targetNodeArgs ? options.targetNodeArgs.split(/\s+/).filter(Boolean) : [];
  const child = spawn(process.execPath, [...nodeArgs, resolve(here, 'ingest-target.js'), target], { env, stdio: ['ignore', 'pipe', 'inherit', 'ipc'] });
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
  clickhouse?: { partsBefore: number; partsMax: number; partsAfter: number; rows: number; distinctRows: number; accepted202Envelopes: number; equal: boolean };
  /** The server's /metrics over the whole target run, warm-up included. */
  groupCommit?: ServerStats;
}

async function runTarget(target: Target, collectors: BenchCollector[], clickhouse: ClickHouseClient, runId: string, closedRateOf: Map<Target, number>): Promise<TargetResult> {
  const persisting = !isCeiling(target);
  const eventIdPrefix = `${runId}${KNOWN_TARGETS.indexOf(target)}`;
  const occurredAt = new Date().toISOString();
  const partsBefore = persisting ? await activeParts(clickhouse) : 0;
  const { child, port } = await startTarget(target, collectors);
  const senders: Sender[] = collectors.map((collector) => ({
    collector,
    key: tokenKey(collector.ingestToken),
    template: new BatchTemplate(collector.integrationKey, eventIdPrefix, occurredAt),
    headPrefix: `POST /ingest HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\ncontent-type: application/json\r\n`
      + `x-service-connection: ${collector.connectionKey}\r\nauthorization: Bearer ${collector.ingestToken}\r\nx-service-signature: `,
    spareBodies: [],
  }));
  const origin = `http://127.0.0.1:${port}`;
  const maxOutstanding = Math.max(4 * options.concurrency, 1024);
  // uWebSockets.js closes a keep-alive connection after 10 s idle (so does the ceiling, and
  // Fastify after 72 s): the driver lets its idle connections go first, at 4 s, or a request sent
  // as the server closes the socket meets ECONNRESET (seen in the open loop, which leaves many of
  // the closed loop's connections idle).
  const client = new RawHttpClient('127.0.0.1', port, options.concurrency, 4_000);
  // /metrics only: a few requests per phase.
  const pool = new Pool(origin, { connections: 1 });
  const load = new LoadGenerator(client, senders);
  const result: TargetResult = { target, phases: [] };
  let partsMax = partsBefore;
  const partsTimer = persisting ? setInterval(() => {
    activeParts(clickhouse).then((n) => { partsMax = Math.max(partsMax, n); }, () => undefined);
  }, 5_000) : null;
  try {
    console.log(`\n== ${target} (pid ${child.pid}, ${origin}): warm-up ${options.warmupS} s`);
    await load.closedLoop(options.concurrency, options.warmupS, null);

    // The open loop first: run right after a full-load minute, it measured ClickHouse merging
    // and Redis rehashing what that minute left behind as much as the target (ClickHouse took
    // 57-60 % of a core at 25,000/s; bench/RESULTS.md). `--rate half` needs the closed loop's rate.
    const phases: ('closed' | 'open')[] = options.mode !== 'both' ? [options.mode] : options.rate === 'half' ? ['closed', 'open'] : ['open', 'closed'];
    for (const phase of phases) {
      const recorder = new Recorder();
      const metricsBefore = persisting ? await scrapeMetrics(pool) : null;
      const before = cpuSnapshot(child.pid!);
      let seconds: number;
      let rate: number | undefined;
      let skipped: number | undefined;
      if (phase === 'closed') {
        console.log(`   closed loop: ${options.concurrency} in flight for ${options.durationS} s`);
        seconds = await load.closedLoop(options.concurrency, options.durationS, recorder);
      } else {
        rate = options.rate === 'half' ? Math.round((closedRateOf.get(target) ?? 0) / 2) : Number(options.rate);
        console.log(`   open loop: ${fmt(rate)} envelopes/s for ${options.durationS} s`);
        const open = await load.openLoop(rate, options.durationS, maxOutstanding, recorder);
        seconds = open.seconds;
        skipped = open.skipped;
      }
      const cpu = cpuBetween(before, cpuSnapshot(child.pid!));
      const server = metricsBefore ? serverStats(metricsBefore, await scrapeMetrics(pool)) : undefined;
      const phaseResult: PhaseResult = {
        ...(server ? { server } : {}),
        phase, seconds, ...(rate === undefined ? {} : { rate }), requests: recorder.requests, accepted202: recorder.accepted202,
        envelopesPerSecond: (recorder.acceptedInWindow * ENVELOPES_PER_BATCH) / seconds,
        requestsPerSecond: recorder.completedInWindow / seconds,
        latencyMs: recorder.latency(), p99BySlice: recorder.p99BySlice(), statuses: recorder.statuses, cpu,
        ...(skipped === undefined ? {} : { skipped }),
        ...(recorder.errorSample === undefined ? {} : { errorSample: recorder.errorSample }),
      };
      if (phase === 'closed') closedRateOf.set(target, phaseResult.envelopesPerSecond);
      result.phases.push(phaseResult);
      printPhase(phaseResult);
    }
    if (persisting) result.groupCommit = serverStats({}, await scrapeMetrics(pool));
  } finally {
    if (partsTimer) clearInterval(partsTimer);
    client.close();
    await pool.close().catch(() => undefined);
    await stopChild(child);
  }
  if (persisting) {
    const partsAfter = await activeParts(clickhouse);
    const { rows, distinct } = await rowsOf(clickhouse, collectors, eventIdPrefix);
    const accepted202Envelopes = load.totalAccepted202 * ENVELOPES_PER_BATCH;
    result.clickhouse = {
      partsBefore, partsMax: Math.max(partsMax, partsAfter), partsAfter, rows, distinctRows: distinct, accepted202Envelopes,
      equal: rows === accepted202Envelopes && distinct === rows,
    };
    printServerStats('server, whole run incl. warm-up', result.groupCommit!);
    console.log(`   clickhouse: active parts in partition ${receiptPartition()}: before ${partsBefore}, max sampled ${result.clickhouse.partsMax}, after ${partsAfter}`);
    console.log(`   clickhouse: rows of this target ${fmt(rows)} (distinct ${fmt(distinct)}) vs envelopes answered 202 (warm-up included) `
      + `${fmt(accepted202Envelopes)}: ${result.clickhouse.equal ? 'EQUAL' : 'MISMATCH'}`);
  }
  return result;
}

function printPhase(p: PhaseResult): void {
  const l = p.latencyMs;
  const statuses = Object.entries(p.statuses).map(([status, count]) => `${status}×${fmt(count)}`).join(', ');
  console.log(`   ${p.phase === 'closed' ? 'closed' : `open @${fmt(p.rate ?? 0)}/s`}: ${fmt(p.envelopesPerSecond)} envelopes/s accepted, `
    + `${fmt(p.requestsPerSecond)} requests/s over ${fmt(p.seconds, 1)} s`);
  console.log(`     latency ms: p50 ${fmt(l.p50, 1)}, p90 ${fmt(l.p90, 1)}, p99 ${fmt(l.p99, 1)}, max ${fmt(l.max, 1)} (mean ${fmt(l.mean, 1)})`);
  console.log(`     p99 ms by ${SLICE_MS / 1000}-s slice of sending: ${p.p99BySlice.map((value) => fmt(value, 0)).join(', ')}`);
  const non202 = Object.entries(p.statuses).filter(([status]) => status !== '202');
  console.log(`     statuses: ${statuses || 'none'}${non202.length ? `; non-202: ${non202.map(([s, n]) => `${s}×${n}`).join(', ')}` : '; non-202: none'}`
    + `${p.skipped ? `; skipped sends (>${'max outstanding'}): ${p.skipped}` : ''}`);
  if (p.errorSample) console.log(`     first non-202: ${p.errorSample}`);
  if (p.server) printServerStats('  server /metrics', p.server);
  if (p.cpu) {
    const c = p.cpu;
    console.log(`     cpu (% of one core): target ${fmt(c.target)}, driver ${fmt(c.driver)}, redis ${fmt(c.redis)}, clickhouse ${fmt(c.clickhouse)}; `
      + `machine busy ${fmt(c.machineBusy)} % of ${CORES} cores`
      // /proc/stat once gave 2 % busy while these processes alone took 28 % of a core (their own
      // counters, read at the same moments). A few points under their sum is tick rounding.
      + `${c.machineBusy * CORES < (c.target + c.driver + c.redis + c.clickhouse) / 2 ? ' (under half the processes\' own sum: /proc/stat is off, ignore the machine figures)' : ''}`);
    // CPU per request: what the targets' ratios come down to once the machine is saturated.
    const msPerRequest = (percentOfCore: number) => fmt((percentOfCore / 100 / p.requestsPerSecond) * 1000, 3);
    console.log(`     cpu per request (ms): target ${msPerRequest(c.target)}, whole machine ${msPerRequest(c.machineBusy * CORES)}`);
  }
}

// ------------------------------------------------------------------ main

async function main(): Promise<void> {
  const runId = Math.random().toString(36).slice(2, 8);
  console.log(`ingest load: targets ${options.targets.join(', ')}; ${options.durationS} s per phase (${options.mode}), warm-up ${options.warmupS} s, `
    + `concurrency ${options.concurrency}, ${options.collectors} Live collectors in ${options.workspaces} workspaces, `
    + `${ENVELOPES_PER_BATCH} envelopes per batch; run ${runId}`);
  console.log(`stores: ${BENCH_STORES.DATABASE_URL.replace(/\/\/[^@]*@/, '//')}, ${BENCH_STORES.REDIS_URL}, ClickHouse ${BENCH_STORES.CLICKHOUSE_URL} db ${BENCH_STORES.CLICKHOUSE_DATABASE}`);
  const edgeEnv = benchEdgeEnv();
  // What the servers will run with: the product's own defaults wherever the environment is silent.
  const { ingest } = loadConfig({ ...process.env, ...edgeEnv });
  const shown = (value: number, name: string) => `${value}${edgeEnv[name] === undefined ? ' (default)' : ''}`;
  console.log(`edge: group commit max rows ${shown(ingest.groupCommitMaxRows, 'INGEST_GROUP_COMMIT_MAX_ROWS')}, `
    + `wait ${shown(ingest.groupCommitMinWaitMs, 'INGEST_GROUP_COMMIT_MIN_WAIT_MS')}–${shown(ingest.groupCommitMaxWaitMs, 'INGEST_GROUP_COMMIT_MAX_WAIT_MS')} ms, `
    + `${shown(ingest.groupCommitBusyWaitMs, 'INGEST_GROUP_COMMIT_BUSY_WAIT_MS')} ms while the cores are saturated, `
    + `max in flight ${shown(ingest.groupCommitMaxInFlight, 'INGEST_GROUP_COMMIT_MAX_IN_FLIGHT')}, `
    + `worker threads ${shown(ingest.workerThreads, 'INGEST_WORKER_THREADS')}; limits raised to ${edgeEnv.INGEST_WORKSPACE_OBSERVATIONS_PER_MIN}/min`);

  await prepareBenchDatabases();
  const clickhouse = createClient({
    url: BENCH_STORES.CLICKHOUSE_URL, database: BENCH_STORES.CLICKHOUSE_DATABASE, request_timeout: 60_000,
    compression: { request: false, response: false },
  });
  try {
    // The bench stores only: previous runs' eventIds and rows go, so parts and memory start clean.
    if (!options.keepData) await resetBenchStores(clickhouse);
    const collectors = await createBenchCollectors(options.workspaces, options.collectors);
    const body = new BatchTemplate(collectors[0].integrationKey, `${runId}x`, new Date().toISOString());
    console.log(`set-up: ${collectors.length} collectors created; batch body ${fmt(body.byteLength)} bytes`);

    const results: TargetResult[] = [];
    const closedRateOf = new Map<Target, number>();
    for (const [index, target] of options.targets.entries()) {
      if (index > 0 && !options.keepData) {
        const started = Date.now();
        await resetBenchStores(clickhouse);
        console.log(`\nstores reset for the next target (Redis flushed, observations truncated, no merge running) in ${((Date.now() - started) / 1000).toFixed(1)} s`);
      }
      results.push(await runTarget(target, collectors, clickhouse, runId, closedRateOf));
    }
    printSummary(results);
    if (options.json) writeFileSync(options.json, JSON.stringify({ date: new Date().toISOString(), options, results }, null, 2));
  } finally {
    // Leave nothing behind that costs the shared machine memory or background merges.
    if (!options.keepData) await resetBenchStores(clickhouse).catch(() => undefined);
    await clickhouse.close();
  }
}

function printSummary(results: TargetResult[]): void {
  console.log('\n== summary');
  console.log('target          | phase          | envelopes/s | requests/s |  p50 ms |  p90 ms |  p99 ms |  max ms | non-202');
  for (const r of results) {
    for (const p of r.phases) {
      const non202 = Object.entries(p.statuses).filter(([s]) => s !== '202').reduce((sum, [, n]) => sum + n, 0);
      const phase = p.phase === 'closed' ? 'closed loop' : `open @${fmt(p.rate ?? 0)}`;
      console.log(`${r.target.padEnd(15)} | ${phase.padEnd(14)} | ${fmt(p.envelopesPerSecond).padStart(11)} | ${fmt(p.requestsPerSecond).padStart(10)} | `
        + `${fmt(p.latencyMs.p50, 1).padStart(7)} | ${fmt(p.latencyMs.p90, 1).padStart(7)} | ${fmt(p.latencyMs.p99, 1).padStart(7)} | `
        + `${fmt(p.latencyMs.max, 1).padStart(7)} | ${non202}${p.skipped ? ` (+${p.skipped} skipped)` : ''}`);
    }
  }
  const closed = (target: Target) => results.find((r) => r.target === target)?.phases.find((p) => p.phase === 'closed')?.envelopesPerSecond;
  const edge = closed('edge');
  const ceiling = closed('ceiling');
  const fastify = closed('fastify');
  if (edge !== undefined && ceiling !== undefined) console.log(`edge / ceiling (closed loop): ${(edge / ceiling).toFixed(3)} (target >= 0.4)`);
  if (edge !== undefined && fastify !== undefined) console.log(`edge / fastify (closed loop): ${(edge / fastify).toFixed(3)} (target >= 1.3)`);
  const fastifyCeiling = closed('fastify-ceiling');
  if (ceiling !== undefined && fastifyCeiling !== undefined) {
    console.log(`ceiling / fastify-ceiling (closed loop, the HTTP layers alone): ${(ceiling / fastifyCeiling).toFixed(3)}`);
  }
  if (edge !== undefined) console.log(`edge closed loop: ${fmt(edge)} envelopes/s (target >= 50,000 sustained for 60 s)`);
  const edgeOpen = results.find((r) => r.target === 'edge')?.phases.find((p) => p.phase === 'open');
  if (edgeOpen) console.log(`edge open loop @${fmt(edgeOpen.rate ?? 0)}/s: p99 ${fmt(edgeOpen.latencyMs.p99, 1)} ms (target < 150 ms at 25,000/s)`);
  for (const r of results) {
    if (r.clickhouse && !r.clickhouse.equal) console.log(`WARNING: ${r.target}: ClickHouse rows ${r.clickhouse.rows} != 202 envelopes ${r.clickhouse.accepted202Envelopes}`);
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
