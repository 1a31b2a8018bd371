// Rule evaluation benchmark (issue 16 item 6): the real analyzer process (dist/analyzer/main.js)
// fed `--rate` source observations per second of enabled reconciliation rules, each followed by
// its outcome one feed tick later (except `--missing` percent of them, which must fire). Rows go
// straight into ClickHouse and jobs straight onto the analysis stream, as the edge writes them,
// so the figures are the analyzer's and the stores', not the edge's. Run from the project root:
//
//   npm run bench:rules
//   node dist/bench/rule-evaluation.js [--rate 10000] [--duration 60] [--connections 10] [--delay-ms 5000] [--missing 1]
//
// Printed: sources fed and evaluated per second, the analysis lag (stream entries left, drain time
// after the load), the deadline index (rows, table + index bytes, sampled each second: max and
// mean), the analyzer's CPU per evaluated source (process CPU over the load, from /proc), the
// machine's CPU, and the check that exactly the sources without an outcome were reported missing.

import { randomBytes } from 'node:crypto';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createClient } from '@clickhouse/client';
import { Redis } from 'ioredis';
import pg from 'pg';
import { ANALYSIS_CONSUMER_GROUP, RedisKeys } from '../shared/redis.js';
import {
  BENCH_STORES,
  benchEdgeEnv,
  createBenchCollectors,
  flushBenchRedis,
  fmt,
  machineCpu,
  prepareBenchDatabases,
  processCpuSeconds,
  processesCpuSeconds,
  stopChild,
} from './ingest-common.js';
import { freePort, parseArgs, spawnNode } from './benchProcess.js';

const args = parseArgs(process.argv.slice(2));
const KNOWN = ['rate', 'duration', 'connections', 'delay-ms', 'missing'];
for (const name of args.keys())
  if (!KNOWN.includes(name)) throw new Error(`unknown option --${name} (known: ${KNOWN.map((k) => `--${k}`).join(' ')})`);
const RATE = Number(args.get('rate') ?? 10_000);
const DURATION_S = Number(args.get('duration') ?? 60);
const CONNECTIONS = Number(args.get('connections') ?? 10);
const DELAY_MS = Number(args.get('delay-ms') ?? 5_000);
const MISSING_PERCENT = Number(args.get('missing') ?? 1);
const TICK_MS = 100;
/** Observations per analysis job, as the edge's batches of the other benches. */
const PER_BATCH = 50;
const here = dirname(fileURLToPath(import.meta.url));

interface Row {
  connection_id: string;
  event_id: string;
  batch_id: string;
  binding: string;
  envelope_version: string;
  event_type: string;
  method: string;
  route_template: string;
  payload_location: string;
  status_code: number;
  duration_ms: number;
  attempt: number;
  occurred_at_ms: number;
  received_at_ms: number;
  received_date: string;
  observed_fingerprint: string;
  schema_fingerprint: string;
  schema_inspected: number;
  schema_shape: string;
  redaction_policy_version: string;
  source_event_id_hash: string;
  idempotency_key_hash: string;
  hash_namespace: string;
  outcome_accepted: number;
  business_object_type: string;
  business_object_id_hash: string;
}

const SHAPE = '{"kind":"object","fields":{"id":{"kind":"string"}}}';

function row(
  connectionId: string,
  batchId: string,
  kind: 'source' | 'outcome',
  hash: string,
  occurredAtMs: number,
  receivedAtMs: number,
): Row {
  return {
    connection_id: connectionId,
    event_id: `evt_${randomBytes(12).toString('hex')}`,
    batch_id: batchId,
    binding: 'ws|acct|wint|svc_int|ten|env|live|inbound|http-webhook',
    envelope_version: '0.3',
    event_type: kind === 'source' ? 'payment.succeeded' : 'invoice.created',
    method: 'POST',
    route_template: '/webhooks/payments',
    payload_location: 'request',
    status_code: 200,
    duration_ms: 1,
    attempt: 1,
    occurred_at_ms: occurredAtMs,
    received_at_ms: receivedAtMs,
    received_date: new Date(receivedAtMs).toISOString().slice(0, 10),
    observed_fingerprint: '',
    schema_fingerprint: '',
    schema_inspected: 0,
    schema_shape: SHAPE,
    redaction_policy_version: '2025-01',
    source_event_id_hash: hash,
    idempotency_key_hash: '',
    hash_namespace: 'payments',
    outcome_accepted: 1,
    business_object_type: kind === 'source' ? 'payment' : 'invoice',
    business_object_id_hash: '',
  };
}

async function analyzerMetric(port: number, name: string): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  return text
    .split('\n')
    .filter((line) => line.startsWith(name))
    .reduce((sum, line) => sum + Number(line.split(' ').pop()), 0);
}

