// Ingest CPU per envelope (issue 32, "Measure first"): machine time per accepted envelope of every
// process an envelope costs, with the analyzer running as in production. From the project root:
//
//   npm run bench:ingest-cpu                                   # 3 runs of 30 s, then the ceiling
//   node dist/bench/ingest-cpu.js [--runs 3] [--duration 30] [--warmup 10] [--collectors 64]
//        [--batch 20] [--workspaces 3] [--no-ceiling] [--json FILE] [--keep-data]
//        [--profile DIR]   # edge --cpu-prof into DIR, ClickHouse query_log of every query, summaries in DIR
//        [--perf DIR]      # the edge sampled by `perf record` during run 1, its summary (edge-perf.ts)
//
// Set-up: bench stores (PostgreSQL svc_bench, Redis db 3, ClickHouse svc_bench) migrated and
// emptied; `--collectors` Live collectors in `--workspaces` workspaces, each connection with an
// active contract (bench/orders-contract.ts; batches carry 20 shapes, 5 of them drifting). Then the
// compiled processes on the bench stores: `dist/management/main.js`, `dist/analyzer/main.js`
// (product defaults: ANALYZER_* of the environment are passed on) and the edge `dist/ingest/main.js`
// (benchEdgeEnv(): limits raised, real clock). Load: every collector has exactly one
// `--batch`-envelope batch in flight (closed loop, bench/rawHttp.ts), fresh eventIds, signed now.
//
// After one warm-up, each run waits until the stores have settled (every 202 shipped to ClickHouse,
// the analysis stream drained, no merge running), reads CPU (utime + stime of all threads, from
// /proc/<pid>/stat) of the edge, ClickHouse, Redis, the analyzer, every `postgres` process and
// management, the driver's own and the machine's (/proc/stat), then loads for `--duration` s and
// reads them again ("window"), then waits until the stores have settled again and reads them a
// third time ("window + tail": the merges, analysis and shipping the window left behind, divided
// by the same envelopes). Also per run: Redis INFO commandstats and used_memory, ClickHouse
// system.events (inserts, merges). Finally the same load against the verify+parse ceiling server
// (bench/ceiling-server.ts) for the edge's share relative to it. See bench/README.md.

import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createClient, type ClickHouseClient } from '@clickhouse/client';
import { Redis } from 'ioredis';
import { sqlLiteral } from '../shared/clickhouse/escape.js';
import { ANALYSIS_CONSUMER_GROUP, RedisKeys } from '../shared/redis.js';
import { freePort, parseArgs, spawnNode } from './benchProcess.js';
import { recordEdgePerf, summarisePerf } from './edge-perf.js';
import {
  BENCH_STORES,
  BatchTemplate,
  LoadGenerator,
  Recorder,
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
import { giveContracts, shapedEnvelope } from './orders-contract.js';
import { RawHttpClient } from './rawHttp.js';

const args = parseArgs(process.argv.slice(2));
const num = (name: string, fallback: number) => {
  const raw = args.get(name);
  const value = raw === undefined ? fallback : Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`--${name} must be a positive number, got ${raw}`);
  return value;
};
const options = {
  runs: Math.round(num('runs', 3)),
  durationS: num('duration', 30),
  warmupS: num('warmup', 10),
  collectors: Math.round(num('collectors', 64)),
  batch: Math.round(num('batch', 20)),
  workspaces: Math.round(num('workspaces', 3)),
  ceiling: !args.has('no-ceiling'),
  json: args.get('json'),
  keepData: args.has('keep-data'),
  profileDir: args.get('profile'),
  perfDir: args.get('perf'),
};
const SETTLE_MAX_S = 120;
const here = dirname(fileURLToPath(import.meta.url));
const CORES = cpus().length;

// ------------------------------------------------------------------ processes

