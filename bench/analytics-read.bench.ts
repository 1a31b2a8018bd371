// Connection analytics read benchmark (analyzer issue, bench/README.md "Analytics read"):
// 10,000,000 stored observations of 100 connections over the last 7 days in the bench ClickHouse
// (`svc_bench.observations`, generated inside ClickHouse with INSERT … SELECT FROM numbers), then
// `GET /v1/connections/{id}/analytics?from=<7 days ago>&to=<now>&bucket=hour` through the
// management plane in-process (buildApp + inject, the bench stores): 3 runs of 10 requests,
// median and p99 per run, against the target of 300 ms.
//
// One of the 100 connection ids is a real Live connection of the bench PostgreSQL (workspace
// "Bench analytics" of bench-analytics@example.test, created on first use and reused), so the
// route accepts it; the other 99 are `int_bench_analytics_<n>`. The rows are generated only when
// they are not already there, and deleted afterwards (ALTER TABLE … DELETE, waited for) unless
// `--keep`.
//   npm run bench:analytics [-- --keep]
//   node dist/bench/analytics-read.bench.js [--keep] [--runs 3] [--requests 10]

import { cpus } from 'node:os';
import { createClient } from '@clickhouse/client';
import { sqlLiteral } from '../shared/clickhouse/escape.js';
import { bootstrap } from '../management/admin/bootstrap.js';
import {
  BENCH_STORES,
  findPid,
  fmt,
  machineCpu,
  openBenchManagement,
  percentile,
  prepareBenchDatabases,
  processCpuSeconds,
} from './ingest-common.js';

const argv = process.argv.slice(2);
const flag = (name: string) => argv.includes(`--${name}`);
const value = (name: string, fallback: number) => {
  const at = argv.indexOf(`--${name}`);
  if (at === -1) return fallback;
  const parsed = Number(argv[at + 1]);
  if (!Number.isInteger(parsed) || parsed <= 0) throw new Error(`--${name} must be a positive integer`);
  return parsed;
};
for (const arg of argv) {
  if (arg.startsWith('--') && !['--keep', '--runs', '--requests'].includes(arg))
    throw new Error(`unknown option ${arg} (known: --keep --runs N --requests N)`);
}
const KEEP = flag('keep');
const RUNS = value('runs', 3);
const REQUESTS = value('requests', 10);

const ROWS = 10_000_000;
const CONNECTIONS = 100;
const DAY_MS = 24 * 3600 * 1000;
const SPAN_MS = 7 * DAY_MS;
const FAKE_PREFIX = 'int_bench_analytics';
const TARGET_MS = 300;
const EMAIL = 'bench-analytics@example.test';
const WORKSPACE = 'Bench analytics';

const clickhouse = createClient({
  url: BENCH_STORES.CLICKHOUSE_URL,
  database: BENCH_STORES.CLICKHOUSE_DATABASE,
  request_timeout: 900_000,
  compression: { request: false, response: false },
});

const rowsWhere = (realId: string) => `connection_id LIKE ${sqlLiteral(`${FAKE_PREFIX}%`)} OR connection_id = ${sqlLiteral(realId)}`;

async function count(query: string): Promise<number> {
  const result = await clickhouse.query({ query, format: 'JSONEachRow' });
  return Number((await result.json<{ n: string }>())[0].n);
}

/** Waits until ClickHouse runs no merge and no mutation of the bench database (at most maxSeconds). */
async function settle(maxSeconds: number): Promise<number> {
  const db = sqlLiteral(BENCH_STORES.CLICKHOUSE_DATABASE);
  const started = performance.now();
  while ((performance.now() - started) / 1000 < maxSeconds) {
    const busy = await count(`SELECT (SELECT count() FROM system.merges WHERE database = ${db})
      + (SELECT count() FROM system.mutations WHERE database = ${db} AND table = 'observations' AND NOT is_done) AS n`);
    if (busy === 0) break;
    await new Promise((done) => setTimeout(done, 1000));
  }
  return (performance.now() - started) / 1000;
}

async function deleteRows(realId: string): Promise<void> {
  await clickhouse.command({ query: `ALTER TABLE observations DELETE WHERE ${rowsWhere(realId)}` });
  const waited = await settle(600);
  console.log(
    `deleted the generated rows (ALTER TABLE … DELETE, mutation done in ${fmt(waited, 1)} s); left: ${fmt(await count(`SELECT count() AS n FROM observations WHERE ${rowsWhere(realId)}`))}`,
  );
}

