import { spawn, type ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClickHouseClient } from '@clickhouse/client';
import { RedisKeys } from '../shared/redis.js';
import { bootstrapWorkspace, createTestContext, type TestContext } from './helpers/context.js';
import { activateOk, openApiRegistration, registerDraft } from './helpers/contracts.js';
import { createCollector, envelope, sendEnvelopes, startEdge, testClickHouse, type Collector, type Edge } from './helpers/ingest.js';
import { findingsOf, incidentsOf, streamDrained } from './helpers/analyzer.js';
import { waitFor } from './helpers/wait.js';
import { freePort } from './helpers/ports.js';

// The compiled analyzer process (dist/analyzer/main.js) on a backlog of the default stream:
// killed with SIGKILL midway and restarted, or run twice at once, it must end with exactly the
// incidents, counts and findings the backlog's known shapes imply (those of an uninterrupted
// run, computed here from what was sent).

const BATCH = 50;

function contract(): Record<string, unknown> {
  return {
    openapi: '3.0.3',
    info: { title: 'Orders', version: '1' },
    paths: {
      '/v1/orders/{orderId}': {
        get: {
          responses: {
            '200': {
              description: 'ok',
              content: {
                'application/json': {
                  schema: {
                    type: 'object',
                    additionalProperties: false,
                    required: ['id', 'total'],
                    properties: { id: { type: 'string' }, total: { type: 'number' } },
                  },
                },
              },
            },
          },
        },
      },
    },
  };
}

const SHAPES = {
  clean: { kind: 'object', fields: { id: { kind: 'string' }, total: { kind: 'number' } } },
  extra: { kind: 'object', fields: { id: { kind: 'string' }, total: { kind: 'number' }, extra: { kind: 'boolean' } } },
  total: { kind: 'object', fields: { id: { kind: 'string' }, total: { kind: 'string' } } },
};
const GET_ORDER = { method: 'GET', routeTemplate: '/v1/orders/{orderId}', payloadLocation: 'response', statusCode: 200 };

/** `n` envelopes: 40 % clean, 30 % with an undeclared field, 20 % with a mistyped total, 10 % of an unknown route. */
function backlog(
  collector: Collector,
  n: number,
): { envelopes: Record<string, unknown>[]; expected: ReturnType<typeof expectedIncidents> } {
  const counts = { clean: 0, extra: 0, total: 0, unknown: 0 };
  const envelopes = Array.from({ length: n }, (_, i) => {
    const base = envelope(collector);
    const slot = i % 10;
    const kind = slot < 4 ? 'clean' : slot < 7 ? 'extra' : slot < 9 ? 'total' : 'unknown';
    counts[kind]++;
    const shape = kind === 'unknown' ? SHAPES.clean : SHAPES[kind];
    return {
      ...base,
      payload: { ...(base.payload as object), schemaShape: shape },
      transport: { ...(base.transport as object), ...GET_ORDER, ...(kind === 'unknown' ? { routeTemplate: '/v1/refunds' } : {}) },
    };
  });
  return { envelopes, expected: expectedIncidents(counts) };
}

function expectedIncidents(counts: { extra: number; total: number; unknown: number }) {
  return [
    {
      kind: 'schema-drift',
      operationKey: 'GET /v1/orders/{orderId}:response:200',
      status: 'open',
      affectedRecords: counts.extra + counts.total,
      findings: [
        { kind: 'undeclared_field', path: '/extra', count: counts.extra },
        { kind: 'type_mismatch', path: '/total', count: counts.total },
      ],
    },
    {
      kind: 'unknown-operation',
      operationKey: 'GET /v1/refunds:response:200',
      status: 'open',
      affectedRecords: counts.unknown,
      findings: [{ kind: 'unknown_operation', path: '', count: counts.unknown }],
    },
  ];
}

