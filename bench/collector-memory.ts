// Collector memory under a stalled edge (issue 15, Done means: memory bounded; `dropped` grows
// once maxQueueSize is reached; the heap plateaus). Run from the project root:
//
//   npm run build && npx tsc -p bench/tsconfig.json && node dist/bench/collector-memory.js
//   node dist/bench/collector-memory.js --calls 500000 --hold 5 --scenario stalled,down --sequential
//
// Two scenarios, each in a fresh Node process (started with --expose-gc) so that its memory is the
// collector's alone:
// - `stalled`: the endpoint accepts connections and reads every byte, but never answers (a TCP
//   server in this, the parent, process): each upload (and the start-up connection check) waits
//   for the collector's requestTimeoutMs (10 s), then fails and is retried after a backoff.
// - `down`: nothing listens on the endpoint's port (connection refused at once, then backoff).
// - `healthy` (a control, only when named: --scenario stalled,down,healthy): a sink process
//   answers every upload 202 at once; the heap's saw-tooth without any stall, for comparison.
// Each process observes `--calls` (500,000) webhook observations with ~2 KB parsed JSON bodies
// (`{ json }`, as fastifyCollector passes them; 256 distinct bodies, bench/collector-common.ts) as
// fast as it can, yielding to the event loop every 1,000 calls (timers, sockets and the sampler
// run), then holds `--hold` (5) seconds with the edge still stalled, then runs a full GC and
// closes the collector. heapUsed, rss, external and arrayBuffers and the counters are sampled
// every second (and the peaks every 5,000 calls). The plateau is the median of the samples taken
// once the queue was full (observed - dropped ≥ maxQueueSize); heapUsed is a saw-tooth between
// collections, so its drift is the highest sample of the last third of those samples minus the
// highest of the first third (≤ 0: no growth), and what is really retained is the heap after a
// full GC at the end (queue still full). Default options but
// connectionCheck (on, the default) and hashKey. The scenarios run side by side, one per core,
// unless --sequential.

import { createServer, type Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { createCollector, type CollectorCounters } from '@integration-watch/collector';
import { bodyTexts, runSink } from './collector-common.js';
import { freePort, spawnNode } from './benchProcess.js';
import { stopChild } from './ingest-common.js';

const MB = 1024 * 1024;
const MAX_QUEUE = 10_000; // the collector's default maxQueueSize (README "Options")

function parseArgs(argv: string[]): Map<string, string> {
  const parsed = new Map<string, string>();
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i];
    if (!arg.startsWith('--')) throw new Error(`unexpected argument ${arg}`);
    const name = arg.slice(2);
    if (i + 1 < argv.length && !argv[i + 1].startsWith('--')) parsed.set(name, argv[++i]);
    else parsed.set(name, 'true');
  }
  return parsed;
}
const args = parseArgs(process.argv.slice(2));

interface Sample {
  t: number;
  calls: number;
  heapUsed: number;
  rss: number;
  external: number;
  arrayBuffers: number;
  counters: CollectorCounters;
}

interface ScenarioResult {
  scenario: string;
  calls: number;
  observeSeconds: number;
  baselineHeap: number;
  baselineRss: number;
  peakHeap: number;
  peakRss: number;
  plateauHeap: number;
  plateauRss: number;
  driftHeap: number;
  afterGcHeap: number;
  afterGcRss: number;
  fullAtCalls: number | null;
  firstDropAtCalls: number | null;
  final: CollectorCounters;
  afterClose: CollectorCounters;
  samples: number;
}

const median = (values: number[]): number => {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)];
};

// ------------------------------------------------------------------ one scenario (child process)

