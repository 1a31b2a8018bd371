// Setup for the collector library's tests: the compiled edge process on a fixed port (so it can
// be killed and restarted), and a recording HTTP proxy that keeps every byte a client sends.

import { createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import fc from 'fast-check';
import { expect } from 'vitest';
import { portLogDir } from './logDirs.js';
import { spawnProcess, type SpawnedProcess } from './processes.js';

/** Limits high enough that a long test run never meets a window or the Sandbox allowance. */
export const UNLIMITED_EDGE_ENV: Record<string, string> = {
  SANDBOX_ACCOUNT_ENVELOPES_PER_MIN: '100000000',
  SANDBOX_ACCOUNT_REQUESTS_PER_MIN: '100000000',
  SANDBOX_MONTHLY_ALLOWANCE: '100000000',
  INGEST_INTEGRATION_REQUESTS_PER_MIN: '100000000',
  INGEST_INTEGRATION_OBSERVATIONS_PER_MIN: '100000000',
  INGEST_WORKSPACE_OBSERVATIONS_PER_MIN: '100000000',
};

export type EdgeProcess = SpawnedProcess;

/**
 * The compiled edge (dist/ingest/main.js, `npm run build` first) on `port`, on the test stores,
 * healthy when this resolves. Its clock is the real one (ENABLE_TEST_CLOCK=0), so that other test
 * files' moves of the shared test clock cannot make a collector's signatures stale.
 */
export function spawnEdgeProcess(port: number, env: Record<string, string> = {}): Promise<EdgeProcess> {
  // One log folder per edge port (INGEST_WAL_DIR: one edge per folder); a restarted edge on the
  // same port finds what its predecessor left.
  return spawnProcess(
    'dist/ingest/main.js',
    'INGEST_PORT',
    { ENABLE_TEST_CLOCK: '0', INGEST_WORKER_THREADS: '0', INGEST_WAL_DIR: portLogDir(port), INGEST_SHIP_INTERVAL_MS: '50', ...env },
    port,
  );
}

export interface RecordedRequest {
  /** Date.now() when the request's head arrived. */
  at: number;
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** Every byte of the request as it arrived on the socket (request line, headers, body). */
  raw: Buffer;
  body: Buffer;
  /** The upstream's answer (status 0 when the proxy had none to give). */
  status: number;
  responseHeaders: IncomingHttpHeaders;
  responseBody: string;
  /** Date.now() when the answer was complete. */
  answeredAt: number;
}

export interface RecordingProxy {
  url: string;
  /** Where requests go; may be changed while the proxy runs. */
  target: string;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

/**
 * An HTTP proxy on loopback in front of `target`: it forwards each request unchanged and records
 * it (with the raw bytes of its socket) and the answer. Without an upstream answer it drops the
 * client's connection, as a network failure would.
 */
export async function startRecordingProxy(target: string): Promise<RecordingProxy> {
  const requests: RecordedRequest[] = [];
  const rawBySocket = new WeakMap<Socket, Buffer[]>();
  const proxy: RecordingProxy = { url: '', target, requests, close: async () => undefined };
  const server: Server = createServer((req, res) => {
    const at = Date.now();
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const socketChunks = rawBySocket.get(req.socket) ?? [];
      const raw = Buffer.concat(socketChunks);
      socketChunks.length = 0;
      const record: RecordedRequest = {
        at,
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        raw,
        body,
        status: 0,
        responseHeaders: {},
        responseBody: '',
        answeredAt: 0,
      };
      requests.push(record);
      const headers = { ...req.headers };
      delete headers.host;
      delete headers.connection;
      const upstream = request(new URL(req.url ?? '/', proxy.target), { method: req.method, headers }, (answer) => {
        const answerChunks: Buffer[] = [];
        answer.on('data', (chunk: Buffer) => answerChunks.push(chunk));
        answer.on('end', () => {
          const text = Buffer.concat(answerChunks);
          record.status = answer.statusCode ?? 0;
          record.responseHeaders = answer.headers;
          record.responseBody = text.toString('utf8');
          record.answeredAt = Date.now();
          const out = { ...answer.headers };
          delete out.connection;
          delete out['transfer-encoding'];
          out['content-length'] = String(text.length);
          res.writeHead(record.status, out);
          res.end(text);
        });
      });
      upstream.on('error', () => {
        record.answeredAt = Date.now();
        req.socket.destroy();
      });
      upstream.end(body);
    });
  });
  server.on('connection', (socket: Socket) => {
    const chunks: Buffer[] = [];
    rawBySocket.set(socket, chunks);
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  proxy.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  proxy.close = () =>
    new Promise<void>((done) => {
      server.closeAllConnections();
      server.close(() => done());
    });
  return proxy;
}

/** A TCP server that accepts connections and never answers (a hung edge). */
export async function startSilentServer(): Promise<{ url: string; close(): Promise<void> }> {
  const { createServer: createTcpServer } = await import('node:net');
  const sockets = new Set<Socket>();
  const server = createTcpServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((done) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => done());
      }),
  };
}

// Values of generated bodies carry markers that no field name, kind or fixed envelope text can
// contain: `§` in strings, numbers with seven or more digits before `.25`.
export const MARK = '§';
const fieldName = fc.string({ unit: fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz_-ABC0123456789'.split('')), maxLength: 10 });
export const markedValues = fc.letrec<{ value: unknown; leaf: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', depthIdentifier: 'body' },
    tie('leaf'),
    fc.array(tie('value'), { maxLength: 6, depthIdentifier: 'body' }),
    fc.dictionary(fieldName, tie('value'), { maxKeys: 6, depthIdentifier: 'body' }),
  ),
  leaf: fc.oneof(
    fc.string({ maxLength: 12 }).map((s) => MARK + s),
    fc.integer({ min: 1_000_000, max: 2_000_000_000 }).map((n) => n + 0.25),
    fc.integer({ min: 1_000_000, max: 2_000_000_000 }).map((n) => -(n + 0.25)),
    fc.boolean(),
    fc.constant(null),
  ),
})).value;

/** Every leaf value (string, number, boolean) of a body, walked structurally. */
export function leavesOf(value: unknown, out: unknown[] = []): unknown[] {
  if (Array.isArray(value)) for (const item of value) leavesOf(item, out);
  else if (value !== null && typeof value === 'object') for (const item of Object.values(value)) leavesOf(item, out);
  else out.push(value);
  return out;
}

/** A schemaShape holds kinds and field names, and nothing else. */
export function assertOnlyStructure(shape: unknown): void {
  expect(typeof shape).toBe('object');
  const node = shape as Record<string, unknown>;
  for (const key of Object.keys(node)) expect(['kind', 'fields', 'items']).toContain(key);
  expect(['object', 'array', 'string', 'number', 'integer', 'boolean', 'null']).toContain(node.kind);
  if (node.fields !== undefined) for (const child of Object.values(node.fields as object)) assertOnlyStructure(child);
  if (node.items !== undefined) assertOnlyStructure(node.items);
}

/** No body value in an envelope's text (markers make a coincidental match impossible). */
export function assertNoValues(text: string, body: unknown): void {
  expect(text).not.toContain(MARK);
  expect(text.toLowerCase()).not.toContain('\\u00a7');
  for (const leaf of leavesOf(body)) {
    if (typeof leaf === 'number') expect(text).not.toContain(String(Math.abs(leaf)));
    if (typeof leaf === 'string') expect(text).not.toContain(leaf);
  }
}
