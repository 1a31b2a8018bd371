import type { IncidentKind } from '../../shared/analysis/incidentAggregate.js';
import type { ClickHouseClient } from '@clickhouse/client';
import type { Registry } from 'prom-client';
import { Analyzer } from '../../analyzer/service.js';
import type { AnalyzerConfig } from '../../shared/config.js';
import { createMetricsRegistry } from '../../shared/metrics.js';
import type { TestContext } from './context.js';
import { shippedByAll } from './ingest.js';
import { waitFor } from './wait.js';

export interface RunningAnalyzer {
  analyzer: Analyzer;
  metrics: Registry;
  stop(): Promise<void>;
}

/** The analyzer in-process on the test stores (its Piscina worker is the compiled dist/ file). */
export async function startAnalyzer(
  ctx: TestContext,
  clickhouse: ClickHouseClient,
  options: Partial<AnalyzerConfig> & { stream?: string } = {},
): Promise<RunningAnalyzer> {
  const { stream, ...overrides } = options;
  const metrics = createMetricsRegistry('analyzer-test');
  const analyzer = new Analyzer({
    config: { ...ctx.deps.config.analyzer, workerThreads: 1, claimIdleMs: 1000, reanalysisPollMs: 50, ...overrides },
    pool: ctx.deps.pool,
    redis: ctx.deps.redis,
    clickhouse,
    clock: ctx.deps.clock,
    metrics,
    log: () => undefined,
    ...(stream ? { stream } : {}),
  });
  await analyzer.start();
  return { analyzer, metrics, stop: () => analyzer.stop() };
}

/** True once the analysis stream holds no entry that the group has not acknowledged. */
export async function streamDrained(ctx: TestContext, stream = 'analysis:jobs'): Promise<boolean> {
  // The jobs of what the running edges accepted are in the stream once shipped.
  await shippedByAll();
  const length = await ctx.deps.redis.xlen(stream);
  const pending = (await ctx.deps.redis.xpending(stream, 'analyzers')) as [number, ...unknown[]];
  return length === 0 && Number(pending[0]) === 0;
}

/** Waits until every reanalysis an activation or rollback enqueued for the connection is processed. */
export async function reanalysed(ctx: TestContext, connectionId: string): Promise<void> {
  await waitFor(
    async () => {
      const { rows } = await ctx.deps.pool.query(
        "SELECT processed_at FROM outbox WHERE topic = 'reanalysis' AND payload->>'connectionId' = $1",
        [connectionId],
      );
      return rows.length > 0 && rows.every((row) => row.processed_at !== null) ? true : undefined;
    },
    15_000,
    'the reanalysis',
  );
}

export interface IncidentRow {
  id: string;
  operation_key: string;
  kind: IncidentKind;
  status: string;
  resolution_state: string;
  summary: string;
  affected_records: string;
  observation_ids: string[];
  evidence_truncated: boolean;
}

export interface FindingRow {
  kind: string;
  path: string;
  expected: string;
  observed: string;
  forbidden: boolean | null;
  observation_count: string;
}

export async function incidentsOf(ctx: TestContext, connectionId: string): Promise<IncidentRow[]> {
  const { rows } = await ctx.deps.pool.query<IncidentRow>(
    'SELECT * FROM incidents WHERE connection_id = $1 ORDER BY operation_key, kind, created_at',
    [connectionId],
  );
  return rows;
}

export async function findingsOf(ctx: TestContext, incidentId: string): Promise<FindingRow[]> {
  const { rows } = await ctx.deps.pool.query<FindingRow>(
    'SELECT kind, path, expected, observed, forbidden, observation_count FROM incident_findings WHERE incident_id = $1 ORDER BY path, kind',
    [incidentId],
  );
  return rows;
}