async function runScenario(scenario: string, endpoint: string, calls: number, holdSeconds: number): Promise<ScenarioResult> {
  const gc = (globalThis as { gc?: () => void }).gc ?? (() => undefined);
  const texts = bodyTexts(256, 2048);
  const bodies = texts.map((text) => JSON.parse(text) as unknown);
  gc();
  const base = process.memoryUsage();

  const collector = createCollector({
    endpoint,
    integrationKey: 'int_bench_memory',
    connectionKey: 'conn_bench_memory',
    ingestToken: 'tok_bench_memory_0123456789abcdef',
    direction: 'inbound',
    protocol: 'http-webhook',
    hashKey: 'bench-hash-key',
    // Every call builds its envelope: the budget (which would skip all but 6,000 a minute) is lifted,
    // and so is the request budget (600 uploads a minute would hold delivery back).
    maxObservationsPerMinute: 0,
    maxRequestsPerMinute: 0,
  });

  const samples: Sample[] = [];
  let done = 0;
  let peakHeap = 0;
  let peakRss = 0;
  let fullAtCalls: number | null = null;
  let firstDropAtCalls: number | null = null;
  const started = performance.now();
  const sample = (): Sample => {
    const memory = process.memoryUsage();
    peakHeap = Math.max(peakHeap, memory.heapUsed);
    peakRss = Math.max(peakRss, memory.rss);
    const s: Sample = {
      t: (performance.now() - started) / 1000,
      calls: done,
      heapUsed: memory.heapUsed,
      rss: memory.rss,
      external: memory.external,
      arrayBuffers: memory.arrayBuffers,
      counters: collector.counters(),
    };
    return s;
  };
  const print = (s: Sample) => {
    const c = s.counters;
    process.stdout.write(
      `  [${scenario}] ${s.t.toFixed(1).padStart(5)} s ${s.calls.toLocaleString('en-US').padStart(9)} calls  heap ${(s.heapUsed / MB).toFixed(1).padStart(6)} MB  `
        + `rss ${(s.rss / MB).toFixed(1).padStart(6)} MB  ext ${(s.external / MB).toFixed(1).padStart(5)} MB  observed ${c.observed.toLocaleString('en-US').padStart(9)}  `
        + `dropped ${c.dropped.toLocaleString('en-US').padStart(9)}  queued ${(c.observed - c.dropped - c.delivered - c.rejected).toLocaleString('en-US').padStart(6)}  `
        + `failedBatches ${c.failedBatches}  connection ${c.connectionStatus}  state ${c.deliveryState}\n`,
    );
  };
  const timer = setInterval(() => {
    const s = sample();
    samples.push(s);
    print(s);
  }, 1000);

  // What fastifyCollector records for a webhook (collector/src/instrument/server.ts).
  const yieldToLoop = () => new Promise<void>((resolve) => setImmediate(resolve));
  while (done < calls) {
    const end = Math.min(calls, done + 1_000);
    for (; done < end; done += 1) {
      collector.observe({
        method: 'POST',
        routeTemplate: '/webhooks/orders',
        payloadLocation: 'message',
        statusCode: 200,
        durationMs: 0.5,
        occurredAt: Date.now(),
        body: { json: bodies[done & 255] },
        correlation: { sourceEventId: `evt_${done}` },
      });
    }
    if (fullAtCalls === null || firstDropAtCalls === null) {
      const c = collector.counters();
      if (fullAtCalls === null && c.observed - c.dropped - c.delivered - c.rejected >= MAX_QUEUE) fullAtCalls = done;
      if (firstDropAtCalls === null && c.dropped > 0) firstDropAtCalls = done;
    }
    if (done % 5_000 === 0) {
      const memory = process.memoryUsage();
      peakHeap = Math.max(peakHeap, memory.heapUsed);
      peakRss = Math.max(peakRss, memory.rss);
    }
    await yieldToLoop();
  }
  const observeSeconds = (performance.now() - started) / 1000;
  await new Promise((resolve) => setTimeout(resolve, holdSeconds * 1000));
  clearInterval(timer);
  const last = sample();
  samples.push(last);
  print(last);
  gc();
  const afterGc = process.memoryUsage();
  const stalledCounters = collector.counters();
  await collector.close(500);
  const afterClose = collector.counters();

  // Samples once the queue had filled (for `healthy`, where it never fills: after the first second).
  const full = fullAtCalls === null ? samples.slice(1) : samples.filter((s) => s.calls >= (fullAtCalls as number));
  const third = Math.max(1, Math.floor(full.length / 3));
  return {
    scenario,
    calls,
    observeSeconds,
    baselineHeap: base.heapUsed,
    baselineRss: base.rss,
    peakHeap,
    peakRss,
    plateauHeap: median(full.map((s) => s.heapUsed)),
    plateauRss: median(full.map((s) => s.rss)),
    driftHeap: Math.max(...full.slice(-third).map((s) => s.heapUsed)) - Math.max(...full.slice(0, third).map((s) => s.heapUsed)),
    afterGcHeap: afterGc.heapUsed,
    afterGcRss: afterGc.rss,
    fullAtCalls,
    firstDropAtCalls,
    final: stalledCounters,
    afterClose,
    samples: full.length,
  };
}