describe('analyzer process: crash recovery and several consumers', () => {
  let ctx: TestContext;
  let clickhouse: ClickHouseClient;
  let edge: Edge;
  let apiKey: string;
  const children = new Set<ChildProcess>();

  async function spawnAnalyzer(env: Record<string, string> = {}): Promise<{ child: ChildProcess; port: number }> {
    const port = await freePort();
    const child = spawn(process.execPath, ['dist/analyzer/main.js'], {
      env: { ...process.env, ANALYZER_PORT: String(port), ANALYZER_CLAIM_IDLE_MS: '1000', ANALYZER_REANALYSIS_POLL_MS: '100', ...env },
      stdio: 'ignore',
    });
    children.add(child);
    child.on('exit', () => children.delete(child));
    await waitFor(
      async () =>
        (await fetch(`http://127.0.0.1:${port}/healthz`).then(
          (r) => r.ok,
          () => false,
        )) || undefined,
      15_000,
      'the analyzer to listen',
    );
    return { child, port };
  }

  const stop = (child: ChildProcess, signal: NodeJS.Signals) =>
    new Promise<void>((done) => {
      if (child.exitCode !== null) return done();
      child.once('exit', () => done());
      child.kill(signal);
    });

  beforeAll(async () => {
    ctx = await createTestContext();
    clickhouse = testClickHouse(ctx);
    // Only this file's jobs on the default stream: the edge recreates it with the group.
    await ctx.deps.redis.del(RedisKeys.analysisJobs);
    edge = await startEdge(ctx, clickhouse, {
      limits: {
        sandboxAccountEnvelopesPerMin: 10_000_000,
        sandboxAccountRequestsPerMin: 10_000_000,
        sandboxMonthlyAllowance: 10_000_000,
        integrationRequestsPerMin: 10_000_000,
        integrationObservationsPerMin: 10_000_000,
        workspaceObservationsPerMin: 10_000_000,
      },
    });
    apiKey = (await bootstrapWorkspace(ctx)).apiKey.key;
  });

  afterAll(async () => {
    await Promise.all([...children].map((child) => stop(child, 'SIGKILL')));
    await edge?.close();
    await clickhouse?.close();
    await ctx?.close();
  });

  async function monitoredCollector(): Promise<Collector> {
    const collector = await createCollector(ctx, apiKey, { mode: 'sandbox' });
    const draft = await registerDraft(ctx, apiKey, collector.connectionId, openApiRegistration('v1', contract()));
    await activateOk(ctx, apiKey, collector.connectionId, draft.contract.id, { expectedActiveContractVersionId: null, reason: 'promote' });
    return collector;
  }

  async function ingest(collector: Collector, envelopes: Record<string, unknown>[]): Promise<void> {
    const batches: Record<string, unknown>[][] = [];
    for (let i = 0; i < envelopes.length; i += BATCH) batches.push(envelopes.slice(i, i + BATCH));
    let next = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next < batches.length) {
          const batch = batches[next++];
          const answer = await sendEnvelopes(edge, collector, batch);
          if (answer.status !== 202 || answer.body?.persisted !== batch.length)
            throw new Error(`ingest answered ${answer.status}: ${answer.text}`);
        }
      }),
    );
    // The jobs are in the stream once the edge's log has shipped their rows.
    expect(await edge.shipped()).toBe(true);
  }

  async function outcome(connectionId: string) {
    return Promise.all(
      (await incidentsOf(ctx, connectionId)).map(async (incident) => ({
        kind: incident.kind,
        operationKey: incident.operation_key,
        status: incident.status,
        affectedRecords: Number(incident.affected_records),
        findings: (await findingsOf(ctx, incident.id)).map((f) => ({ kind: f.kind, path: f.path, count: Number(f.observation_count) })),
      })),
    );
  }

  async function drained(): Promise<void> {
    await waitFor(async () => ((await streamDrained(ctx)) ? true : undefined), 120_000, 'the analysis backlog to drain');
  }

  it('killed with SIGKILL in the middle of a 100,000-envelope backlog and restarted, ends as an uninterrupted run', async () => {
    const collector = await monitoredCollector();
    const { envelopes, expected } = backlog(collector, 100_000);
    await ingest(collector, envelopes);
    expect(await ctx.deps.redis.xlen(RedisKeys.analysisJobs)).toBe(100_000 / BATCH);

    // Small rounds so that the kill lands while most of the backlog is still waiting.
    const first = await spawnAnalyzer({ ANALYZER_BATCH_JOBS: '20' });
    // A round commits its incidents and then acknowledges and deletes its jobs: wait for both,
    // or the kill can land between them and leave the whole stream (CI failed on it once).
    await waitFor(
      async () => ((await incidentsOf(ctx, collector.connectionId)).length > 0 ? true : undefined),
      30_000,
      'the first incident',
    );
    await waitFor(
      async () => ((await ctx.deps.redis.xlen(RedisKeys.analysisJobs)) < 100_000 / BATCH ? true : undefined),
      30_000,
      'the first round to be acknowledged',
    );
    await stop(first.child, 'SIGKILL');
    const left = await ctx.deps.redis.xlen(RedisKeys.analysisJobs);
    expect(left).toBeGreaterThan(0);

    const second = await spawnAnalyzer();
    await drained();
    expect(await outcome(collector.connectionId)).toEqual(expected);
    await stop(second.child, 'SIGTERM');
  }, 240_000);

  it('two analyzer processes at once give the result of one', async () => {
    const collector = await monitoredCollector();
    const { envelopes, expected } = backlog(collector, 20_000);
    await ingest(collector, envelopes);
    const analyzers = await Promise.all([spawnAnalyzer({ ANALYZER_BATCH_JOBS: '10' }), spawnAnalyzer({ ANALYZER_BATCH_JOBS: '10' })]);
    await drained();
    expect(await outcome(collector.connectionId)).toEqual(expected);
    // Both took part in the work.
    for (const { port } of analyzers) {
      const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
      const analysed = /analyzer_jobs_total\{outcome="analysed"[^}]*\} (\d+)/.exec(metrics);
      expect(Number(analysed?.[1] ?? 0)).toBeGreaterThan(0);
    }
  }, 240_000);
});