const children: ChildProcess[] = [];
const storeEnv = () => {
  const env: NodeJS.ProcessEnv = { ...process.env, ...benchEdgeEnv() };
  // --profile: every query of the three processes in system.query_log (a setting the client
  // sends with each query, read from the URL by @clickhouse/client; 18.16 accepts it per query).
  if (options.profileDir) env.CLICKHOUSE_URL = `${BENCH_STORES.CLICKHOUSE_URL.replace(/\/$/, '')}/?ch_log_queries=1`;
  return env;
};

async function startProduct(name: string, main: string, env: NodeJS.ProcessEnv, nodeArgs: string[] = []) {
  const { child, line } = await spawnNode(name, [...nodeArgs, resolve(here, main)], env, / ready at /, { timeoutMs: 60_000 });
  children.push(child);
  return { child, pid: child.pid!, port: Number(/:(\d+)\/?\s*$/.exec(line)?.[1]) };
}

// ------------------------------------------------------------------ CPU accounting

const PROCESSES = ['edge', 'clickhouse', 'redis', 'analyzer', 'postgres', 'management'] as const;
type Process = (typeof PROCESSES)[number];
interface Snapshot {
  at: number;
  seconds: Record<Process, number>;
  /** Every postgres process's seconds (backends come and go during a run). */
  postgres: Map<number, number>;
  driver: number;
  machine: ReturnType<typeof machineCpu>;
}

function postgresPids(): Map<number, number> {
  const found = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').startsWith('postgres')) found.set(Number(entry), processCpuSeconds(Number(entry)));
    } catch {
      /* gone */
    }
  }
  return found;
}

function snapshot(pids: Partial<Record<Process, number | null>>): Snapshot {
  const usage = process.cpuUsage();
  const seconds = {} as Record<Process, number>;
  for (const name of PROCESSES) seconds[name] = pids[name] ? processCpuSeconds(pids[name]!) : NaN;
  return { at: performance.now(), seconds, postgres: postgresPids(), driver: (usage.user + usage.system) / 1e6, machine: machineCpu() };
}

/** CPU seconds spent between two snapshots per process, the driver's and the machine's (busy, all cores). */
function spent(a: Snapshot, b: Snapshot) {
  const out = {} as Record<Process, number>;
  for (const name of PROCESSES) out[name] = b.seconds[name] - a.seconds[name];
  // A backend that started in between: all its CPU is this stretch's; one that exited is lost (rare).
  let postgres = 0;
  for (const [pid, after] of b.postgres) if (Number.isFinite(after)) postgres += after - (a.postgres.get(pid) ?? 0);
  out.postgres = postgres;
  return {
    wall: (b.at - a.at) / 1000,
    processes: out,
    driver: b.driver - a.driver,
    machineBusy: b.machine.busy - a.machine.busy,
    machineTotal: b.machine.total - a.machine.total,
  };
}
type Spent = ReturnType<typeof spent>;

/** µs of CPU per envelope of each process, their sum, the driver's and the whole machine's. */
function perEnvelope(s: Spent, envelopes: number) {
  const us = (seconds: number) => (seconds * 1e6) / envelopes;
  const processes = Object.fromEntries(PROCESSES.map((name) => [name, us(s.processes[name])])) as Record<Process, number>;
  const sum = PROCESSES.reduce((total, name) => total + (Number.isFinite(processes[name]) ? processes[name] : 0), 0);
  return { processes, sum, driver: us(s.driver), machine: us(s.machineBusy), other: us(s.machineBusy) - sum - us(s.driver) };
}

const loadAverage = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
const machineFlags = () =>
  `stores-ready ${existsSync('/tmp/stores-ready') ? 'yes' : 'NO'}, quiet-machine ${existsSync('/tmp/quiet-machine') ? 'yes' : 'NO'}`;

// ------------------------------------------------------------------ store counters

async function redisInfo(redis: Redis) {
  const commands = new Map<string, { calls: number; usec: number }>();
  for (const line of (await redis.info('commandstats')).split('\r\n')) {
    const match = /^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/.exec(line);
    if (match) commands.set(match[1], { calls: Number(match[2]), usec: Number(match[3]) });
  }
  const memory = Number(/used_memory:(\d+)/.exec(await redis.info('memory'))?.[1]);
  return { commands, memory };
}