// ------------------------------------------------------------------ the driver (parent process)

/** Accepts connections and reads everything, never answers. */
function startStalledServer(): Promise<{ port: number; close: () => void; bytes: () => number; connections: () => number }> {
  const sockets = new Set<Socket>();
  let bytes = 0;
  let connections = 0;
  const server = createServer((socket) => {
    connections += 1;
    sockets.add(socket);
    socket.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
    });
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () =>
      resolve({
        port: (server.address() as { port: number }).port,
        close: () => {
          for (const socket of sockets) socket.destroy();
          server.close();
        },
        bytes: () => bytes,
        connections: () => connections,
      }),
    );
  });
}

async function main(): Promise<void> {
  const calls = Number(args.get('calls') ?? 500_000);
  const hold = Number(args.get('hold') ?? 5);
  const scenarios = (args.get('scenario') ?? 'stalled,down').split(',');
  const sequential = args.has('sequential');
  for (const scenario of scenarios) if (!['stalled', 'down', 'healthy'].includes(scenario)) throw new Error(`unknown scenario ${scenario}`);

  const stalled = await startStalledServer();
  const sink = scenarios.includes('healthy')
    ? await spawnNode('sink', [fileURLToPath(import.meta.url), '--role', 'sink'], process.env, /^\{"ready"/)
    : null;
  const sinkPort = sink ? (JSON.parse(sink.line) as { port: number }).port : 0;
  const downPort = await freePort(); // nothing listens there once freePort closed it
  console.log(
    `node ${process.version}; ${calls.toLocaleString('en-US')} calls per scenario, ~2 KB parsed JSON bodies, hold ${hold} s, `
      + `maxQueueSize ${MAX_QUEUE.toLocaleString('en-US')} (default), scenarios ${scenarios.join(', ')} ${sequential ? 'one after the other' : 'side by side'}`,
  );

  const runOne = async (scenario: string): Promise<ScenarioResult> => {
    const endpoint = `http://127.0.0.1:${scenario === 'stalled' ? stalled.port : scenario === 'down' ? downPort : sinkPort}`;
    const { child } = await spawnNode(
      scenario,
      [
        '--expose-gc',
        fileURLToPath(import.meta.url),
        '--role',
        'run',
        '--scenario',
        scenario,
        '--endpoint',
        endpoint,
        '--calls',
        String(calls),
        '--hold',
        String(hold),
      ],
      process.env,
      /^ready/,
    );
    let result: ScenarioResult | undefined;
    child.stdout!.setEncoding('utf8');
    let buffered = '';
    child.stdout!.on('data', (chunk: string) => {
      buffered += chunk;
      for (let at = buffered.indexOf('\n'); at !== -1; at = buffered.indexOf('\n')) {
        const line = buffered.slice(0, at);
        buffered = buffered.slice(at + 1);
        if (line.startsWith('{"result"')) result = (JSON.parse(line) as { result: ScenarioResult }).result;
        else process.stdout.write(`${line}\n`);
      }
    });
    await new Promise<void>((resolve) => child.once('exit', () => resolve()));
    if (!result) throw new Error(`scenario ${scenario} gave no result`);
    return result;
  };
  const results = sequential
    ? await scenarios.reduce<Promise<ScenarioResult[]>>(
        async (list, scenario) => [...(await list), await runOne(scenario)],
        Promise.resolve([]),
      )
    : await Promise.all(scenarios.map(runOne));
  console.log(
    `\nstalled server: ${stalled.connections()} connections accepted, ${(stalled.bytes() / MB).toFixed(1)} MB read, no byte answered`,
  );
  stalled.close();
  if (sink) await stopChild(sink.child);

  const mb = (bytes: number) => (bytes / MB).toFixed(1);
  console.log(
    '\n| scenario | calls | calls/s | heap baseline | heap peak | heap plateau (max drift) | heap after GC | rss peak | rss plateau | queue full at | first drop at | observed | dropped | queued at end | failedBatches | dropped in all after close |',
  );
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const r of results) {
    const c = r.final;
    console.log(
      `| ${r.scenario} | ${r.calls.toLocaleString('en-US')} | ${Math.round(r.calls / r.observeSeconds).toLocaleString('en-US')} | ${mb(r.baselineHeap)} MB | ${mb(r.peakHeap)} MB | `
        + `${mb(r.plateauHeap)} MB (${r.driftHeap >= 0 ? '+' : ''}${mb(r.driftHeap)}) | ${mb(r.afterGcHeap)} MB | ${mb(r.peakRss)} MB | ${mb(r.plateauRss)} MB | `
        + `${r.fullAtCalls?.toLocaleString('en-US') ?? '–'} | ${r.firstDropAtCalls?.toLocaleString('en-US') ?? '–'} | ${c.observed.toLocaleString('en-US')} | ${c.dropped.toLocaleString('en-US')} | `
        + `${(c.observed - c.dropped - c.delivered - c.rejected).toLocaleString('en-US')} | ${c.failedBatches} | ${r.afterClose.dropped.toLocaleString('en-US')} |`,
    );
  }
  for (const r of results) {
    const c = r.final;
    if (r.scenario === 'healthy') {
      console.log(
        `healthy (control): delivered ${c.delivered.toLocaleString('en-US')} of ${c.observed.toLocaleString('en-US')}, dropped ${c.dropped.toLocaleString('en-US')}, `
          + `heap median ${mb(r.plateauHeap - r.baselineHeap)} MB above the baseline, after GC ${mb(r.afterGcHeap - r.baselineHeap)} MB: the saw-tooth of a collector that keeps up`,
      );
      continue;
    }
    const expectedDropped = c.observed - MAX_QUEUE;
    console.log(
      `${r.scenario}: dropped ${c.dropped.toLocaleString('en-US')} vs observed - maxQueueSize = ${expectedDropped.toLocaleString('en-US')} `
        + `(difference ${(c.dropped - expectedDropped).toLocaleString('en-US')}: the batch in flight or waiting for its retry), `
        + `heap plateau ${mb(r.plateauHeap - r.baselineHeap)} MB above the baseline over ${r.samples} samples (median), highest sample of the last third minus the first third ${mb(r.driftHeap)} MB, `
        + `after GC ${mb(r.afterGcHeap - r.baselineHeap)} MB above the baseline; connectionStatus ${c.connectionStatus}, state ${c.deliveryState}`,
    );
  }
}

if (args.get('role') === 'sink') {
  runSink();
} else if (args.get('role') === 'run') {
  process.stdout.write('ready\n');
  const result = await runScenario(args.get('scenario')!, args.get('endpoint')!, Number(args.get('calls')), Number(args.get('hold')));
  process.stdout.write(`${JSON.stringify({ result })}\n`);
  process.exit(0);
} else {
  await main();
}
