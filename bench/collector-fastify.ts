// Throughput cost of the collector in a small Fastify webhook receiver (issue 15, Done means: the
// instrumented app serves at most 5 % fewer requests/s than the same app without the collector).
// Both apps are measured in ONE run, alternating in short rounds. Run from the project root with
// the stack up (bash scripts/stack.sh up); the collector is imported from its build, and the edge
// is dist/ingest/main.js, so build both first:
//
//   npm run build && npx tsc -p bench/tsconfig.json && node dist/bench/collector-fastify.js
//   node dist/bench/collector-fastify.js [--rounds 6] [--round-seconds 5] [--warmup 3] [--connections 32]
//        [--body-bytes 2048] [--endpoint edge|sink] [--limits spec|raised] [--pin] [--json FILE] [--app-node-args "--cpu-prof --cpu-prof-dir=/tmp/prof"]
//
// `--pin` pins both apps (all their threads) to CPU 1 and this driver, the endpoint process and the
// stores (ClickHouse, Redis, PostgreSQL; their affinity is restored at the end) to CPU 0
// (taskset): the app under load then has a core of its own, and its requests/s measure its
// own cost per request instead of how the scheduler shares two cores among four busy processes
// (unpinned, rounds of the same app differ by up to 40 % on this machine).
//
// `--app-node-args` adds node flags to both app processes, e.g. to profile them (the profiles are
// written when the apps stop; summarise one with dist/bench/collector-cpuprofile.js).
//
// Processes (the 2-core machine is shared by all of them; each phase prints their CPU):
// - this one: set-up, then the load driver (bench/rawHttp.ts, the ingest drivers' cheap HTTP/1.1
//   keep-alive client: `--connections` requests always in flight, closed loop);
// - two app processes (this file, `--role app`): the same Fastify 5 app, `POST /webhooks/orders`
//   (JSON body parsed by Fastify, handler answers 200 `{"received":true}`), one `plain`, one
//   `instrumented`: `app.register(fastifyCollector, { collector, correlation })` with the
//   collector of an inbound http-webhook Integration; `correlation` hashes the request's
//   `x-vendor-event-id` header as the README's example does;
// - the endpoint: `--endpoint edge` (default) the REAL ingest edge, `node dist/ingest/main.js` on
//   a free port with the bench stores and the operator limits raised (bench/ingest-common.ts
//   benchEdgeEnv), and a Live Integration (no monthly quota) created through the management API
//   in-process (a bench workspace from createBenchCollectors, then POST /v1/integrations with
//   direction inbound, protocol http-webhook); `--endpoint sink` a process that answers every
//   upload 202 at once: no wait for the edge's log and no ClickHouse or edge CPU on the machine, so the
//   collector delivers nearly everything it observes and the app pays for that delivery too.
// - `--limits spec` (default): the edge keeps document 03's limits (6,000 observations and 600
//   requests a minute per Integration, 30,000 per workspace) and the collector its default budget,
//   which it reads from the edge's connection check: what a user runs. It builds at most the
//   budget in any 60 seconds (all of it at once, then each place again a minute after it was
//   taken) and counts the rest in `throttled`.
//   `--limits raised`: the edge's limits raised (bench/ingest-common.ts benchEdgeEnv) and the
//   collector's budgets lifted (`maxObservationsPerMinute: 0`, `maxRequestsPerMinute: 0`): it
//   builds every observation, the case of an operator who raised the limits. With `--endpoint sink`, `spec` leaves the collector
//   its default budget (6,000 a minute: the sink's answer to the connection check has no limits).
//
// Against the real edge each upload waits for its write-ahead log append and commit, so delivery is
// bounded by maxConcurrentUploads (default 4) batches of 50 per round trip; what the queue cannot hold is
// dropped (counted). The instrumented app keeps draining its queue during the plain app's phases
// (a few % of a core, printed). Against the edge, ClickHouse's merges share the cores in every phase.
//
// Load: `--warmup` seconds per app, then `--rounds` rounds; each round runs both apps for
// `--round-seconds` each, in alternating order (plain first in even rounds, instrumented first in
// odd ones), so drifts of the machine fall on both alike. Each request is one of 64 distinct
// ~2 KB order webhooks (bench/collector-common.ts) with its own event id header. Printed per phase:
// requests/s (answers completed within the phase), latency p50/p99 (ms), non-200 answers, CPU in %
// of one core of the app, the driver, the edge, ClickHouse and Redis, and the app's CPU per
// request; for the instrumented app the collector's counters in the phase (observed, delivered,
// dropped, failedBatches, rejected). Then per round and overall: the drop of requests/s in %,
// p99 of both, the app CPU per request of both and their difference (the collector's CPU per
// request in the host process), and the collector's counters over the run after a final flush.
// Bench data: rows of this run stay in svc_bench.observations (the ingest load drivers truncate
// that table when they start) and eventIds in Redis database 3 (expire after 900 s).