/**
 * 10,000,000 rows: row n belongs to connection n % 100 (0 = the real one), the k-th row of a
 * connection (k = n / 100) is received at an even step over [now - 7 days, now). Five operations,
 * status codes 200/201 (90 %), 404, 409, 500, 503 and 0 (transport error), durations 5–205 ms.
 */
async function generate(realId: string, nowMs: number): Promise<void> {
  const perConnection = ROWS / CONNECTIONS;
  const k = `intDiv(number, ${CONNECTIONS})`;
  const c = `(number % ${CONNECTIONS})`;
  const received = `(${nowMs - SPAN_MS} + intDiv(${k} * ${SPAN_MS}, ${perConnection}) + ${c})`;
  const op = `(${k} % 5 + 1)`;
  const status = `multiIf(${k} % 100 < 90, [200, 201, 201, 200, 200][${op}], ${k} % 100 < 94, 404, ${k} % 100 < 96, 409, ${k} % 100 < 98, 500, ${k} % 100 < 99, 503, 0)`;
  await clickhouse.command({
    query: `INSERT INTO observations (connection_id, event_id, batch_id, binding, envelope_version, event_type, method, route_template,
        payload_location, status_code, duration_ms, attempt, occurred_at_ms, received_at_ms, received_date, observed_fingerprint,
        schema_fingerprint, schema_inspected, schema_shape, redaction_policy_version, source_event_id_hash, idempotency_key_hash,
        hash_namespace, outcome_accepted, business_object_type, business_object_id_hash)
      SELECT if(${c} = 0, ${sqlLiteral(realId)}, concat(${sqlLiteral(`${FAKE_PREFIX}_`)}, toString(${c}))),
        concat('evt_ba_', toString(number)), concat('bba_', toString(${c}), '_', toString(intDiv(${k}, 50))),
        'ws|acct|wint|svc_int|ten|env|live|outbound|http-api', '0.3', 'order.read',
        ['GET', 'POST', 'POST', 'GET', 'DELETE'][${op}],
        ['/v1/orders/{orderId}', '/v1/orders', '/v1/refunds', '/v1/customers/{customerId}', '/v1/orders/{orderId}'][${op}],
        'response', ${status}, 5 + ((${k} * 7919) % 2000) / 10, 1, ${received}, ${received}, toDate(intDiv(${received}, 1000)), '', '', 1,
        '{"kind":"object","fields":{"id":{"kind":"string"},"total":{"kind":"number"}}}', '2025-01', '', '', '', 1, 'order', ''
      FROM numbers(${ROWS})`,
  });
}

