// Shared pieces of the collector benchmarks (issue 15): a realistic JSON webhook body of a chosen
// size (an order event: nested customer and shipping objects, an array of line items, metadata),
// distinct values per index and the same structure, as a vendor's webhooks are; small statistics
// and process helpers. Imports the collector nowhere: each benchmark imports it as a user does.

import type { ChildProcess } from 'node:child_process';
import { createServer as createHttpServer } from 'node:http';

/** An order webhook body with `lineCount` line items (values vary with `index`). */
export function orderEvent(index: number, lineCount: number): Record<string, unknown> {
  const n = index + 1;
  const address = (kind: string) => ({
    line1: `${100 + (n % 800)} ${kind === 'billing' ? 'Market' : 'Harbour'} Street`,
    line2: n % 3 === 0 ? `Apartment ${n % 90}` : null,
    city: ['Berlin', 'Lyon', 'Utrecht', 'Porto'][n % 4],
    postal_code: String(10_000 + ((n * 37) % 89_999)),
    state: null,
    country: ['DE', 'FR', 'NL', 'PT'][n % 4],
  });
  const lines = Array.from({ length: lineCount }, (_, line) => ({
    id: `li_${(n * 131 + line).toString(36).padStart(10, '0')}`,
    sku: `SKU-${(n * 7 + line) % 10_000}`,
    name: `Product ${line} of order ${n}`,
    quantity: 1 + ((n + line) % 4),
    unit_price: 1_999 + ((n * line) % 5_000),
    amount_total: (1 + ((n + line) % 4)) * (1_999 + ((n * line) % 5_000)),
    tax_rate: 0.19,
    discounted: (n + line) % 5 === 0,
    metadata: { gift: line === 0, warehouse: `wh-${(n + line) % 12}` },
  }));
  return {
    id: `evt_${n.toString(36).padStart(12, '0')}`,
    type: 'order.paid',
    api_version: '2024-06-20',
    created: 1_732_600_000 + n,
    livemode: true,
    data: {
      object: {
        id: `ord_${(n * 7919).toString(36).padStart(12, '0')}`,
        object: 'order',
        status: 'paid',
        currency: 'eur',
        amount_subtotal: 10_000 + (n % 50_000),
        amount_tax: 1_900 + (n % 9_500),
        amount_total: 11_900 + (n % 59_500),
        discount: n % 2 === 0 ? null : { code: `SPRING${n % 30}`, percent_off: 10 },
        customer: {
          id: `cus_${(n * 104_729).toString(36).padStart(12, '0')}`,
          email: `customer${n}@example.test`,
          name: `Customer ${n}`,
          phone: `+49 30 ${String(1_000_000 + (n % 8_999_999))}`,
          address: address('billing'),
        },
        shipping: {
          method: 'standard',
          carrier: 'DHL',
          tracking_number: `00340434${String(n).padStart(10, '0')}`,
          address: address('shipping'),
        },
        lines,
        payment: { method: 'card', brand: 'visa', last4: String(1_000 + (n % 9_000)), captured: true, fee: 0.35 + (n % 100) / 100 },
        metadata: { source: 'web', campaign: `c-${n % 17}`, cart_id: `cart_${n}` },
      },
    },
  };
}

/** Line items that bring `orderEvent`'s JSON text closest to `targetBytes`. */
export function linesForBytes(targetBytes: number): number {
  let best = 1;
  for (let lines = 1; lines <= 64; lines += 1) {
    const bytes = Buffer.byteLength(JSON.stringify(orderEvent(0, lines)));
    if (Math.abs(bytes - targetBytes) < Math.abs(Buffer.byteLength(JSON.stringify(orderEvent(0, best))) - targetBytes)) best = lines;
    if (bytes > targetBytes) break;
  }
  return best;
}

/** `count` distinct bodies of about `targetBytes` each, as JSON text. */
export function bodyTexts(count: number, targetBytes: number): string[] {
  const lines = linesForBytes(targetBytes);
  return Array.from({ length: count }, (_, index) => JSON.stringify(orderEvent(index, lines)));
}

export const mean = (values: readonly number[]): number => values.reduce((sum, value) => sum + value, 0) / values.length;

/** The value at percentile `p` of `sorted` (ascending), nearest rank. */
export function nearestRank(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

/** The middle value (the mean of the two middle ones for an even count). */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/** (max - min) / mean in %. */
export const spreadPercent = (values: readonly number[]): number => ((Math.max(...values) - Math.min(...values)) / mean(values)) * 100;

/** Sends `message` over IPC and resolves with the child's first answer of type `type`. */
export function ask<T>(
  child: ChildProcess,
  message: { type: string } & Record<string, unknown>,
  type: string,
  timeoutMs = 30_000,
): Promise<T> {
  return new Promise<T>((resolveAnswer, reject) => {
    const timer = setTimeout(() => {
      child.off('message', onMessage);
      reject(new Error(`no ${type} answer within ${timeoutMs} ms`));
    }, timeoutMs);
    const onMessage = (answer: unknown) => {
      if ((answer as { type?: unknown })?.type !== type) return;
      clearTimeout(timer);
      child.off('message', onMessage);
      resolveAnswer(answer as T);
    };
    child.on('message', onMessage);
    child.send(message);
  });
}

/**
 * Runs a sink edge in this process: every request is read whole and answered 202 `{}` at once
 * (GET /v1/collector/connection included). Prints `{"ready":true,"port":N}`; stops when the
 * parent's IPC channel closes or on SIGTERM (printing its request count on stderr).
 */
export function runSink(): void {
  let requests = 0;
  const server = createHttpServer((request, response) => {
    request.resume();
    request.on('end', () => {
      requests += 1;
      response.writeHead(request.method === 'GET' ? 200 : 202, { 'content-type': 'application/json', 'content-length': '2' });
      response.end('{}');
    });
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1', () => {
    process.stdout.write(`${JSON.stringify({ ready: true, port: (server.address() as { port: number }).port })}\n`);
  });
  process.on('disconnect', () => process.exit(0));
  process.on('SIGTERM', () => {
    process.stderr.write(`sink: ${requests} requests answered\n`);
    process.exit(0);
  });
}
