import net, { type AddressInfo, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClickHouseClient } from '../shared/clickhouse/client.js';
import type { BootstrapResult } from '../management/admin/bootstrap.js';
import { buildApp } from '../management/app.js';
import { bootstrapWorkspace, createTestContext, type TestContext } from './helpers/context.js';
import { startEdge, testClickHouse, type Edge } from './helpers/ingest.js';
import { catalogueViolation, parseResponses, sendRaw, type RawExchange } from './helpers/rawHttp.js';

// Issue 12, defect 3: every answer of both planes, including those the HTTP layer produces
// itself, is `{error: <catalogue code>}`, and HEAD answers carry no body. Each malformed request
// goes over a raw socket, since no HTTP client would send it (docs/decisions/api-conventions.md, Foundation and
// Ingestion (issue 4), say what each plane answers).

let ctx: TestContext;
let clickhouse: ClickHouseClient;
let edge: Edge;
let owner: BootstrapResult;
let managementPort: number;
let edgePort: number;

beforeAll(async () => {
  ctx = await createTestContext();
  await ctx.app.listen({ host: '127.0.0.1', port: 0 });
  managementPort = (ctx.app.server.address() as AddressInfo).port;
  clickhouse = testClickHouse(ctx);
  edge = await startEdge(ctx, clickhouse);
  edgePort = edge.server.port;
  owner = await bootstrapWorkspace(ctx);
});
afterAll(async () => {
  await edge?.close();
  await clickhouse?.close();
  await ctx?.close();
});

const HOST = 'Host: 127.0.0.1\r\n';

/** The one answer of an exchange, checked to be a catalogue answer with `code` and `status`. */
function expectAnswer(exchange: RawExchange, status: number, code: string, head = false): void {
  expect(exchange.responses, JSON.stringify(exchange.rest.toString('latin1').slice(0, 200))).toHaveLength(1);
  const [response] = exchange.responses;
  expect(response.status).toBe(status);
  if (head) {
    expect(exchange.rest.length, `a HEAD answer carried ${JSON.stringify(exchange.rest.toString('latin1'))}`).toBe(0);
    return;
  }
  expect(catalogueViolation(response)).toBeNull();
  expect(JSON.parse(response.body.toString('utf8'))).toEqual({ error: code });
  expect(exchange.rest.length).toBe(0);
}

/** A JSON POST to `path` with the given header lines and body, framed as written. */
const post = (path: string, headers: string, body: string) =>
  `POST ${path} HTTP/1.1\r\n${HOST}Content-Type: application/json\r\n${headers}\r\n${body}`;

/** Framing both planes refuse: a non-numeric or negative length, a length beside chunking, a broken chunk size. */
const badFraming = (path: string) => [
  post(path, 'Content-Length: abc\r\n', '{}'),
  post(path, 'Content-Length: -1\r\n', '{}'),
  post(path, 'Content-Length: 2\r\nTransfer-Encoding: chunked\r\n', '2\r\n{}\r\n0\r\n\r\n'),
  post(path, 'Transfer-Encoding: chunked\r\n', 'zz\r\n{}\r\n0\r\n\r\n'),
];

const bigHeader = (method: string) => `${method} /healthz HTTP/1.1\r\n${HOST}X-Big: ${'a'.repeat(17 * 1024)}\r\n\r\n`;