async function main(): Promise<void> {
  await prepareBenchDatabases();
  await flushBenchRedis();
  const pool = new pg.Pool({ connectionString: BENCH_STORES.DATABASE_URL, max: 2 });
  const redis = new Redis(BENCH_STORES.REDIS_URL);
  const clickhouse = createClient({
    url: BENCH_STORES.CLICKHOUSE_URL,
    database: BENCH_STORES.CLICKHOUSE_DATABASE,
    request_timeout: 120_000,
  });
  await pool.query('DELETE FROM rule_deadlines');
  const collectors = await createBenchCollectors(1, CONNECTIONS);
  const connections = collectors.map((c) => ({
    id: c.connectionId,
    workspaceId: c.workspaceId,
    ruleId: `rule_bench${randomBytes(8).toString('hex')}`,
  }));
  const now = new Date();
  for (const c of connections) {
    await pool.query(
      `INSERT INTO reconciliation_rules (id, connection_id, workspace_id, source_event_type, expected_object_type, max_delay_ms, enabled, created_at, updated_at)
       VALUES ($1, $2, $3, 'payment.succeeded', 'invoice', $4, true, $5, $5)`,
      [c.ruleId, c.id, c.workspaceId, DELAY_MS, now],
    );
  }
  await redis.xgroup('CREATE', RedisKeys.analysisJobs, ANALYSIS_CONSUMER_GROUP, '0', 'MKSTREAM').catch(() => undefined);

  const port = await freePort();
  const { child } = await spawnNode(
    'analyzer',
    [resolve(here, '../analyzer/main.js')],
    {
      ...process.env,
      ...benchEdgeEnv(),
      ANALYZER_HOST: '127.0.0.1',
      ANALYZER_PORT: String(port),
      ANALYZER_WORKER_THREADS: process.env.ANALYZER_WORKER_THREADS ?? '1',
    },
    /^analyzer ready at/,
  );

  console.log(
    `rule evaluation: ${fmt(RATE)} sources/s over ${CONNECTIONS} connections for ${DURATION_S} s, each followed by its outcome one ${TICK_MS} ms tick later `
      + `except ${MISSING_PERCENT} %; maxDelayMs ${fmt(DELAY_MS)}; ${PER_BATCH} observations per analysis job`,
  );
  const perTick = Math.round((RATE * TICK_MS) / 1000);
  let pendingOutcomes: { connectionId: string; hash: string; occurredAtMs: number }[] = [];
  let sourcesFed = 0;
  let missingFed = 0;
  let feedErrors = 0;
  const samples: { rows: number; bytes: number }[] = [];
  const cpu0 = processCpuSeconds(child.pid!);
  const stores0 = {
    postgres: processesCpuSeconds('postgres'),
    clickhouse: processesCpuSeconds('clickhouse'),
    redis: processesCpuSeconds('redis'),
    driver: process.cpuUsage(),
  };
  const machine0 = machineCpu();
  const started = Date.now();
  const sampler = setInterval(() => {
    void pool
      .query<{ rows: string; bytes: string }>(
        "SELECT (SELECT count(*) FROM rule_deadlines) AS rows, pg_total_relation_size('rule_deadlines') AS bytes",
      )
      .then(({ rows: [r] }) => {
        samples.push({ rows: Number(r.rows), bytes: Number(r.bytes) });
      });
  }, 1000);

  /** One tick: `withSources` new sources, and the outcomes of the previous tick's sources. */
  async function feed(tickStarted: number, withSources: boolean): Promise<void> {
    // Open loop: the sources due by now at RATE, whatever the previous ticks took.
    const due = withSources ? Math.max(0, Math.round((RATE * (tickStarted - started)) / 1000) + perTick - sourcesFed) : 0;
    const rows: Row[] = [];
    const jobs: { connectionId: string; workspaceId: string; batchId: string; ids: string[] }[] = [];
    const outcomes = pendingOutcomes;
    pendingOutcomes = [];
    for (const [index, c] of connections.entries()) {
      const share = Math.floor(due / CONNECTIONS) + (index < due % CONNECTIONS ? 1 : 0);
      const mine: Row[] = [];
      for (let i = 0; i < share; i++) {
        const hash = `hmac:${randomBytes(8).toString('hex')}`;
        mine.push(row(c.id, '', 'source', hash, tickStarted, tickStarted));
        if (sourcesFed++ % Math.round(100 / MISSING_PERCENT) === 0) missingFed += 1;
        else pendingOutcomes.push({ connectionId: c.id, hash, occurredAtMs: tickStarted + 50 });
      }
      for (const o of outcomes) if (o.connectionId === c.id) mine.push(row(c.id, '', 'outcome', o.hash, o.occurredAtMs, tickStarted));
      for (let i = 0; i < mine.length; i += PER_BATCH) {
        const batchId = `bench_${randomBytes(8).toString('hex')}`;
        const batch = mine.slice(i, i + PER_BATCH);
        for (const r of batch) r.batch_id = batchId;
        rows.push(...batch);
        jobs.push({ connectionId: c.id, workspaceId: c.workspaceId, batchId, ids: batch.map((r) => r.event_id) });
      }
    }
    try {
      await clickhouse.insert({ table: 'observations', values: rows, format: 'JSONEachRow' });
      const multi = redis.multi();
      for (const job of jobs) {
        multi.xadd(
          RedisKeys.analysisJobs,
          '*',
          'connectionId',
          job.connectionId,
          'workspaceId',
          job.workspaceId,
          'mode',
          'live',
          'batchId',
          job.batchId,
          'receivedAtMs',
          String(tickStarted),
          'eventIds',
          job.ids.join(','),
        );
      }
      await multi.exec();
    } catch (error) {
      feedErrors += 1;
      console.error(`feed: ${(error as Error).message}`);
    }
  }

  while (Date.now() - started < DURATION_S * 1000) {
    const tickStarted = Date.now();
    await feed(tickStarted, true);
    const wait = TICK_MS - (Date.now() - tickStarted);
    if (wait > 0) await new Promise((done) => setTimeout(done, wait));
  }
  // The last sources' outcomes.
  await feed(Date.now(), false);
  const loadSeconds = (Date.now() - started) / 1000;
  const cpuLoad = processCpuSeconds(child.pid!) - cpu0;
  const machine1 = machineCpu();
  const driver = process.cpuUsage(stores0.driver);
  const shares = {
    postgres: processesCpuSeconds('postgres') - stores0.postgres,
    clickhouse: processesCpuSeconds('clickhouse') - stores0.clickhouse,
    redis: processesCpuSeconds('redis') - stores0.redis,
    driver: (driver.user + driver.system) / 1e6,
  };
  const evaluated = await analyzerMetric(port, 'analyzer_rule_sources_total');
  const backlogAtEnd = await redis.xlen(RedisKeys.analysisJobs);
  const drainStarted = Date.now();
  while ((await redis.xlen(RedisKeys.analysisJobs)) > 0 && Date.now() - drainStarted < 120_000)
    await new Promise((done) => setTimeout(done, 100));
  const drainSeconds = (Date.now() - drainStarted) / 1000;
  clearInterval(sampler);
  // Every missing source fires once its delay, the grace and stream time have passed.
  const ruleIds = connections.map((c) => c.ruleId);
  const firedOf = async () =>
    Number(
      (
        await pool.query<{ n: string }>('SELECT COALESCE(sum(affected_records), 0) AS n FROM incidents WHERE rule_id = ANY($1::text[])', [
          ruleIds,
        ])
      ).rows[0].n,
    );
  const waitStarted = Date.now();
  while ((await firedOf()) < missingFed && Date.now() - waitStarted < DELAY_MS + 60_000) await new Promise((done) => setTimeout(done, 200));
  await new Promise((done) => setTimeout(done, 2_000));
  const fired = await firedOf();
  const left = Number((await pool.query<{ n: string }>('SELECT count(*) AS n FROM rule_deadlines')).rows[0].n);

  const busy = machine1.busy - machine0.busy;
  const total = machine1.total - machine0.total;
  const maxRows = Math.max(...samples.map((s) => s.rows));
  const meanRows = samples.reduce((sum, s) => sum + s.rows, 0) / samples.length;
  const maxBytes = Math.max(...samples.map((s) => s.bytes));
  console.log(
    `  fed ${fmt(sourcesFed)} sources (${fmt(sourcesFed / loadSeconds)}/s) and ${fmt(sourcesFed - missingFed)} outcomes in ${fmt(loadSeconds, 1)} s; ${feedErrors} feed errors`,
  );
  console.log(
    `  evaluated ${fmt(evaluated)} sources during the load (${fmt(evaluated / loadSeconds)}/s); stream entries left at load end ${fmt(backlogAtEnd)}, drained in ${fmt(drainSeconds, 2)} s`,
  );
  console.log(
    `  deadline index: max ${fmt(maxRows)} rows, mean ${fmt(meanRows)}, max ${fmt(maxBytes / 1024 / 1024, 1)} MiB (table + indexes); ${fmt(left)} left at the end`,
  );
  console.log(
    `  analyzer CPU ${fmt(cpuLoad, 1)} s over the load (${fmt((100 * cpuLoad) / loadSeconds)} % of a core): ${fmt((cpuLoad * 1e6) / Math.max(1, evaluated), 1)} µs per evaluated source (all its analysis included); machine ${fmt((100 * busy) / total)} % busy`,
  );
  console.log(
    `  % of a core over the load: ${Object.entries(shares)
      .map(([name, sec]) => `${name} ${fmt((100 * sec) / loadSeconds)}`)
      .join(', ')}`,
  );
  console.log(`  missing outcomes: fed ${fmt(missingFed)}, reported ${fmt(fired)} ${fired === missingFed ? '(exact)' : '(MISMATCH)'}`);
  await stopChild(child);
  await pool.end();
  redis.disconnect();
  await clickhouse.close();
  if (fired !== missingFed) process.exitCode = 1;
}

await main();