import type { ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  BENCH_STORES,
  Recorder,
  benchEdgeEnv,
  createBenchCollectors,
  findPid,
  fmt,
  machineCpu,
  openBenchManagement,
  prepareBenchDatabases,
  processCpuSeconds,
  stopChild,
} from './ingest-common.js';
import { RawHttpClient } from './rawHttp.js';
import { ask, bodyTexts, mean, median, runSink, spreadPercent } from './collector-common.js';
import { cpuAffinity, freePort, parseArgs, pinToCpu, spawnNode } from './benchProcess.js';

// --app-node-args takes the next argument whatever it looks like (node flags start with --).
const args = parseArgs(process.argv.slice(2), ['app-node-args']);
const here = dirname(fileURLToPath(import.meta.url));
const ROUTE = '/webhooks/orders';
const TARGET_DROP_PERCENT = 5;

interface CollectorConfig {
  endpoint: string;
  integrationKey: string;
  connectionKey: string;
  ingestToken: string;
  maxObservationsPerMinute?: number;
  maxRequestsPerMinute?: number;
}

type Counters = {
  observed: number;
  delivered: number;
  dropped: number;
  throttled: number;
  failedBatches: number;
  rejected: number;
  buildErrors: number;
  skippedInspections: number;
};
interface AppStatus {
  type: 'status';
  counters: (Counters & { connectionStatus: number; deliveryState?: string }) | null;
  connectionCheck: { ok: boolean; status: number; error?: string } | null;
}

// ------------------------------------------------------------------ the app (child process)