describe('management plane: what the framework and Node answer themselves', () => {
  const send = (request: string, head = false) => sendRaw(managementPort, request, { head });

  it('answers a bad percent-encoding in the path with 400 invalid_request', async () => {
    expectAnswer(await send(`GET /v1/connections/%ZZ HTTP/1.1\r\n${HOST}\r\n`), 400, 'invalid_request');
    expectAnswer(await send(`GET /v1/conn%ZZections/x HTTP/1.1\r\n${HOST}\r\n`), 400, 'invalid_request');
    expectAnswer(await send(`HEAD /v1/connections/%ZZ HTTP/1.1\r\n${HOST}\r\n`, true), 400, 'invalid_request', true);
  });

  it('answers a path parameter over 100 characters as the route answers a shorter impossible id', async () => {
    const auth = `Authorization: Bearer ${owner.apiKey.key}\r\n`;
    for (const length of [50, 101, 150, 10_000]) {
      const id = 'a'.repeat(length);
      expectAnswer(await send(`GET /v1/connections/${id} HTTP/1.1\r\n${HOST}${auth}\r\n`), 404, 'connection_not_found');
      expectAnswer(await send(`GET /v1/connections/${id} HTTP/1.1\r\n${HOST}\r\n`), 401, 'unauthenticated');
      expectAnswer(await send(`HEAD /v1/connections/${id} HTTP/1.1\r\n${HOST}${auth}\r\n`, true), 404, 'connection_not_found', true);
    }
  });

  it('answers a header section over 16 KiB with 431 request_too_large, without a body on HEAD', async () => {
    expectAnswer(await send(bigHeader('GET')), 431, 'request_too_large');
    expectAnswer(await send(bigHeader('POST')), 431, 'request_too_large');
    expectAnswer(await send(bigHeader('HEAD'), true), 431, 'request_too_large', true);
  });

  it('answers malformed framing with 400 invalid_request', async () => {
    const malformed = [
      ...badFraming('/auth/login'),
      post('/auth/login', 'Content-Length: 2\r\nContent-Length: 3\r\n', '{}'),
      post('/auth/login', 'Transfer-Encoding: chunked\r\n', '2\r\n{}\r\n0\r\nX\0: y\r\n\r\n'),
      `FOO /healthz HTTP/1.1\r\n${HOST}\r\n`,
      `GET /healthz HTTP/9.9\r\n${HOST}\r\n`,
      `GET /heal\0thz HTTP/1.1\r\n${HOST}\r\n`,
      `GET /healthz HTTP/1.1\r\n${HOST}X-A: a\0b\r\n\r\n`,
      `GET /healthz HTTP/1.1\r\n${HOST}X-\0A: b\r\n\r\n`,
      `GET /healthz HTTP/1.1\r\n${HOST}X A: b\r\n\r\n`,
      'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n',
      'hello world\r\n\r\n',
    ];
    for (const request of malformed) {
      const exchange = await send(request);
      expect(exchange.closed, request).toBe(true);
      expectAnswer(exchange, 400, 'invalid_request');
    }
  });

  it('answers a malformed HEAD request without a body', async () => {
    expectAnswer(await send(`HEAD /healthz HTTP/1.1\r\n${HOST}Content-Length: abc\r\n\r\n`, true), 400, 'invalid_request', true);
    // After a complete request in the same packet: the failed one is still seen to be HEAD.
    const exchange = await sendRaw(
      managementPort,
      `GET /healthz HTTP/1.1\r\n${HOST}\r\nHEAD /healthz HTTP/1.1\r\n${HOST}Content-Length: x\r\n\r\n`,
    );
    expect(exchange.responses.map((response) => response.status)).toEqual([200]);
    // The GET's answer was read with its body; what follows is the HEAD's, without one.
    const second = parseResponses(exchange.rest, true, true);
    expect(second.responses.map((response) => response.status)).toEqual([400]);
    expect(second.rest.length).toBe(0);
    // A body that broke off after the header section: its bytes may look like a request line ("^ ").
    const chunked = `HEAD /auth/signup HTTP/1.1\r\n${HOST}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n3\r\n^ \0\r\n0\r\nX-\0: t\r\n\r\n`;
    const broken = await sendRaw(managementPort, chunked, { head: true });
    // The route may answer (404: HEAD of a POST route) before the trailer fails; neither answer has a body.
    expect(broken.responses.map((response) => response.status)).toContain(400);
    for (const response of broken.responses) expect(catalogueViolation(response, { head: true })).toBeNull();
    expect(broken.rest.toString('latin1')).toBe('');
  });

  it('answers a request cut short with 400 invalid_request', async () => {
    const exchange = await sendRaw(
      managementPort,
      `POST /auth/login HTTP/1.1\r\n${HOST}Content-Type: application/json\r\nContent-Length: 10\r\n\r\n{}`,
      { endAfterWrite: true },
    );
    expectAnswer(exchange, 400, 'invalid_request');
  });

  it('answers an HTTP/1.1 request without Host with 400 invalid_request', async () => {
    expectAnswer(await send('GET /healthz HTTP/1.1\r\n\r\n'), 400, 'invalid_request');
    expectAnswer(await send('HEAD /healthz HTTP/1.1\r\n\r\n', true), 400, 'invalid_request', true);
    // HTTP/1.0 has no Host requirement.
    expect((await send('GET /healthz HTTP/1.0\r\n\r\n')).responses[0].status).toBe(200);
  });

  it('answers an expectation it cannot meet with 417 invalid_request and 100-continue as usual', async () => {
    expectAnswer(await send(`GET /healthz HTTP/1.1\r\n${HOST}Expect: something\r\n\r\n`), 417, 'invalid_request');
    expectAnswer(await send(`HEAD /healthz HTTP/1.1\r\n${HOST}Expect: something\r\n\r\n`, true), 417, 'invalid_request', true);
    const continued = await send(
      `POST /auth/login HTTP/1.1\r\n${HOST}Content-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n{}`,
    );
    expectAnswer(continued, 400, 'invalid_request');
  });

  it('answers CONNECT (this is no proxy) with 400 invalid_request', async () => {
    expectAnswer(await send(`CONNECT example.test:443 HTTP/1.1\r\nHost: example.test:443\r\n\r\n`), 400, 'invalid_request');
  });

  it('answers a request that timed out with 408 invalid_request', async () => {
    // Node raises ERR_HTTP_REQUEST_TIMEOUT only after headersTimeout (60 s): raise it here.
    const accepted = new Promise<Socket>((resolve) => ctx.app.server.once('connection', resolve));
    const pending = sendRaw(managementPort, `GET /healthz HTTP/1.1\r\n${HOST}`);
    const socket = await accepted;
    ctx.app.server.emit('clientError', Object.assign(new Error('Request timeout'), { code: 'ERR_HTTP_REQUEST_TIMEOUT' }), socket);
    expectAnswer(await pending, 408, 'invalid_request');
  });

  it('answers a request that arrives while the plane closes with 503 service_unavailable', async () => {
    const app = await buildApp(ctx.deps);
    await app.listen({ host: '127.0.0.1', port: 0 });
    // The first request is under way (half its body sent) when closing starts, so the connection
    // stays open; the second one arrives behind it.
    const socket = net.connect((app.server.address() as AddressInfo).port, '127.0.0.1');
    const received: Buffer[] = [];
    socket.on('data', (chunk) => received.push(chunk));
    const ended = new Promise((resolve) => socket.on('close', resolve));
    await new Promise((resolve) => socket.on('connect', resolve));
    socket.write(`POST /auth/login HTTP/1.1\r\n${HOST}Content-Type: application/json\r\nContent-Length: 10\r\n\r\n{"a"`);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const closed = app.close();
    await new Promise((resolve) => setTimeout(resolve, 50));
    socket.write(`:1}   GET /healthz HTTP/1.1\r\n${HOST}\r\n`);
    await Promise.race([ended, new Promise((resolve) => setTimeout(resolve, 2000))]);
    socket.destroy();
    await closed;
    const { responses } = parseResponses(Buffer.concat(received), false, true);
    expect(responses).toHaveLength(2);
    expect(catalogueViolation(responses[0])).toBeNull();
    expect(responses[1].status).toBe(503);
    expect(JSON.parse(responses[1].body.toString())).toEqual({ error: 'service_unavailable' });
  });

  it('keeps answering ordinary requests', async () => {
    const exchange = await send(`GET /healthz HTTP/1.1\r\n${HOST}\r\n`);
    expect(exchange.responses[0].status).toBe(200);
    expectAnswer(await send(`GET /nowhere HTTP/1.1\r\n${HOST}\r\n`), 404, 'not_found');
    expectAnswer(await send(`PROPFIND /healthz HTTP/1.1\r\n${HOST}\r\n`), 404, 'not_found');
    expectAnswer(await send(`HEAD /nowhere HTTP/1.1\r\n${HOST}\r\n`, true), 404, 'not_found', true);
  });
});

