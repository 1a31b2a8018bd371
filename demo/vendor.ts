// The demo's "vendor": a small HTTP API on loopback that publishes its OpenAPI document, and
// can be told to drift the way real vendors do (a new field, a changed type).

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

const order = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'status', 'total'],
  properties: {
    id: { type: 'string' },
    status: { type: 'string', enum: ['open', 'paid', 'shipped'] },
    total: { type: 'number' },
    currency: { type: 'string' },
  },
};

/** What the vendor documents: GET /v1/orders/{orderId} and GET /v1/customers/{customerId}. */
export const VENDOR_OPENAPI = {
  openapi: '3.1.0',
  info: { title: 'Demo vendor', version: '2026-11-01' },
  paths: {
    '/v1/orders/{orderId}': {
      get: {
        responses: {
          '200': { description: 'the order', content: { 'application/json': { schema: { $ref: '#/components/schemas/Order' } } } },
          '404': {
            description: 'no such order',
            content: { 'application/json': { schema: { type: 'object', required: ['error'], properties: { error: { type: 'string' } } } } },
          },
        },
      },
    },
    '/v1/customers/{customerId}': {
      get: {
        responses: {
          '200': {
            description: 'the customer',
            content: {
              'application/json': {
                schema: { type: 'object', required: ['id', 'email'], properties: { id: { type: 'string' }, email: { type: 'string' } } },
              },
            },
          },
        },
      },
    },
  },
  components: { schemas: { Order: order } },
};

export interface Vendor {
  url: string;
  /** From now on: orders carry an undocumented `loyaltyPoints`, and `total` is a string. */
  drift(): void;
  close(): Promise<void>;
}

export async function startVendor(): Promise<Vendor> {
  let drifted = false;
  const server: Server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0];
    const send = (status: number, body: unknown) => {
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(JSON.stringify(body));
    };
    const orderMatch = /^\/v1\/orders\/([^/]+)$/.exec(path);
    if (path === '/openapi.json') return send(200, VENDOR_OPENAPI);
    if (orderMatch) {
      if (orderMatch[1] === 'missing') return send(404, { error: 'order not found' });
      return send(
        200,
        drifted
          ? { id: orderMatch[1], status: 'paid', total: '42.50', currency: 'EUR', loyaltyPoints: 12 }
          : { id: orderMatch[1], status: 'paid', total: 42.5, currency: 'EUR' },
      );
    }
    const customerMatch = /^\/v1\/customers\/([^/]+)$/.exec(path);
    if (customerMatch) return send(200, { id: customerMatch[1], email: 'jane@example.com' });
    // Undocumented, but live: the drift the contract does not know about.
    const refundMatch = /^\/v1\/refunds\/([^/]+)$/.exec(path);
    if (refundMatch) return send(200, { id: refundMatch[1], amount: 10 });
    send(404, { error: 'not found' });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    drift: () => {
      drifted = true;
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
