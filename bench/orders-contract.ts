// The analysing benches' contract and shapes (analyzer-load.ts, ingest-cpu.ts): every bench
// connection gets an active OpenAPI contract (`GET /v1/orders/{orderId}` 200 with a 20-property
// object) through the management plane in-process, and envelopes carry one of 20 shapes by their
// position in the batch (15 conform, 5 drift), so the analyzer does real comparisons.

import { createClient } from '@clickhouse/client';
import { Registry } from 'prom-client';
import { ComparePool } from '../analyzer/comparePool.js';
import { ContractCache } from '../analyzer/contractCache.js';
import { analyzerMetrics } from '../analyzer/metrics.js';
import { runNextReanalysis } from '../analyzer/reanalysis.js';
import { systemClock } from '../shared/clock.js';
import { BENCH_STORES, ENVELOPES_PER_BATCH, benchEnvelope, openBenchManagement, type BenchCollector } from './ingest-common.js';

type Shape = { kind: string; fields?: Record<string, Shape> };
const FIELDS: [string, string][] = [
  ['id', 'string'],
  ['status', 'string'],
  ['currency', 'string'],
  ['total', 'number'],
  ['subtotal', 'number'],
  ['tax', 'number'],
  ['discount', 'number'],
  ['createdAt', 'string'],
  ['updatedAt', 'string'],
  ['customerId', 'string'],
  ['email', 'string'],
  ['itemCount', 'integer'],
  ['paid', 'boolean'],
  ['shipped', 'boolean'],
  ['note', 'string'],
  ['channel', 'string'],
  ['region', 'string'],
  ['reference', 'string'],
  ['version', 'integer'],
  ['priority', 'integer'],
];
const REQUIRED = ['id', 'status', 'total', 'createdAt'];
const OPTIONAL = FIELDS.map(([name]) => name).filter((name) => !REQUIRED.includes(name));

/** OpenAPI 3.0 with one operation, `GET /v1/orders/{orderId}`, whose 200 response is a 20-property object. */
export function ordersContract(): Record<string, unknown> {
  return {
    openapi: '3.0.3',
    info: { title: 'Bench orders', version: '1' },
    paths: {
      '/v1/orders/{orderId}': {
        get: {
          parameters: [{ name: 'orderId', in: 'path', required: true, schema: { type: 'string' } }],
          responses: {
            '200': {
              description: 'the order',
              content: { 'application/json': { schema: { $ref: '#/components/schemas/Order' } } },
            },
          },
        },
      },
    },
    components: {
      schemas: {
        Order: { type: 'object', required: REQUIRED, properties: Object.fromEntries(FIELDS.map(([name, type]) => [name, { type }])) },
      },
    },
  };
}

export const SHAPES = 20;
/** Shapes 15–19 drift: two undeclared fields, two type changes, one undeclared field on a short shape. */
export const DRIFTING = new Set([15, 16, 17, 18, 19]);

/** The 20 distinct shapes: 0–14 conform (each leaves out another optional field), 15–19 drift. */
function shapeOf(index: number): Shape {
  const fields: Record<string, Shape> = Object.fromEntries(FIELDS.map(([name, type]) => [name, { kind: type }]));
  if (index < 15) delete fields[OPTIONAL[index]];
  else if (index === 15) fields.coupon = { kind: 'string' };
  else if (index === 16) fields.loyaltyPoints = { kind: 'integer' };
  else if (index === 17) fields.total = { kind: 'string' };
  else if (index === 18) fields.paid = { kind: 'string' };
  else {
    for (const name of OPTIONAL.slice(0, 8)) delete fields[name];
    fields.trackingUrl = { kind: 'string' };
  }
  return { kind: 'object', fields };
}
export const SHAPE_LIST = Array.from({ length: SHAPES }, (_, index) => shapeOf(index));
export const DRIFTED_PER_BATCH = Array.from({ length: ENVELOPES_PER_BATCH }, (_, position) => position % SHAPES).filter((shape) =>
  DRIFTING.has(shape),
).length;

export function shapedEnvelope(integrationKey: string, eventId: string, occurredAt: string, position: number): Record<string, unknown> {
  const envelope = benchEnvelope(integrationKey, eventId, occurredAt);
  return { ...envelope, payload: { ...(envelope.payload as Record<string, unknown>), schemaShape: SHAPE_LIST[position % SHAPES] } };
}

/**
 * Registers and activates the orders contract on every collector's connection, then runs the
 * activations' reanalysis jobs (the analyzer's own code) before any envelope is sent.
 */
export async function giveContracts(collectors: BenchCollector[]): Promise<void> {
  const management = await openBenchManagement();
  const {
    app,
    deps: { pool },
  } = management;
  try {
    for (const collector of collectors) {
      const headers = { authorization: `Bearer ${collector.apiKey}` };
      const registered = await app.inject({
        method: 'POST',
        url: `/v1/integrations/${collector.connectionId}/contracts`,
        headers,
        payload: { declaredVersion: 'v1', format: 'openapi', document: ordersContract() },
      });
      if (registered.statusCode !== 201) throw new Error(`contract registration answered ${registered.statusCode}: ${registered.body}`);
      const versionId = (registered.json() as { contract: { id: string } }).contract.id;
      const activated = await app.inject({
        method: 'POST',
        url: `/v1/integrations/${collector.connectionId}/contracts/${versionId}/activate`,
        headers,
        payload: { expectedActiveContractVersionId: null, reason: 'promote' },
      });
      if (activated.statusCode !== 200) throw new Error(`contract activation answered ${activated.statusCode}: ${activated.body}`);
    }
    // The activations' reanalysis jobs, run here (the analyzer's own code) before any envelope is
    // sent: an analyzer started after the backlog would otherwise recount the backlog in its
    // reanalysis and skip its batches as already counted.
    const clickhouse = createClient({
      url: BENCH_STORES.CLICKHOUSE_URL,
      database: BENCH_STORES.CLICKHOUSE_DATABASE,
      compression: { request: false, response: false },
    });
    const compare = new ComparePool(0, 1000);
    let jobs = 0;
    try {
      const deps = {
        pool,
        clickhouse,
        clock: systemClock,
        contracts: new ContractCache(pool),
        compare,
        metrics: analyzerMetrics(new Registry()),
      };
      while (await runNextReanalysis(deps)) jobs += 1;
    } finally {
      await compare.close();
      await clickhouse.close();
    }
    console.log(`set-up: contract registered and activated on ${collectors.length} connections; ${jobs} reanalysis job(s) run`);
  } finally {
    await management.close();
  }
}