describe('ingest edge: what uWebSockets.js does with malformed requests', () => {
  const send = (request: string, head = false, waitMs = 2000) => sendRaw(edgePort, request, { head, waitMs });

  it('answers a bad percent-encoding or a long path as any unknown path: 404 not_found', async () => {
    expectAnswer(await send(`GET /v1/collector/connection/%ZZ HTTP/1.1\r\n${HOST}\r\n`), 404, 'not_found');
    expectAnswer(await send(`GET /v1/collector/connectio%ZZ HTTP/1.1\r\n${HOST}\r\n`), 404, 'not_found');
    expectAnswer(await send(`GET /v1/collector/connection/${'a'.repeat(10_000)} HTTP/1.1\r\n${HOST}\r\n`), 404, 'not_found');
  });

  it('answers HEAD as GET without a body', async () => {
    const health = await send(`HEAD /healthz HTTP/1.1\r\n${HOST}\r\n`, true);
    expect(health.responses.map((response) => response.status)).toEqual([200]);
    expect(health.rest.length).toBe(0);
    expectAnswer(await send(`HEAD /nowhere HTTP/1.1\r\n${HOST}\r\n`, true), 404, 'not_found', true);
    expectAnswer(await send(`HEAD /ingest HTTP/1.1\r\n${HOST}\r\n`, true), 404, 'not_found', true);
    expectAnswer(await send(`HEAD /v1/collector/connection HTTP/1.1\r\n${HOST}\r\n`, true), 401, 'unauthenticated', true);
    expectAnswer(
      await send(`HEAD /v1/collector/connection HTTP/1.1\r\n${HOST}Content-Length: 2000000\r\n\r\n`, true),
      413,
      'request_too_large',
      true,
    );
  });

  it('closes the connection without an answer on malformed framing', async () => {
    const malformed = [
      ...badFraming('/ingest'),
      post('/ingest', 'Content-Length: 0x2\r\n', '{}'),
      post('/ingest', 'Transfer-Encoding: gzip\r\n', '{}'),
      `FOO /healthz HTTP/1.1\r\n${HOST}\r\n`,
      `PROPFIND /healthz HTTP/1.1\r\n${HOST}\r\n`,
      `get /healthz HTTP/1.1\r\n${HOST}\r\n`,
      'GET /healthz HTTP/1.1\r\nX-A: b\r\n\r\n',
    ];
    for (const request of malformed) {
      const exchange = await send(request);
      expect(exchange.closed, request).toBe(true);
      expect(exchange.responses, request).toEqual([]);
      expect(exchange.rest.length, request).toBe(0);
    }
  });

  it('leaves NUL and control bytes, HTTP/1.0 and over 50 header lines unanswered (closed by its idle timeout)', async () => {
    const unanswered = [
      `GET /heal\0thz HTTP/1.1\r\n${HOST}\r\n`,
      `GET /healthz HTTP/1.1\r\n${HOST}X-A: a\0b\r\n\r\n`,
      `GET /heal\x01thz HTTP/1.1\r\n${HOST}\r\n`,
      'hello world\r\n\r\n',
      `GET /healthz HTTP/1.0\r\n${HOST}\r\n`,
      `POST /ingest HTTP/1.1\r\n${HOST}Transfer-Encoding: chunked\r\n\r\n2;a=b\r\n{}\r\n0\r\n\r\n`,
      `GET /healthz HTTP/1.1\r\n${HOST}${Array.from({ length: 60 }, (_, index) => `X-H${index}: v\r\n`).join('')}\r\n`,
    ];
    const exchanges = await Promise.all(unanswered.map((request) => send(request, false, 500)));
    for (const exchange of exchanges) {
      expect(exchange.responses).toEqual([]);
      expect(exchange.rest.length).toBe(0);
    }
  });

  it('takes a large header section in one read and closes on one over 4 KiB split across reads', async () => {
    expect((await send(bigHeader('GET'))).responses.map((response) => response.status)).toEqual([200]);
    const huge = await send(`GET /healthz HTTP/1.1\r\n${HOST}X-Big: ${'a'.repeat(200 * 1024)}\r\n\r\n`);
    expect(huge.closed).toBe(true);
    expect(huge.responses).toEqual([]);
    // Two writes with a pause between them arrive as two reads.
    const split = await sendRaw(edgePort, [`GET /healthz HTTP/1.1\r\n${HOST}X-Big: ${'a'.repeat(3000)}`, `${'a'.repeat(2000)}\r\n\r\n`]);
    expect(split.closed).toBe(true);
    expect(split.responses).toEqual([]);
    expect(split.rest.length).toBe(0);
  });
});