function commandsBetween(a: Awaited<ReturnType<typeof redisInfo>>, b: Awaited<ReturnType<typeof redisInfo>>, envelopes: number) {
  return [...b.commands]
    .map(([name, after]) => {
      const before = a.commands.get(name) ?? { calls: 0, usec: 0 };
      const calls = after.calls - before.calls;
      const usec = after.usec - before.usec;
      return {
        name,
        calls,
        usec,
        usPerCall: calls ? usec / calls : 0,
        callsPerEnvelope: calls / envelopes,
        usPerEnvelope: usec / envelopes,
      };
    })
    .filter((c) => c.calls > 0)
    .sort((x, y) => y.usec - x.usec);
}

async function clickhouseEvents(clickhouse: ClickHouseClient): Promise<Map<string, number>> {
  const result = await clickhouse.query({ query: 'SELECT event, value FROM system.events', format: 'JSONEachRow' });
  return new Map((await result.json<{ event: string; value: string }>()).map((row) => [row.event, Number(row.value)]));
}
const CLICKHOUSE_EVENTS = [
  'InsertQuery',
  'InsertedRows',
  'InsertedBytes',
  'MergedRows',
  'MergedUncompressedBytes',
  'MergesTimeMilliseconds',
  'SelectQuery',
  'UserTimeMicroseconds',
  'SystemTimeMicroseconds',
];

async function count(clickhouse: ClickHouseClient, query: string): Promise<number> {
  const result = await clickhouse.query({ query, format: 'JSONEachRow' });
  return Number(Object.values((await result.json<Record<string, string>>())[0])[0]);
}
const mergesRunning = (clickhouse: ClickHouseClient) =>
  count(clickhouse, `SELECT count() FROM system.merges WHERE database = ${sqlLiteral(BENCH_STORES.CLICKHOUSE_DATABASE)}`);

