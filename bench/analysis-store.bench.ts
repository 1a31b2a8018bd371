// Analyzer issue, stored-history benchmarks (bench/README.md "Analysis"): reanalysis of 1,000,000
// stored observations of one connection with 100 and with 10,000 distinct shapes (targets ≤ 5 s
// and ≤ 30 s), through the analyzer's own code path (ClickHouse grouped read, memoised
// comparisons on 2 Piscina threads, incident aggregation). Rows are generated inside ClickHouse
// (INSERT … SELECT FROM numbers), in the bench database. Three runs each; the memo is fresh for
// every run, so each run compares every distinct shape.
//   npm run bench:build && node dist/bench/analysis-store.bench.js

import { createClient } from '@clickhouse/client';
import { ComparePool } from '../analyzer/comparePool.js';
import { contractOf } from '../analyzer/contractCache.js';
import { planReanalysis } from '../shared/analysis/reanalysisPlan.js';
import type { AnalysedOperation } from '../shared/analysis/types.js';
import { sqlLiteral } from '../shared/clickhouse/escape.js';
import { BENCH_STORES, fmt, prepareBenchDatabases } from './ingest-common.js';

const ROWS = Number(process.env.BENCH_REANALYSIS_ROWS ?? 1_000_000);
const RUNS = 3;
const DAY_MS = 24 * 3600 * 1000;

const clickhouse = createClient({ url: BENCH_STORES.CLICKHOUSE_URL, database: BENCH_STORES.CLICKHOUSE_DATABASE, request_timeout: 600_000 });

/** A 20-property object schema; shapes add one undeclared field out of `shapes` names, so every shape drifts. */
const operation: AnalysedOperation = {
  id: 'cop_bench',
  operationKey: 'GET /v1/orders/{orderId}:response:200',
  method: 'GET',
  routeTemplate: '/v1/orders/{orderId}',
  payloadLocation: 'response',
  statusSelector: '200',
  schema: {
    type: 'object',
    properties: Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`field${i}`, { type: i % 2 ? 'string' : 'integer' }])),
  },
};

/** Fills one connection with ROWS observations over the last 7 days, `shapes` distinct shapes. */
async function fill(connectionId: string, shapes: number, nowMs: number): Promise<void> {
  const declared = Array.from({ length: 20 }, (_, i) => `"field${i}":{"kind":"${i % 2 ? 'string' : 'integer'}"}`).join(',');
  const received = `(${nowMs - 7 * DAY_MS} + intDiv(number * ${7 * DAY_MS}, ${ROWS}))`;
  await clickhouse.command({
    query: `INSERT INTO observations (connection_id, event_id, batch_id, binding, envelope_version, event_type, method, route_template,
        payload_location, status_code, duration_ms, attempt, occurred_at_ms, received_at_ms, received_date, observed_fingerprint,
        schema_fingerprint, schema_inspected, schema_shape, redaction_policy_version, source_event_id_hash, idempotency_key_hash,
        hash_namespace, outcome_accepted, business_object_type, business_object_id_hash)
      SELECT ${sqlLiteral(connectionId)}, concat('evt_', toString(number)), concat('b', toString(intDiv(number, 50))),
        'ws|acct|wint|svc_int|ten|env|live|outbound|http-api', '0.3', 'order.read', 'GET', '/v1/orders/{orderId}', 'response', 200,
        number % 1000, 1, ${received}, ${received}, toDate(intDiv(${received}, 1000)), '', '', 1,
        concat('{"kind":"object","fields":{${declared},"extra', toString(number % ${shapes}), '":{"kind":"string"}}}'),
        '2025-01', '', '', '', 1, '', ''
      FROM numbers(${ROWS})`,
  });
}

async function main(): Promise<void> {
  await prepareBenchDatabases();
  const nowMs = Date.now();
  const contract = contractOf('cv_bench', [operation]);
  console.log(
    `reanalysis of ${fmt(ROWS)} stored observations of one connection (${RUNS} runs each; 2 Piscina threads, fresh memo per run)`,
  );
  for (const shapes of [100, 10_000]) {
    const connectionId = `int_bench_reanalysis_${shapes}`;
    await clickhouse.command({ query: `ALTER TABLE observations DELETE WHERE connection_id = ${sqlLiteral(connectionId)}` });
    await fill(connectionId, shapes, nowMs);
    await clickhouse.command({ query: 'OPTIMIZE TABLE observations FINAL' });
    const seconds: number[] = [];
    for (let run = 0; run < RUNS; run++) {
      const pool = new ComparePool(2, 1_000_000);
      pool.register(contract);
      const started = performance.now();
      const plan = await planReanalysis(
        clickhouse,
        connectionId,
        contract,
        { fromMs: nowMs - 30 * DAY_MS, toMs: nowMs + 1 },
        [],
        pool.compareMany,
      );
      seconds.push((performance.now() - started) / 1000);
      const [incident] = plan.opened;
      if (plan.opened.length !== 1 || incident.count !== ROWS || incident.findings.size !== shapes) {
        throw new Error(
          `unexpected plan: ${plan.opened.length} incidents, ${incident?.count} observations, ${incident?.findings.size} findings`,
        );
      }
      if (pool.comparisons !== shapes) throw new Error(`${pool.comparisons} comparisons for ${shapes} shapes`);
      await pool.close();
    }
    const sorted = [...seconds].sort((a, b) => a - b);
    console.log(
      `  ${fmt(shapes)} distinct shapes: ${seconds.map((s) => s.toFixed(2)).join(' s, ')} s (median ${sorted[1].toFixed(2)} s, spread ${(sorted[2] - sorted[0]).toFixed(2)} s)`,
    );
    await clickhouse.command({ query: `ALTER TABLE observations DELETE WHERE connection_id = ${sqlLiteral(connectionId)}` });
  }
  await clickhouse.close();
}

await main();