async function main(): Promise<void> {
  await prepareBenchDatabases();
  const management = await openBenchManagement();
  const { deps, app } = management;
  const { pool } = deps;
  let realId: string | null = null;
  try {
    // The same workspace every run (bootstrap reuses it by name), with a fresh API key.
    const boot = await bootstrap(deps, { email: EMAIL, workspace: WORKSPACE });
    const apiKey = boot.apiKey.key;
    const existing = await pool.query<{ id: string }>(
      `SELECT id FROM connections WHERE workspace_id = $1 AND mode = 'live' AND deleted_at IS NULL ORDER BY created_at, id LIMIT 1`,
      [boot.workspace.id],
    );
    realId = existing.rows[0]?.id ?? null;
    if (realId === null) {
      const res = await app.inject({
        method: 'POST',
        url: '/v1/integrations',
        headers: { authorization: `Bearer ${apiKey}`, 'idempotency-key': `bench-analytics-${Date.now()}` },
        payload: { mode: 'live', name: 'Bench analytics', provider: 'Acme', direction: 'outbound', protocol: 'http-api' },
      });
      if (res.statusCode !== 201) throw new Error(`POST /v1/integrations answered ${res.statusCode}: ${res.body}`);
      realId = (res.json() as { integration: { connectionId: string } }).integration.connectionId;
    }
    console.log(`analytics read: ${fmt(ROWS)} observations of ${CONNECTIONS} connections over 7 days; the real connection ${realId}`);

    const present = await count(`SELECT count() AS n FROM observations WHERE ${rowsWhere(realId)}`);
    if (present === ROWS) {
      console.log(`rows already present (${fmt(present)}): not generated again`);
    } else {
      if (present > 0) {
        console.log(`${fmt(present)} rows of an earlier run present, not ${fmt(ROWS)}: deleting them first`);
        await deleteRows(realId);
      }
      const started = performance.now();
      await generate(realId, Date.now());
      const inserted = (performance.now() - started) / 1000;
      const waited = await settle(600);
      console.log(
        `generated ${fmt(await count(`SELECT count() AS n FROM observations WHERE ${rowsWhere(realId)}`))} rows in ${fmt(inserted, 1)} s; `
          + `merges settled ${fmt(waited, 1)} s later`,
      );
    }
    const parts = await clickhouse.query({
      query: `SELECT count() AS n, sum(rows) AS rows FROM system.parts WHERE database = ${sqlLiteral(BENCH_STORES.CLICKHOUSE_DATABASE)} AND table = 'observations' AND active`,
      format: 'JSONEachRow',
    });
    const [{ n: partCount, rows: tableRows }] = await parts.json<{ n: string; rows: string }>();
    console.log(`svc_bench.observations: ${fmt(Number(tableRows))} rows in ${partCount} active parts`);

    const toMs = Date.now();
    const url =
      `/v1/connections/${realId}/analytics?from=${encodeURIComponent(new Date(toMs - SPAN_MS).toISOString())}`
      + `&to=${encodeURIComponent(new Date(toMs).toISOString())}&bucket=hour`;
    const headers = { authorization: `Bearer ${apiKey}` };
    const request = async (): Promise<{ ms: number; observations: number; buckets: number }> => {
      const started = performance.now();
      const res = await app.inject({ method: 'GET', url, headers });
      const ms = performance.now() - started;
      if (res.statusCode !== 200) throw new Error(`GET analytics answered ${res.statusCode}: ${res.body}`);
      const body = res.json() as { totals: { count: number }; buckets: unknown[] };
      return { ms, observations: body.totals.count, buckets: body.buckets.length };
    };
    const first = await request();
    console.log(
      `GET ${url.replace(/\?.*/, '')}?from=<7 days ago>&to=<now>&bucket=hour: ${fmt(first.observations)} observations in ${first.buckets} buckets `
        + `(first request, not counted: ${fmt(first.ms, 1)} ms)`,
    );
    if (first.observations === 0) throw new Error('the analytics answer counts no observation: the rows are not in the range');
    const medians: number[] = [];
    const p99s: number[] = [];
    const clickhousePid = findPid('clickhouse-serv');
    for (let run = 1; run <= RUNS; run++) {
      const times = new Float64Array(REQUESTS);
      const cpuBefore = {
        at: performance.now(),
        driver: process.cpuUsage(),
        clickhouse: clickhousePid === null ? NaN : processCpuSeconds(clickhousePid),
        machine: machineCpu(),
      };
      for (let i = 0; i < REQUESTS; i++) times[i] = (await request()).ms;
      const seconds = (performance.now() - cpuBefore.at) / 1000;
      const driver = process.cpuUsage(cpuBefore.driver);
      const machine = machineCpu();
      const cpu = {
        driver: ((driver.user + driver.system) / 1e6 / seconds) * 100,
        clickhouse: clickhousePid === null ? NaN : ((processCpuSeconds(clickhousePid) - cpuBefore.clickhouse) / seconds) * 100,
        machine: ((machine.busy - cpuBefore.machine.busy) / (machine.total - cpuBefore.machine.total)) * 100,
      };
      times.sort();
      const median = percentile(times, 50);
      const p99 = percentile(times, 99);
      medians.push(median);
      p99s.push(p99);
      console.log(
        `  run ${run}: ${REQUESTS} requests, median ${fmt(median, 1)} ms, p99 ${fmt(p99, 1)} ms (min ${fmt(times[0], 1)}, max ${fmt(times[times.length - 1], 1)})`
          + `  [target <= ${TARGET_MS} ms: ${p99 <= TARGET_MS ? 'met' : 'NOT met'}]; cpu % of a core: clickhouse ${fmt(cpu.clickhouse)}, `
          + `this process ${fmt(cpu.driver)}, machine ${fmt(cpu.machine)} % busy of ${cpus().length} cores`,
      );
    }
    const spread = (values: number[]) => `${fmt(Math.min(...values), 1)}–${fmt(Math.max(...values), 1)} ms`;
    console.log(`summary: median ${spread(medians)}, p99 ${spread(p99s)} over ${RUNS} runs (target <= ${TARGET_MS} ms)`);
  } finally {
    if (realId !== null) {
      if (KEEP) console.log('--keep: the generated rows stay (the next run reuses them)');
      else await deleteRows(realId).catch((error: unknown) => console.error(`deleting the generated rows failed: ${String(error)}`));
    }
    await management.close();
    await clickhouse.close();
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