async function rowsShipped(edgePort: number): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${edgePort}/metrics`)).text();
  return Number(/^ingest_insert_rows_sum(?:\{[^}]*\})? (\S+)$/m.exec(text)?.[1] ?? 0);
}

async function streamBacklog(redis: Redis): Promise<number> {
  const [length, pending] = await Promise.all([
    redis.xlen(RedisKeys.analysisJobs),
    (redis.xpending(RedisKeys.analysisJobs, ANALYSIS_CONSUMER_GROUP) as Promise<[number]>).catch(() => [0]),
  ]);
  return length + Number(pending[0]);
}

/**
 * Waits until every envelope answered 202 is shipped (the edge's own counter: no ClickHouse query
 * that would load what is measured), the analysis stream is drained and no merge runs.
 */
async function settle(ctx: Context, accepted: number): Promise<{ seconds: number; complete: boolean }> {
  const started = performance.now();
  while (performance.now() - started < SETTLE_MAX_S * 1000) {
    const [shipped, backlog, merges] = await Promise.all([
      rowsShipped(ctx.edgePort),
      streamBacklog(ctx.redis),
      mergesRunning(ctx.clickhouse),
    ]);
    if (shipped >= accepted && backlog === 0 && merges === 0) return { seconds: (performance.now() - started) / 1000, complete: true };
    await new Promise((done) => setTimeout(done, 500));
  }
  return { seconds: (performance.now() - started) / 1000, complete: false };
}

// ------------------------------------------------------------------ load

function senders(collectors: BenchCollector[], port: number, prefix: string): Sender[] {
  const occurredAt = new Date().toISOString();
  return collectors.map((collector) => ({
    collector,
    key: tokenKey(collector.ingestToken),
    template: new BatchTemplate(collector.integrationKey, prefix, occurredAt, options.batch, shapedEnvelope),
    headPrefix:
      `POST /ingest HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\ncontent-type: application/json\r\n`
      + `x-service-connection: ${collector.connectionKey}\r\nauthorization: Bearer ${collector.ingestToken}\r\nx-service-signature: `,
    spareBodies: [],
  }));
}

interface Context {
  clickhouse: ClickHouseClient;
  redis: Redis;
  edgePort: number;
}

interface RunResult {
  run: number;
  loadAverage: string;
  flags: string;
  envelopes: number;
  envelopesPerSecond: number;
  latencyMs: ReturnType<Recorder['latency']>;
  statuses: Record<string, number>;
  window: ReturnType<typeof perEnvelope> & { seconds: number };
  withTail: ReturnType<typeof perEnvelope> & { seconds: number; tailSeconds: number; complete: boolean };
  streamBacklogAtEnd: number;
  redis: { commands: ReturnType<typeof commandsBetween>; memoryBytesPerEnvelope: number };
  clickhouse: Record<string, number>;
}

/** Run 1's `perf script` of the edge (--perf), once recorded. */
let perfScript: string | null = null;

async function measuredRun(
  run: number,
  ctx: Context,
  load: LoadGenerator,
  pids: Partial<Record<Process, number | null>>,
): Promise<RunResult> {
  const settled = await settle(ctx, load.totalAccepted202Envelopes);
  if (!settled.complete) console.log(`   WARNING: stores not settled after ${SETTLE_MAX_S} s; measuring anyway`);
  const flags = machineFlags();
  const startLoad = loadAverage();
  const [redisBefore, eventsBefore] = await Promise.all([redisInfo(ctx.redis), clickhouseEvents(ctx.clickhouse)]);
  const before = snapshot(pids);
  const recorder = new Recorder();
  const perf =
    run === 1 && options.perfDir && pids.edge ? recordEdgePerf(pids.edge, Math.max(1, options.durationS - 2), options.perfDir) : null;
  const seconds = await load.collectorLoop(options.durationS, recorder);
  perfScript = (await perf) ?? null;
  const after = snapshot(pids);
  const [redisAfter, backlog] = await Promise.all([redisInfo(ctx.redis), streamBacklog(ctx.redis)]);
  const envelopes = recorder.acceptedInWindow * options.batch;
  // Everything accepted during the window (answers after its end included) has to settle for the tail.
  const tail = await settle(ctx, load.totalAccepted202Envelopes);
  const settledSnap = snapshot(pids);
  const eventsAfter = await clickhouseEvents(ctx.clickhouse);
  const windowSpent = spent(before, after);
  const tailSpent = spent(before, settledSnap);
  const allEnvelopes = recorder.accepted202 * options.batch;
  return {
    run,
    loadAverage: `${startLoad} → ${loadAverage()}`,
    flags,
    envelopes,
    envelopesPerSecond: envelopes / seconds,
    latencyMs: recorder.latency(),
    statuses: recorder.statuses,
    window: { ...perEnvelope(windowSpent, envelopes), seconds: windowSpent.wall },
    withTail: { ...perEnvelope(tailSpent, allEnvelopes), seconds: tailSpent.wall, tailSeconds: tail.seconds, complete: tail.complete },
    streamBacklogAtEnd: backlog,
    redis: {
      commands: commandsBetween(redisBefore, redisAfter, envelopes),
      memoryBytesPerEnvelope: (redisAfter.memory - redisBefore.memory) / envelopes,
    },
    clickhouse: Object.fromEntries(CLICKHOUSE_EVENTS.map((name) => [name, (eventsAfter.get(name) ?? 0) - (eventsBefore.get(name) ?? 0)])),
  };
}

function printRun(r: RunResult): void {
  const w = r.window;
  const line = (label: string, p: ReturnType<typeof perEnvelope>) =>
    `     ${label}: ${PROCESSES.map((name) => `${name} ${fmt(p.processes[name], 1)}`).join(', ')}; all ${fmt(p.sum, 1)} µs/envelope `
    + `(driver ${fmt(p.driver, 1)}, machine busy ${fmt(p.machine, 1)}, other ${fmt(p.other, 1)})`;
  console.log(
    `   run ${r.run}: ${fmt(r.envelopesPerSecond)} envelopes/s over ${fmt(w.seconds, 1)} s; p50 ${fmt(r.latencyMs.p50, 1)} ms, p99 ${fmt(r.latencyMs.p99, 1)} ms; `
      + `statuses ${Object.entries(r.statuses)
        .map(([s, n]) => `${s}×${n}`)
        .join(', ')}; load average ${r.loadAverage}; ${r.flags}`,
  );
  console.log(line('window', w));
  console.log(line(`window + ${fmt(r.withTail.tailSeconds, 1)} s tail${r.withTail.complete ? '' : ' (NOT settled)'}`, r.withTail));
  console.log(
    `     analysis stream entries left at window end: ${r.streamBacklogAtEnd}; Redis used_memory ${fmt(r.redis.memoryBytesPerEnvelope, 1)} bytes per envelope`,
  );
  console.log(
    `     redis commands (µs/call, calls/envelope, µs/envelope): ${r.redis.commands
      .slice(0, 6)
      .map((c) => `${c.name} ${fmt(c.usPerCall, 1)}/${fmt(c.callsPerEnvelope, 3)}/${fmt(c.usPerEnvelope, 2)}`)
      .join(', ')}`,
  );
  const ch = r.clickhouse;
  console.log(
    `     clickhouse (window + tail): ${ch.InsertQuery} inserts, ${fmt(ch.InsertedRows)} rows, ${fmt(ch.InsertedBytes / Math.max(1, ch.InsertedRows), 0)} bytes/row; `
      + `merged ${fmt(ch.MergedRows)} rows (${fmt(ch.MergedRows / Math.max(1, ch.InsertedRows), 2)} per inserted row) in ${fmt(ch.MergesTimeMilliseconds)} ms; ${ch.SelectQuery} selects`,
  );
}

// ------------------------------------------------------------------ ceiling

async function ceilingRuns(collectors: BenchCollector[], runId: string) {
  const env = {
    ...process.env,
    ...benchEdgeEnv(),
    INGEST_HOST: '127.0.0.1',
    INGEST_PORT: '0',
    BENCH_CEILING_TOKENS: JSON.stringify(Object.fromEntries(collectors.map((c) => [c.connectionKey, c.ingestToken]))),
  };
  const { child, line } = await spawnNode('ceiling', [resolve(here, 'ingest-target.js'), 'ceiling'], env, /^\{"ready"/);
  const port = (JSON.parse(line) as { port: number }).port;
  const client = new RawHttpClient('127.0.0.1', port, collectors.length, 4_000);
  const load = new LoadGenerator(client, senders(collectors, port, `${runId}k`));
  const results: { run: number; envelopesPerSecond: number; ceilingUs: number; machineUs: number; loadAverage: string }[] = [];
  try {
    console.log(`\n== ceiling (bench/ceiling-server.ts, pid ${child.pid}): warm-up ${options.warmupS} s`);
    await load.collectorLoop(options.warmupS, null);
    for (let run = 1; run <= options.runs; run += 1) {
      const recorder = new Recorder();
      const before = { cpu: processCpuSeconds(child.pid!), machine: machineCpu(), load: loadAverage() };
      const seconds = await load.collectorLoop(options.durationS, recorder);
      const envelopes = recorder.acceptedInWindow * options.batch;
      const ceilingUs = ((processCpuSeconds(child.pid!) - before.cpu) * 1e6) / envelopes;
      const machineUs = ((machineCpu().busy - before.machine.busy) * 1e6) / envelopes;
      results.push({
        run,
        envelopesPerSecond: envelopes / seconds,
        ceilingUs,
        machineUs,
        loadAverage: `${before.load} → ${loadAverage()}`,
      });
      console.log(
        `   run ${run}: ${fmt(envelopes / seconds)} envelopes/s; ceiling ${fmt(ceilingUs, 1)} µs/envelope (machine busy ${fmt(machineUs, 1)}); `
          + `statuses ${Object.entries(recorder.statuses)
            .map(([s, n]) => `${s}×${n}`)
            .join(', ')}; load average ${results.at(-1)!.loadAverage}`,
      );
    }
  } finally {
    client.close();
    await stopChild(child);
  }
  return results;
}

// ------------------------------------------------------------------ profile summaries (--profile)

/** Every query of the processes since `since` in system.query_log: by kind, and the inserts' ProfileEvents. */
async function queryLogSummary(clickhouse: ClickHouseClient, since: Date) {
  await clickhouse.command({ query: 'SYSTEM FLUSH LOGS' });
  const window = `type = 2 AND event_date >= toDate(${Math.floor(since.getTime() / 1000)}) AND event_time >= toDateTime(${Math.floor(since.getTime() / 1000)})`;
  const kinds = await clickhouse.query({
    query: `SELECT substring(replaceRegexpAll(query, '\\\\s+', ' '), 1, 60) AS kind, count() AS queries, sum(query_duration_ms) AS duration_ms,
              sum(written_rows) AS written_rows, sum(written_bytes) AS written_bytes, sum(read_rows) AS read_rows, sum(read_bytes) AS read_bytes,
              sum(arraySum(arrayFilter((v, n) -> n = 'UserTimeMicroseconds', ProfileEvents.Values, ProfileEvents.Names))) AS user_us,
              sum(arraySum(arrayFilter((v, n) -> n = 'SystemTimeMicroseconds', ProfileEvents.Values, ProfileEvents.Names))) AS system_us
            FROM system.query_log WHERE ${window} AND query NOT LIKE '%system.%' GROUP BY kind ORDER BY user_us + system_us DESC LIMIT 30`,
    format: 'JSONEachRow',
  });
  const events = await clickhouse.query({
    query: `SELECT name, sum(value) AS total, count() AS inserts FROM system.query_log ARRAY JOIN ProfileEvents.Names AS name, ProfileEvents.Values AS value
            WHERE ${window} AND query LIKE 'INSERT INTO observations%' GROUP BY name ORDER BY total DESC`,
    format: 'JSONEachRow',
  });
  const inserts = await clickhouse.query({
    query: `SELECT count() AS inserts, sum(written_rows) AS rows, sum(written_bytes) AS bytes, sum(query_duration_ms) AS duration_ms,
              quantile(0.5)(written_rows) AS p50_rows, avg(memory_usage) AS avg_memory
            FROM system.query_log WHERE ${window} AND query LIKE 'INSERT INTO observations%'`,
    format: 'JSONEachRow',
  });
  return { kinds: await kinds.json(), insertEvents: await events.json(), inserts: (await inserts.json())[0] };
}

type QueryLogSummary = Awaited<ReturnType<typeof queryLogSummary>>;

/** The query log over every envelope the edge accepted since it started (warm-up included). */
function printQueryLog(q: QueryLogSummary, envelopes: number): void {
  console.log(`\n== ClickHouse query_log (every query of the edge, analyzer and management; ${fmt(envelopes)} envelopes)`);
  for (const kind of q.kinds as Record<string, string>[]) {
    const cpuUs = Number(kind.user_us) + Number(kind.system_us);
    console.log(
      `   ${kind.queries.padStart(6)} × ${kind.kind}…: ${fmt(cpuUs / 1000)} ms CPU (user ${fmt(Number(kind.user_us) / 1000)}), `
        + `${fmt(cpuUs / envelopes, 2)} µs/envelope; ${fmt(Number(kind.duration_ms))} ms; read ${fmt(Number(kind.read_rows) / envelopes, 1)} rows/envelope `
        + `(${fmt(Number(kind.read_bytes) / envelopes)} bytes), wrote ${fmt(Number(kind.written_rows))} rows`,
    );
  }
  const inserts = q.inserts as Record<string, string>;
  const n = Number(inserts.inserts);
  const rows = Number(inserts.rows);
  console.log(
    `   inserts: ${n}, ${fmt(rows / n)} rows and ${fmt(Number(inserts.bytes) / n / 1e6, 1)} MB each (${fmt(Number(inserts.bytes) / rows)} bytes/row), `
      + `${fmt(Number(inserts.duration_ms) / n)} ms each, ${fmt(Number(inserts.avg_memory) / 1e6, 1)} MB memory`,
  );
  console.log('   heaviest ProfileEvents of the inserts (per insert, per row):');
  for (const event of (q.insertEvents as Record<string, string>[]).slice(0, 16)) {
    console.log(
      `     ${event.name.padEnd(44)} ${fmt(Number(event.total) / n).padStart(14)} ${fmt(Number(event.total) / rows, 2).padStart(12)}`,
    );
  }
}

// ------------------------------------------------------------------ main

async function main(): Promise<void> {
  const runId = Math.random().toString(36).slice(2, 8);
  console.log(
    `ingest cpu: ${options.collectors} collectors x ${options.batch} envelopes (closed loop), ${options.runs} runs of ${options.durationS} s after a ${options.warmupS}-s warm-up; `
      + `${CORES} cores; load average ${loadAverage()}; ${machineFlags()}; run ${runId}${options.profileDir ? `; profiling into ${options.profileDir}` : ''}`,
  );
  await prepareBenchDatabases();
  const clickhouse = createClient({
    url: BENCH_STORES.CLICKHOUSE_URL,
    database: BENCH_STORES.CLICKHOUSE_DATABASE,
    request_timeout: 60_000,
  });
  const redis = new Redis(BENCH_STORES.REDIS_URL);
  const reset = async () => {
    await Promise.all([flushBenchRedis(), clickhouse.command({ query: 'TRUNCATE TABLE IF EXISTS observations' })]);
    for (let waited = 0; waited < 60 && (await mergesRunning(clickhouse)) > 0; waited += 1)
      await new Promise((done) => setTimeout(done, 1000));
  };
  const results: { runs: RunResult[]; ceiling?: Awaited<ReturnType<typeof ceilingRuns>>; profile?: QueryLogSummary } = { runs: [] };
  try {
    if (!options.keepData) await reset();
    const collectors = await createBenchCollectors(options.workspaces, options.collectors);
    await giveContracts(collectors);
    const env = storeEnv();
    if (options.profileDir) mkdirSync(options.profileDir, { recursive: true });
    if (options.perfDir) mkdirSync(options.perfDir, { recursive: true });
    const edgeArgs = [
      ...(options.profileDir ? ['--cpu-prof', `--cpu-prof-dir=${resolve(options.profileDir)}`] : []),
      // perf names the JIT's frames from /tmp/perf-<pid>.map.
      ...(options.perfDir ? ['--perf-basic-prof'] : []),
    ];
    const management = await startProduct('management', '../management/main.js', {
      ...env,
      MANAGEMENT_HOST: '127.0.0.1',
      MANAGEMENT_PORT: '0',
    });
    const analyzer = await startProduct('analyzer', '../analyzer/main.js', {
      ...env,
      ANALYZER_HOST: '127.0.0.1',
      ANALYZER_PORT: String(await freePort()),
    });
    const edge = await startProduct('edge', '../ingest/main.js', { ...env, INGEST_HOST: '127.0.0.1', INGEST_PORT: '0' }, edgeArgs);
    const pids: Partial<Record<Process, number | null>> = {
      edge: edge.pid,
      analyzer: analyzer.pid,
      management: management.pid,
      redis: storePid(BENCH_STORES.REDIS_URL, 6379, 'redis-server'),
      clickhouse: storePid(BENCH_STORES.CLICKHOUSE_URL, 8123, 'clickhouse-serv'),
    };
    console.log(
      `processes: edge ${edge.pid} (port ${edge.port}), analyzer ${analyzer.pid}, management ${management.pid}, redis ${pids.redis}, clickhouse ${pids.clickhouse}`,
    );
    const client = new RawHttpClient('127.0.0.1', edge.port, collectors.length, 4_000);
    const load = new LoadGenerator(client, senders(collectors, edge.port, `${runId}e`));
    const ctx: Context = { clickhouse, redis, edgePort: edge.port };
    const profileSince = new Date();
    console.log(`\n== edge + analyzer + management: warm-up ${options.warmupS} s`);
    await load.collectorLoop(options.warmupS, null);
    for (let run = 1; run <= options.runs; run += 1) {
      const result = await measuredRun(run, ctx, load, pids);
      results.runs.push(result);
      printRun(result);
    }
    const rows = await count(clickhouse, `SELECT count() FROM observations WHERE event_id LIKE ${sqlLiteral(`evt_${runId}e%`)}`);
    console.log(
      `   rows in ClickHouse ${fmt(rows)} vs envelopes answered 202 ${fmt(load.totalAccepted202Envelopes)}: ${rows === load.totalAccepted202Envelopes ? 'EQUAL' : 'MISMATCH'}`,
    );
    client.close();
    for (const child of [edge.child, analyzer.child, management.child]) await stopChild(child);
    if (options.profileDir) {
      results.profile = await queryLogSummary(clickhouse, profileSince);
      writeFileSync(resolve(options.profileDir, 'clickhouse-query-log.json'), JSON.stringify(results.profile, null, 2));
      printQueryLog(results.profile, load.totalAccepted202Envelopes);
      console.log(`profile: edge CPU profiles and clickhouse-query-log.json in ${options.profileDir}`);
    }
    if (options.ceiling) results.ceiling = await ceilingRuns(collectors, runId);
    printSummary(results);
    if (options.perfDir) {
      if (perfScript === null) console.log('edge perf: perf record failed (is perf installed and allowed here?)');
      else summarisePerf(readFileSync(perfScript, 'utf8'), Number(results.runs[0].window.processes.edge.toFixed(1)), 20);
    }
    if (options.json) writeFileSync(options.json, JSON.stringify({ date: new Date().toISOString(), options, ...results }, null, 2));
  } finally {
    for (const child of children) await stopChild(child).catch(() => undefined);
    if (!options.keepData) await reset().catch(() => undefined);
    redis.disconnect();
    await clickhouse.close();
  }
}

function printSummary(results: { runs: RunResult[]; ceiling?: Awaited<ReturnType<typeof ceilingRuns>> }): void {
  console.log('\n== CPU µs per accepted envelope (window)');
  console.log(
    `run | ${PROCESSES.map((name) => name.padStart(10)).join(' | ')} |        all | envelopes/s | ceiling µs | edge ÷ ceiling | machine busy`,
  );
  results.runs.forEach((r, index) => {
    const ceiling = results.ceiling?.[index]?.ceilingUs;
    console.log(
      `${String(r.run).padStart(3)} | ${PROCESSES.map((name) => fmt(r.window.processes[name], 1).padStart(10)).join(' | ')} | ${fmt(r.window.sum, 1).padStart(10)} | `
        + `${fmt(r.envelopesPerSecond).padStart(11)} | ${(ceiling ? fmt(ceiling, 1) : '–').padStart(10)} | ${(ceiling ? (r.window.processes.edge / ceiling).toFixed(2) : '–').padStart(14)} | ${fmt(r.window.machine, 1)}`,
    );
  });
  console.log('== the same, window + tail (what the window left to ship, analyse and merge)');
  for (const r of results.runs)
    console.log(
      `${String(r.run).padStart(3)} | ${PROCESSES.map((name) => fmt(r.withTail.processes[name], 1).padStart(10)).join(' | ')} | ${fmt(r.withTail.sum, 1).padStart(10)}`,
    );
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    for (const child of children) child.kill('SIGKILL');
    process.exit(1);
  },
);
