import type { SchemaShape } from '../../shared/analysis/types.js';
import { type Collector, envelope } from './ingest.js';

// An orders API and what its vendor now sends instead: the drift the repair journeys start from
// (test/repairJourney.test.ts, test/iwRepairs.test.ts). The envelope helper's default operation,
// `GET /v1/orders/{orderId}` → 200, is the one declared here.

const ORDER = {
  type: 'object',
  required: ['id', 'total', 'status'],
  properties: { id: { type: 'string' }, total: { type: 'number' }, status: { type: 'string' } },
  additionalProperties: false,
};

export const ORDERS_DOCUMENT = {
  openapi: '3.0.3',
  info: { title: 'Orders', version: '1.0.0' },
  paths: {
    '/v1/orders/{orderId}': {
      get: {
        parameters: [{ name: 'orderId', in: 'path', required: true, schema: { type: 'string' } }],
        responses: {
          '200': { description: 'the order', content: { 'application/json': { schema: { $ref: '#/components/schemas/Order' } } } },
        },
      },
    },
  },
  components: { schemas: { Order: ORDER } },
};

const S: SchemaShape = { kind: 'string' };
const N: SchemaShape = { kind: 'number' };

/** A string total, a new currency with a status left out, a nested shipping object. */
export const DRIFTED_ORDERS: SchemaShape[] = [
  { kind: 'object', fields: { id: S, total: S, status: S } },
  { kind: 'object', fields: { id: S, total: N, currency: S } },
  { kind: 'object', fields: { id: S, total: N, status: S, shipping: { kind: 'object', fields: { city: S } } } },
];

/** One envelope of `collector` per drifted order, each carrying its shape (no payload stored). */
export function driftedOrderEnvelopes(collector: Pick<Collector, 'integrationKey' | 'direction' | 'protocol'>): Record<string, unknown>[] {
  return DRIFTED_ORDERS.map((shape) =>
    envelope(collector, {
      payload: { storage: 'none', schemaFingerprint: `sha256:${'cd'.repeat(32)}`, schemaShape: shape, redactionPolicyVersion: '2025-01' },
    }),
  );
}
