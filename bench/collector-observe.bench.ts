// Collector cost per observed call (issue 15, Done means: ≤ 10 µs per call for a 2 KB JSON body),
// network excluded. Run from the project root (the collector is imported as a user imports it, from
// its build in collector/dist, so build it first):
//
//   npm run build && npx tsc -p bench/tsconfig.json && node dist/bench/collector-observe.bench.js
//
// Where the time goes:
//
//   node --cpu-prof --cpu-prof-dir=/tmp/collector-prof dist/bench/collector-observe.bench.js
//   node dist/bench/collector-cpuprofile.js /tmp/collector-prof/<file>.cpuprofile
//
// BENCH_TIME_MS (default 2000) is the measured time per task (the sum of the timed calls),
// BENCH_BODY_BYTES (default 2048) the body size, BENCH_ONLY a text that task names must contain
// (e.g. BENCH_ONLY=json to profile the `{ json }` tasks alone).
//
// Set-up, and why: the collector's endpoint is a sink server in a child process that answers
// every request 202 at once (not a closed port). The measured loop never touches the network:
// tinybench calls `observe` back to back with no turn of the event loop in between, so the
// collector's pump (a setImmediate) cannot run while calls are timed; every CHUNK (2,000) calls,
// untimed, `await collector.flush()` delivers what was queued to the sink, which keeps the queue
// (10,000, the default) from ever overflowing: dropped stays 0, and delivered = observed is
// checked and printed at the end of each task. A closed port would have turned every flush into
// a failed upload and a backoff, the queue would have filled and the collector would then have
// spent its time dropping envelopes, which is not the common case. The sink being a separate
// process also lets the flushes' CPU time be read as the collector's delivery cost (batching, the
// HMAC over the body, the HTTP request), printed per envelope beside the per-call figures.
//
// Tasks: `{ json }` (a parsed body: what fastifyCollector and expressCollector pass), `{ raw }`
// (text the library parses), `{ json }` plus a correlation id (its keyed hash, as with the
// helpers' `correlation` option), a body `notInspected` (the envelope alone: what every call
// pays whatever the body), `{ json }` past the budget (a collector of 1 observation a minute: what
// a call costs once the budget is spent) and JSON.parse of the text alone (reference). 256
// distinct bodies of ~2 KB are cycled (an order webhook: nested objects, 6 line items; bench/collector-common.ts).

import { fileURLToPath } from 'node:url';
import { Bench } from 'tinybench';
import { createCollector, type Collector, type Observation } from '@integration-watch/collector';
import { bodyTexts, runSink } from './collector-common.js';
import { spawnNode } from './benchProcess.js';
import { stopChild } from './ingest-common.js';

const TIME_MS = Number(process.env.BENCH_TIME_MS ?? 2000);
const BODY_BYTES = Number(process.env.BENCH_BODY_BYTES ?? 2048);
const BODIES = 256;
/** Calls between two (untimed) flushes: well below maxQueueSize (10,000). */
const CHUNK = 2_000;
const TARGET_US = 10;

// ------------------------------------------------------------------ the sink (child process)

if (process.argv[2] === '--sink') {
  runSink();
} else {
  await main();
}

// ------------------------------------------------------------------ the benchmark

interface TaskStats {
  flushedEnvelopes: number;
  flushCpuUs: number;
  flushWallMs: number;
  tightLoopCallsPerSecond: number[];
}