async function runApp(variant: string): Promise<void> {
  const { default: Fastify } = await import('fastify');
  const { createCollector, fastifyCollector } = await import('@integration-watch/collector');
  const app = Fastify({ logger: false });
  let collector: ReturnType<typeof createCollector> | null = null;
  let connectionCheck: AppStatus['connectionCheck'] = null;
  if (variant === 'instrumented') {
    const config = JSON.parse(process.env.BENCH_COLLECTOR_CONFIG ?? '{}') as CollectorConfig;
    collector = createCollector({
      ...config,
      direction: 'inbound',
      protocol: 'http-webhook',
      onConnectionCheck: (result) => {
        connectionCheck = { ok: result.ok, status: result.status, ...(result.error ? { error: result.error } : {}) };
      },
    });
    await app.register(fastifyCollector, {
      collector,
      correlation: (request) => ({ sourceEventId: request.headers['x-vendor-event-id'] as string | undefined }),
    });
  } else if (variant !== 'plain') {
    throw new Error(`unknown app variant ${variant}`);
  }
  app.post(ROUTE, async (request) => {
    const event = request.body as { type?: unknown };
    return { received: event?.type === 'order.paid' };
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const status = (): AppStatus => ({
    type: 'status',
    counters: collector ? (collector.counters() as AppStatus['counters']) : null,
    connectionCheck,
  });
  process.on('message', (message: { type?: string }) => {
    if (message?.type === 'status') process.send!(status());
    else if (message?.type === 'flush') {
      void (collector ? collector.flush() : Promise.resolve()).then(() => process.send!({ ...status(), type: 'flushed' }));
    }
  });
  const stop = () => {
    void (async () => {
      await app.close();
      if (collector) await collector.close(2_000);
      process.exit(0);
    })();
  };
  process.on('SIGTERM', stop);
  process.on('disconnect', stop);
  process.stdout.write(`${JSON.stringify({ ready: true, port: (app.server.address() as { port: number }).port })}\n`);
}

// ------------------------------------------------------------------ set-up (the Integration and the edge)

/** A Live inbound http-webhook Integration in a fresh bench workspace; its collector configuration. */
async function createWebhookIntegration(): Promise<Omit<CollectorConfig, 'endpoint'>> {
  await prepareBenchDatabases();
  const [{ apiKey }] = await createBenchCollectors(1, 1); // a bench workspace and one of its API keys
  const management = await openBenchManagement();
  try {
    const res = await management.app.inject({
      method: 'POST',
      url: '/v1/integrations',
      headers: { authorization: `Bearer ${apiKey}`, 'idempotency-key': `bench-collector-fastify-${Date.now()}` },
      payload: { mode: 'live', name: 'Bench webhook receiver', provider: 'Acme', direction: 'inbound', protocol: 'http-webhook' },
    });
    if (res.statusCode !== 201) throw new Error(`POST /v1/integrations answered ${res.statusCode}: ${res.body}`);
    const { integrationKey, connectionKey, ingestToken } = (res.json() as { collectorConfiguration: Omit<CollectorConfig, 'endpoint'> })
      .collectorConfiguration;
    return { integrationKey, connectionKey, ingestToken };
  } finally {
    await management.close();
  }
}

/** Document 03's limits (shared/config.ts defaults), in place of benchEdgeEnv's raised ones. */
const SPEC_LIMITS_ENV = {
  INGEST_INTEGRATION_REQUESTS_PER_MIN: '600',
  INGEST_INTEGRATION_OBSERVATIONS_PER_MIN: '6000',
  INGEST_WORKSPACE_OBSERVATIONS_PER_MIN: '30000',
};

async function startEdge(limits: 'spec' | 'raised'): Promise<{ child: ChildProcess; port: number }> {
  const port = await freePort();
  const env = {
    ...process.env,
    ...benchEdgeEnv(),
    ...(limits === 'spec' ? SPEC_LIMITS_ENV : {}),
    INGEST_HOST: '127.0.0.1',
    INGEST_PORT: String(port),
  };
  const { child } = await spawnNode('edge', [resolve(here, '../ingest/main.js')], env, /ready at/);
  return { child, port };
}

// ------------------------------------------------------------------ the load

interface Request {
  head: string;
  body: Buffer;
}

function requestsFor(port: number, bodyBytes: number): Request[] {
  return bodyTexts(64, bodyBytes).map((text, index) => {
    const body = Buffer.from(text, 'utf8');
    const head =
      `POST ${ROUTE} HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\ncontent-type: application/json\r\n`
      + `x-vendor-event-id: whevt_${index.toString(36).padStart(8, '0')}\r\ncontent-length: ${body.length}\r\n\r\n`;
    return { head, body };
  });
}

interface Target {
  variant: 'plain' | 'instrumented';
  child: ChildProcess;
  client: RawHttpClient;
  requests: Request[];
}

interface PhaseResult {
  round: number;
  variant: string;
  seconds: number;
  perSecond: number;
  requests: number;
  p50: number;
  p99: number;
  non200: number;
  errorSample?: string;
  cpu: Record<string, number>;
  appCpuUsPerRequest: number;
  machineBusyPercent: number;
  collector?: Counters;
}

async function closedLoop(target: Target, connections: number, seconds: number, recorder: Recorder | null): Promise<{ seconds: number }> {
  const started = performance.now();
  const end = started + seconds * 1000;
  let next = 0;
  const worker = async () => {
    while (performance.now() < end) {
      const request = target.requests[next];
      next = (next + 1) % target.requests.length;
      const sentAt = performance.now();
      let status: string;
      try {
        const answer = await target.client.request(request.head, request.body);
        status = String(answer.status);
        if (answer.status !== 200 && recorder && recorder.errorSample === undefined)
          recorder.errorSample = `${status} ${answer.text.slice(0, 200)}`;
      } catch (error) {
        status = `error:${(error as { code?: string }).code ?? (error as Error).message}`;
        if (recorder && recorder.errorSample === undefined) recorder.errorSample = status;
      }
      const done = performance.now();
      recorder?.record(done - sentAt, status, done <= end, sentAt);
    }
  };
  await Promise.all(Array.from({ length: connections }, worker));
  return { seconds: (end - started) / 1000 };
}

const counterNames: (keyof Counters)[] = [
  'observed',
  'delivered',
  'dropped',
  'throttled',
  'failedBatches',
  'rejected',
  'buildErrors',
  'skippedInspections',
];
const countersOf = (status: AppStatus): Counters | null =>
  status.counters ? (Object.fromEntries(counterNames.map((name) => [name, status.counters![name]])) as Counters) : null;
const minus = (a: Counters, b: Counters): Counters => Object.fromEntries(counterNames.map((name) => [name, a[name] - b[name]])) as Counters;
const plus = (a: Counters, b: Counters): Counters => Object.fromEntries(counterNames.map((name) => [name, a[name] + b[name]])) as Counters;

async function phase(
  round: number,
  target: Target,
  connections: number,
  seconds: number,
  pids: Record<string, number | null>,
): Promise<PhaseResult> {
  const cpuBefore = Object.fromEntries(Object.entries(pids).map(([name, pid]) => [name, pid === null ? NaN : processCpuSeconds(pid)]));
  const driverBefore = process.cpuUsage();
  const machineBefore = machineCpu();
  const statusBefore = target.variant === 'instrumented' ? await ask<AppStatus>(target.child, { type: 'status' }, 'status') : null;
  const recorder = new Recorder();
  const { seconds: measured } = await closedLoop(target, connections, seconds, recorder);
  const statusAfter = target.variant === 'instrumented' ? await ask<AppStatus>(target.child, { type: 'status' }, 'status') : null;
  const machineAfter = machineCpu();
  const driver = process.cpuUsage(driverBefore);
  const cpu: Record<string, number> = {};
  for (const [name, pid] of Object.entries(pids))
    cpu[name] = pid === null ? NaN : ((processCpuSeconds(pid) - cpuBefore[name]) / measured) * 100;
  cpu.driver = ((driver.user + driver.system) / 1e6 / measured) * 100;
  const latency = recorder.latency();
  const ok = recorder.statuses['200'] ?? 0;
  const appCpuSeconds = (cpu[target.variant] / 100) * measured;
  const before = statusBefore ? countersOf(statusBefore) : null;
  const after = statusAfter ? countersOf(statusAfter) : null;
  return {
    round,
    variant: target.variant,
    seconds: measured,
    perSecond: recorder.completedInWindow / measured,
    requests: recorder.completedInWindow,
    p50: latency.p50,
    p99: latency.p99,
    non200: recorder.requests - ok,
    ...(recorder.errorSample ? { errorSample: recorder.errorSample } : {}),
    cpu,
    appCpuUsPerRequest: (appCpuSeconds / Math.max(1, recorder.completedInWindow)) * 1e6,
    machineBusyPercent: ((machineAfter.busy - machineBefore.busy) / (machineAfter.total - machineBefore.total)) * 100,
    ...(before && after ? { collector: minus(after, before) } : {}),
  };
}

function printPhase(result: PhaseResult): void {
  const cpu = Object.entries(result.cpu)
    .filter(([, value]) => Number.isFinite(value))
    .map(([name, value]) => `${name} ${fmt(value)}`)
    .join(', ');
  const c = result.collector;
  console.log(
    `round ${result.round + 1} ${result.variant.padEnd(12)} ${fmt(result.perSecond).padStart(7)} req/s  p50 ${fmt(result.p50, 2)} ms  p99 ${fmt(result.p99, 2)} ms`
      + `${result.non200 ? `  non-200 ${result.non200} (${result.errorSample ?? ''})` : ''}  app ${fmt(result.appCpuUsPerRequest, 1)} µs CPU/req  CPU % [${cpu}] machine ${fmt(result.machineBusyPercent)} %`
      + (c
        ? `  collector: observed ${fmt(c.observed)}, throttled ${fmt(c.throttled)}, delivered ${fmt(c.delivered)}, dropped ${fmt(c.dropped)}, failedBatches ${c.failedBatches}, rejected ${c.rejected}`
        : ''),
  );
}

// ------------------------------------------------------------------ main

async function main(): Promise<void> {
  const num = (name: string, fallback: number) => {
    const value = Number(args.get(name) ?? fallback);
    if (!Number.isFinite(value) || value <= 0) throw new Error(`--${name} must be a positive number`);
    return value;
  };
  const options = {
    rounds: num('rounds', 6),
    roundSeconds: num('round-seconds', 5),
    warmup: num('warmup', 3),
    connections: num('connections', 32),
    bodyBytes: num('body-bytes', 2048),
    endpoint: args.get('endpoint') ?? 'edge',
    limits: args.get('limits') ?? 'spec',
    json: args.get('json'),
    appNodeArgs: (args.get('app-node-args') ?? '').split(' ').filter((arg) => arg !== ''),
    pin: args.has('pin'),
  };
  if (options.endpoint !== 'edge' && options.endpoint !== 'sink') throw new Error('--endpoint must be edge or sink');
  if (options.limits !== 'spec' && options.limits !== 'raised') throw new Error('--limits must be spec or raised');
  // The sink answers the connection check 202 without limits: the collector keeps its default budget.
  const budget = options.limits === 'spec' ? {} : { maxObservationsPerMinute: 0, maxRequestsPerMinute: 0 };

  let endpointChild: ChildProcess;
  let config: CollectorConfig;
  if (options.endpoint === 'edge') {
    const credentials = await createWebhookIntegration();
    const edge = await startEdge(options.limits as 'spec' | 'raised');
    endpointChild = edge.child;
    config = { endpoint: `http://127.0.0.1:${edge.port}`, ...credentials, ...budget };
    console.log(
      `edge: node dist/ingest/main.js on port ${edge.port} (pid ${edge.child.pid}), bench stores ${BENCH_STORES.DATABASE_URL.replace(/\/\/[^@]*@/, '//')}, `
        + `Live inbound http-webhook Integration ${credentials.integrationKey}, limits ${options.limits}, `
        + `collector budget ${budget.maxObservationsPerMinute === 0 ? 'lifted' : "the edge's"}`,
    );
  } else {
    const { child, line } = await spawnNode('sink', [fileURLToPath(import.meta.url), '--role', 'sink'], process.env, /^\{"ready"/);
    endpointChild = child;
    config = {
      endpoint: `http://127.0.0.1:${(JSON.parse(line) as { port: number }).port}`,
      integrationKey: 'int_bench_sink',
      connectionKey: 'conn_bench_sink',
      ingestToken: 'tok_bench_sink_0123456789abcdef',
      ...budget,
    };
    console.log(`endpoint: a 202 sink at ${config.endpoint} (pid ${child.pid})`);
  }

  const targets: Target[] = [];
  for (const variant of ['plain', 'instrumented'] as const) {
    const { child, line } = await spawnNode(
      `app ${variant}`,
      [...options.appNodeArgs, fileURLToPath(import.meta.url), '--role', 'app', '--variant', variant],
      { ...process.env, BENCH_COLLECTOR_CONFIG: JSON.stringify(config) },
      /^\{"ready"/,
    );
    const port = (JSON.parse(line) as { port: number }).port;
    console.log(`app ${variant}: pid ${child.pid}, port ${port}`);
    targets.push({
      variant,
      child,
      client: new RawHttpClient('127.0.0.1', port, options.connections, 30_000),
      requests: requestsFor(port, options.bodyBytes),
    });
  }
  const pids: Record<string, number | null> = {
    plain: targets[0].child.pid ?? null,
    instrumented: targets[1].child.pid ?? null,
    [options.endpoint]: endpointChild.pid ?? null,
    ...(options.endpoint === 'edge'
      ? { clickhouse: findPid('clickhouse'), redis: findPid('redis-server'), postgres: findPid('postgres') }
      : {}),
  };
  // The stores' own affinity, given back at the end (they outlive this run).
  const stores = ['clickhouse', 'redis', 'postgres'].map((name) => pids[name]).filter((pid): pid is number => typeof pid === 'number');
  const storeAffinity = new Map(stores.map((pid) => [pid, cpuAffinity(pid)]));
  if (options.pin) {
    pinToCpu(process.pid, 0);
    if (endpointChild.pid) pinToCpu(endpointChild.pid, 0);
    for (const pid of stores) pinToCpu(pid, 0);
    for (const target of targets) if (target.child.pid) pinToCpu(target.child.pid, 1);
    console.log('pinned: apps to CPU 1; driver, endpoint and stores to CPU 0');
  }
  console.log(
    `node ${process.version}; ${options.rounds} rounds × ${options.roundSeconds} s per app (alternating), warm-up ${options.warmup} s per app, `
      + `${options.connections} connections, bodies ${Math.min(...targets[0].requests.map((r) => r.body.length))}–${Math.max(...targets[0].requests.map((r) => r.body.length))} bytes`,
  );

  for (const target of targets) await closedLoop(target, options.connections, options.warmup, null);
  const check = await ask<AppStatus>(targets[1].child, { type: 'status' }, 'status');
  console.log(
    `collector connection check: ${JSON.stringify(check.connectionCheck)}; counters after warm-up: ${JSON.stringify(check.counters)}`,
  );

  const results: PhaseResult[] = [];
  for (let round = 0; round < options.rounds; round += 1) {
    const order = round % 2 === 0 ? targets : [...targets].reverse();
    for (const target of order) {
      const result = await phase(round, target, options.connections, options.roundSeconds, pids);
      results.push(result);
      printPhase(result);
    }
  }

  const flushed = await ask<AppStatus>(targets[1].child, { type: 'flush' }, 'flushed', 60_000).catch(() => null);
  const final = flushed ?? (await ask<AppStatus>(targets[1].child, { type: 'status' }, 'status'));

  // ---------------------------------------------------------------- summary
  const of = (variant: string) => results.filter((r) => r.variant === variant);
  const plain = of('plain');
  const instrumented = of('instrumented');
  const drops = plain.map((p, i) => (1 - instrumented[i].perSecond / p.perSecond) * 100);
  console.log(
    '\n| round | plain req/s | instrumented req/s | drop | plain p99 ms | instrumented p99 ms | plain app µs CPU/req | instrumented app µs CPU/req | difference µs/req | collector observed / delivered / dropped |',
  );
  console.log('|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|');
  for (let i = 0; i < plain.length; i += 1) {
    const p = plain[i];
    const q = instrumented[i];
    const c = q.collector;
    console.log(
      `| ${i + 1} | ${fmt(p.perSecond)} | ${fmt(q.perSecond)} | ${fmt(drops[i], 1)} % | ${fmt(p.p99, 2)} | ${fmt(q.p99, 2)} | ${fmt(p.appCpuUsPerRequest, 1)} | `
        + `${fmt(q.appCpuUsPerRequest, 1)} | ${fmt(q.appCpuUsPerRequest - p.appCpuUsPerRequest, 1)} | ${c ? `${fmt(c.observed)} / ${fmt(c.delivered)} / ${fmt(c.dropped)}` : '–'} |`,
    );
  }
  const total = (list: PhaseResult[]) => list.reduce((sum, r) => sum + r.requests, 0) / list.reduce((sum, r) => sum + r.seconds, 0);
  const cpuPerRequest = (list: PhaseResult[]) =>
    (list.reduce((sum, r) => sum + (r.cpu[r.variant] / 100) * r.seconds, 0) * 1e6) / list.reduce((sum, r) => sum + r.requests, 0);
  const overallDrop = (1 - total(instrumented) / total(plain)) * 100;
  const collectorTotal = instrumented.reduce<Counters | null>(
    (sum, r) => (r.collector ? (sum ? plus(sum, r.collector) : r.collector) : sum),
    null,
  );
  const measuredSeconds = instrumented.reduce((sum, r) => sum + r.seconds, 0);
  console.log(
    `| all | ${fmt(total(plain))} | ${fmt(total(instrumented))} | ${fmt(overallDrop, 1)} % | ${fmt(mean(plain.map((r) => r.p99)), 2)} (mean) | ${fmt(mean(instrumented.map((r) => r.p99)), 2)} (mean) | `
      + `${fmt(cpuPerRequest(plain), 1)} | ${fmt(cpuPerRequest(instrumented), 1)} | ${fmt(cpuPerRequest(instrumented) - cpuPerRequest(plain), 1)} | `
      + `${collectorTotal ? `${fmt(collectorTotal.observed)} / ${fmt(collectorTotal.delivered)} / ${fmt(collectorTotal.dropped)}` : '–'} |`,
  );
  console.log(
    `\nthroughput drop ${fmt(overallDrop, 1)} % overall (target ≤ ${TARGET_DROP_PERCENT} %: ${overallDrop <= TARGET_DROP_PERCENT ? 'met' : 'NOT met'}); `
      + `per round ${drops.map((d) => `${fmt(d, 1)} %`).join(', ')} (median ${fmt(median(drops), 1)}, min ${fmt(Math.min(...drops), 1)}, max ${fmt(Math.max(...drops), 1)}); `
      + `plain req/s spread ${fmt(spreadPercent(plain.map((r) => r.perSecond)), 1)} %, instrumented ${fmt(spreadPercent(instrumented.map((r) => r.perSecond)), 1)} %`,
  );
  if (collectorTotal) {
    console.log(
      `collector during the measured phases: observed ${fmt(collectorTotal.observed)} (${fmt(collectorTotal.observed / measuredSeconds)}/s), `
        + `throttled ${fmt(collectorTotal.throttled)}, delivered ${fmt(collectorTotal.delivered)} (${fmt(collectorTotal.delivered / measuredSeconds)}/s), dropped ${fmt(collectorTotal.dropped)} `
        + `(${fmt((collectorTotal.dropped / Math.max(1, collectorTotal.observed)) * 100, 1)} % of observed), failedBatches ${collectorTotal.failedBatches}, rejected ${collectorTotal.rejected}, `
        + `buildErrors ${collectorTotal.buildErrors}`,
    );
  }
  console.log(
    `collector counters at the end (after ${flushed ? 'a final flush' : 'the flush timed out'}): ${JSON.stringify(final.counters)}`,
  );

  if (options.json) writeFileSync(options.json, JSON.stringify({ options, results, drops, overallDrop, final: final.counters }, null, 2));
  for (const target of targets) {
    target.client.close();
    await stopChild(target.child);
  }
  await stopChild(endpointChild);
  for (const [pid, cpus] of storeAffinity) pinToCpu(pid, cpus);
}

const role = args.get('role');
if (role === 'app') await runApp(args.get('variant') ?? '');
else if (role === 'sink') runSink();
else await main();