async function main(): Promise<void> {
  const { child: sink, line } = await spawnNode('sink', [fileURLToPath(import.meta.url), '--sink'], process.env, /^\{"ready"/);
  const endpoint = `http://127.0.0.1:${(JSON.parse(line) as { port: number }).port}`;

  const texts = bodyTexts(BODIES, BODY_BYTES);
  const parsed = texts.map((text) => JSON.parse(text) as unknown);
  const sizes = texts.map((text) => Buffer.byteLength(text));
  console.log(
    `node ${process.version}, ${BODIES} distinct bodies of ${Math.min(...sizes)}–${Math.max(...sizes)} bytes, `
      + `${TIME_MS} ms measured per task, flush every ${CHUNK} calls (untimed) to a 202 sink at ${endpoint}`,
  );

  const newCollector = (maxObservationsPerMinute: number): Collector =>
    createCollector({
      endpoint,
      integrationKey: 'int_bench_observe',
      connectionKey: 'conn_bench_observe',
      ingestToken: 'tok_bench_observe_0123456789abcdef',
      direction: 'inbound',
      protocol: 'http-webhook',
      hashKey: 'bench-hash-key',
      // 0: every call builds its envelope (the default budget would skip all but 6,000 a minute).
      maxObservationsPerMinute,
      // The 202 sink has no request limit (the default 600 a minute would hold batches back).
      maxRequestsPerMinute: 0,
      connectionCheck: false,
    });

  // What fastifyCollector records for a webhook (server.ts recordInbound), minus the body.
  const base = (i: number): Observation => ({
    method: 'POST',
    routeTemplate: '/webhooks/orders',
    payloadLocation: 'message',
    statusCode: 200,
    durationMs: 0.512 + (i & 7) / 100,
    occurredAt: Date.now(),
  });

  interface Variant {
    name: string;
    call: (collector: Collector, i: number) => void;
    /** Not a collector call: no collector, no flush. */
    reference?: boolean;
    /** The collector's maxObservationsPerMinute (default 0: no budget). */
    budget?: number;
  }
  const allVariants: Variant[] = [
    { name: 'observe { json } (parsed 2 KB body)', call: (c, i) => c.observe({ ...base(i), body: { json: parsed[i & (BODIES - 1)] } }) },
    {
      name: 'observe { raw: string } (parse included)',
      call: (c, i) => c.observe({ ...base(i), body: { raw: texts[i & (BODIES - 1)], contentType: 'application/json' } }),
    },
    {
      name: 'observe { json } + correlation.sourceEventId',
      call: (c, i) => c.observe({ ...base(i), body: { json: parsed[i & (BODIES - 1)] }, correlation: { sourceEventId: `evt_${i}` } }),
    },
    { name: 'observe, body notInspected (envelope only)', call: (c, i) => c.observe({ ...base(i), body: { notInspected: 'absent' } }) },
    // What a call costs once the budget is spent (counted in throttled, nothing read).
    {
      name: 'observe { json } past the budget',
      call: (c, i) => c.observe({ ...base(i), body: { json: parsed[i & (BODIES - 1)] } }),
      budget: 1,
    },
    { name: 'reference: JSON.parse of the 2 KB text alone', call: (_c, i) => void JSON.parse(texts[i & (BODIES - 1)]), reference: true },
  ];
  const variants = allVariants.filter((variant) => process.env.BENCH_ONLY === undefined || variant.name.includes(process.env.BENCH_ONLY));

  const bench = new Bench({ time: TIME_MS, warmupTime: 500, warmupIterations: 2_000 });
  const stats = new Map<string, TaskStats>();
  const collectors = new Map<string, Collector>();
  for (const variant of variants) {
    const collector = newCollector(variant.budget ?? 0);
    collectors.set(variant.name, collector);
    const taskStats: TaskStats = { flushedEnvelopes: 0, flushCpuUs: 0, flushWallMs: 0, tightLoopCallsPerSecond: [] };
    stats.set(variant.name, taskStats);
    let i = 0;
    let sinceFlush = 0;
    bench.add(
      variant.name,
      () => {
        variant.call(collector, i++);
        sinceFlush += 1;
      },
      {
        afterEach: async () => {
          if (sinceFlush < CHUNK) return;
          sinceFlush = 0;
          if (variant.reference) return;
          // Untimed: deliver what the chunk queued (the sink answers 202 at once).
          const before = collector.counters().delivered;
          const cpu = process.cpuUsage();
          const wall = performance.now();
          await collector.flush();
          const used = process.cpuUsage(cpu);
          taskStats.flushWallMs += performance.now() - wall;
          taskStats.flushCpuUs += used.user + used.system;
          taskStats.flushedEnvelopes += collector.counters().delivered - before;
          // One tight loop of CHUNK calls timed as a whole: no per-call timer overhead.
          const started = process.hrtime.bigint();
          for (let k = 0; k < CHUNK; k += 1) variant.call(collector, i++);
          const ns = Number(process.hrtime.bigint() - started);
          taskStats.tightLoopCallsPerSecond.push((CHUNK / ns) * 1e9);
          await collector.flush();
        },
      },
    );
  }
  await bench.run();

  console.log('');
  console.log('| task | mean µs | p50 µs | p99 µs | max µs | calls/s (1 / mean) | tight loop calls/s | samples |');
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|');
  const summary: string[] = [];
  for (const task of bench.tasks) {
    const latency = task.result?.latency;
    if (!latency) throw new Error(`${task.name} did not run: ${String(task.result?.error)}`);
    const us = (ms: number | undefined) => ((ms ?? NaN) * 1000).toFixed(2);
    const loop = stats.get(task.name)!.tightLoopCallsPerSecond;
    const loopMean = loop.length ? loop.reduce((a, b) => a + b, 0) / loop.length : NaN;
    console.log(
      `| ${task.name} | ${us(latency.mean)} | ${us(latency.p50)} | ${us(latency.p99)} | ${us(latency.max)} | ${Math.round(1000 / latency.mean).toLocaleString('en-US')} | `
        + `${Number.isFinite(loopMean) ? Math.round(loopMean).toLocaleString('en-US') : '–'} | ${latency.samples.length.toLocaleString('en-US')} |`,
    );
    if (!variants.find((v) => v.name === task.name)?.reference) {
      summary.push(
        `${task.name}: mean ${us(latency.mean)} µs ${latency.mean * 1000 <= TARGET_US ? '≤' : '>'} ${TARGET_US} µs target, p99 ${us(latency.p99)} µs`,
      );
    }
  }
  console.log('');
  for (const line of summary) console.log(line);
  console.log('');
  console.log('Delivery (outside the timed calls: the untimed flushes to the 202 sink) and counters after a final flush:');
  for (const variant of variants) {
    if (variant.reference) continue;
    const collector = collectors.get(variant.name)!;
    await collector.flush();
    const c = collector.counters();
    const s = stats.get(variant.name)!;
    console.log(
      `  ${variant.name}: delivery CPU ${(s.flushCpuUs / Math.max(1, s.flushedEnvelopes)).toFixed(2)} µs/envelope `
        + `(wall ${((s.flushWallMs * 1000) / Math.max(1, s.flushedEnvelopes)).toFixed(2)} µs/envelope); observed ${c.observed.toLocaleString('en-US')}, `
        + `delivered ${c.delivered.toLocaleString('en-US')}, dropped ${c.dropped}, buildErrors ${c.buildErrors}, rejected ${c.rejected}, `
        + `failedBatches ${c.failedBatches}, skippedInspections ${c.skippedInspections}, throttled ${c.throttled.toLocaleString('en-US')}, state ${c.deliveryState}`
        + (c.dropped === 0 && c.delivered === c.observed && c.buildErrors === 0
          ? ' — queue never overflowed'
          : ' — CHECK: drops, build errors or undelivered envelopes'),
    );
    await collector.close(1_000);
  }
  await stopChild(sink);
}
