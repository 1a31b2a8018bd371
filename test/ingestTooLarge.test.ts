import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClickHouseClient } from '../shared/clickhouse/client.js';
import { bootstrapWorkspace, createTestContext, type TestContext } from './helpers/context.js';
import {
  countObservations,
  createCollector,
  dedupEntry,
  edgeSeconds,
  envelope,
  sendEnvelopes,
  signatureHeader,
  startEdge,
  startFastifyEdge,
  testClickHouse,
  type Collector,
  type Edge,
  type EdgeOverrides,
} from './helpers/ingest.js';
import { parseResponses, type RawResponse } from './helpers/rawHttp.js';

// Issue 25, item 2: a client that writes its whole body before it reads (Node's fetch, the
// collector) gets 413 request_too_large for a body over 1 MiB, not EPIPE, on both adapters, with
// either framing; and the edge's lingering read of the refused body is bounded in time and size.

const MiB = 1024 * 1024;

let ctx: TestContext;
let clickhouse: ClickHouseClient;

beforeAll(async () => {
  ctx = await createTestContext();
  clickhouse = testClickHouse(ctx);
});
afterAll(async () => {
  await clickhouse.close();
  await ctx.close();
});

/** A signed batch of one real envelope, padded with spaces to `bytes` (valid JSON, only too long). */
function paddedBatch(collector: Collector, bytes: number): { body: Buffer; eventId: string } {
  const item = envelope(collector);
  const json = JSON.stringify({ envelopes: [item] });
  const body = Buffer.alloc(bytes, 0x20);
  body.write(json, 0, 'utf8');
  return { body, eventId: String(item.eventId) };
}

/** The body as a stream: fetch sends it chunked, without a length. */
function streamed(body: Buffer): ReadableStream<Uint8Array> {
  let offset = 0;
  return new ReadableStream({
    pull(controller) {
      if (offset >= body.length) return controller.close();
      controller.enqueue(body.subarray(offset, offset + 64 * 1024));
      offset += 64 * 1024;
    },
  });
}

async function postWithFetch(edge: Edge, collector: Collector, body: Buffer, framing: 'content-length' | 'chunked') {
  const headers = {
    'content-type': 'application/json',
    'x-service-connection': collector.connectionKey,
    authorization: `Bearer ${collector.ingestToken}`,
    'x-service-signature': signatureHeader(collector.ingestToken, body, await edgeSeconds(edge)),
  };
  // Node's fetch sends a stream only with `duplex: 'half'`, which its RequestInit type lacks.
  const init: RequestInit & { duplex?: 'half' } =
    framing === 'chunked'
      ? { method: 'POST', headers, body: streamed(body), duplex: 'half' }
      : { method: 'POST', headers, body: Uint8Array.from(body) };
  const res = await fetch(`${edge.url}/ingest`, init);
  return { status: res.status, body: (await res.json()) as unknown };
}

const portOf = (edge: Edge) => Number(new URL(edge.url).port);

const adapters: [string, (overrides?: EdgeOverrides) => Promise<Edge>][] = [
  ['uWebSockets.js', (overrides) => startEdge(ctx, clickhouse, overrides)],
  ['Fastify', (overrides) => startFastifyEdge(ctx, clickhouse, overrides)],
];

describe.each(adapters)('%s edge: 413 request_too_large reaches fetch', (_name, start) => {
  let edge: Edge;
  beforeAll(async () => {
    edge = await start();
  });
  afterAll(async () => {
    await edge.close();
  });

  it.each([
    ['content-length', MiB + 1],
    ['content-length', 20 * MiB],
    ['chunked', MiB + 1],
    ['chunked', 20 * MiB],
  ] as const)('%s body of %i bytes: 413, nothing persisted, the next request of the client works', async (framing, bytes) => {
    const boot = await bootstrapWorkspace(ctx);
    const collector = await createCollector(ctx, boot.apiKey.key);
    const { body, eventId } = paddedBatch(collector, bytes);

    const refused = await postWithFetch(edge, collector, body, framing);
    expect(refused).toEqual({ status: 413, body: { error: 'request_too_large' } });

    expect(await countObservations(clickhouse, collector.connectionId)).toBe(0);
    expect(await dedupEntry(ctx.deps.redis, collector, eventId, edge.config.ingest.dedupWindowSeconds)).toBeNull();
    // The same envelope in a batch that fits is new to the edge: the refused one left no trace.
    const item = JSON.parse(body.toString('utf8').trimEnd()).envelopes[0];
    const accepted = await sendEnvelopes(edge, collector, [item]);
    expect(accepted.status).toBe(202);
    expect(accepted.body).toMatchObject({ accepted: 1, persisted: 1 });
    expect(await countObservations(clickhouse, collector.connectionId)).toBe(1);
  });
});

/**
 * The client of issue 25: writes the whole request (head and body) before it reads anything, then
 * reads until the server closes. Resolves with the responses, or the socket error that ended it.
 */
function writeAllThenRead(port: number, head: string, body: Buffer): Promise<{ responses: RawResponse[] } | { error: string }> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    const received: Buffer[] = [];
    socket.pause();
    socket.on('data', (data) => received.push(data));
    socket.on('error', (error: NodeJS.ErrnoException) => resolve({ error: error.code ?? error.message }));
    socket.on('close', (hadError) => {
      if (!hadError) resolve(parseResponses(Buffer.concat(received), false, true));
    });
    socket.write(head);
    socket.write(body, () => socket.resume());
  });
}

/** `body` in 64 KiB chunks of the chunked transfer coding, last chunk included. */
function chunkedCoding(body: Buffer): Buffer {
  const parts: Buffer[] = [];
  for (let offset = 0; offset < body.length; offset += 64 * 1024) {
    const piece = body.subarray(offset, offset + 64 * 1024);
    parts.push(Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n'));
  }
  parts.push(Buffer.from('0\r\n\r\n'));
  return Buffer.concat(parts);
}

describe.each(adapters)('%s edge: 413 reaches a client that writes its whole body before it reads', (_name, start) => {
  let edge: Edge;
  beforeAll(async () => {
    edge = await start();
  });
  afterAll(async () => {
    await edge.close();
  });

  it.each([
    ['content-length', MiB + 1],
    ['content-length', 20 * MiB],
    ['chunked', MiB + 1],
    ['chunked', 20 * MiB],
  ] as const)('%s body of %i bytes', async (framing, bytes) => {
    const body = Buffer.alloc(bytes, 0x20);
    const framingHeader = framing === 'chunked' ? 'Transfer-Encoding: chunked' : `Content-Length: ${bytes}`;
    const head = `POST /ingest HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n${framingHeader}\r\n\r\n`;
    const exchange = await writeAllThenRead(portOf(edge), head, framing === 'chunked' ? chunkedCoding(body) : body);
    expect(exchange).not.toHaveProperty('error');
    const { responses } = exchange as { responses: RawResponse[] };
    expect(responses.map((response) => response.status)).toEqual([413]);
    expect(JSON.parse(responses[0].body.toString('utf8'))).toEqual({ error: 'request_too_large' });
  });
});

interface Trickle {
  /** Body bytes written at once after the head. */
  headBytes: number;
  /** Then one piece of this many bytes every `everyMs`, whenever the socket has taken the last. */
  chunk: number;
  everyMs: number;
  /** Stop writing here (the body never ends unless a declared length is reached). */
  upTo?: number;
  /** A Content-Length to declare; chunked (never ended) without one. */
  declaredLength?: number;
}

/**
 * A raw POST /ingest whose body arrives as `trickle` says, until the server closes. Resolves with
 * what the server answered, how many body bytes were written in all, and how many had been
 * written when the answer's first bytes arrived.
 */
function tricklingBody(
  port: number,
  trickle: Trickle,
): Promise<{ responses: RawResponse[]; written: number; writtenAtAnswer: number | null }> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    const received: Buffer[] = [];
    const limit = Math.min(trickle.upTo ?? Infinity, trickle.declaredLength ?? Infinity);
    let written = 0;
    let writtenAtAnswer: number | null = null;
    let timer: NodeJS.Timeout | undefined;
    const piece = (bytes: number) => {
      const data = Buffer.alloc(bytes, 0x20);
      written += bytes;
      return trickle.declaredLength === undefined
        ? Buffer.concat([Buffer.from(`${bytes.toString(16)}\r\n`), data, Buffer.from('\r\n')])
        : data;
    };
    socket.on('data', (data) => {
      writtenAtAnswer ??= written;
      received.push(data);
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearInterval(timer);
      resolve({ responses: parseResponses(Buffer.concat(received), false, true).responses, written, writtenAtAnswer });
    });
    socket.on('connect', () => {
      const framing = trickle.declaredLength === undefined ? 'Transfer-Encoding: chunked' : `Content-Length: ${trickle.declaredLength}`;
      socket.write(`POST /ingest HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n${framing}\r\n\r\n`);
      while (written < Math.min(trickle.headBytes, limit)) socket.write(piece(Math.min(64 * 1024, limit - written)));
      timer = setInterval(() => {
        if (socket.destroyed || socket.writableLength > 0 || written >= limit) return;
        socket.write(piece(Math.min(trickle.chunk, limit - written)));
      }, trickle.everyMs);
    });
  });
}

describe.each(adapters)('%s edge: the lingering read of a refused body is bounded', (_name, start) => {
  it('answers a body that never ends 413 and closes once INGEST_LINGER_MS has passed', async () => {
    const edge = await start({ ingest: { lingerMs: 300 } });
    try {
      // A slow client past the limit: a few bytes every 20 ms, forever.
      const { responses } = await tricklingBody(portOf(edge), { headBytes: 2 * MiB, chunk: 16, everyMs: 20 });
      expect(responses.map((response) => response.status)).toEqual([413]);
      expect(JSON.parse(responses[0].body.toString('utf8'))).toEqual({ error: 'request_too_large' });
      expect(responses[0].headers.connection).toBe('close');
    } finally {
      await edge.close();
    }
  });

  it('stops reading a refused body at INGEST_LINGER_MAX_BYTES and closes', async () => {
    const edge = await start({ ingest: { lingerMaxBytes: 2 * MiB, lingerMs: 8_000 } });
    try {
      // As fast as the socket takes it, up to 256 MiB: the edge closes long before.
      const { written } = await tricklingBody(portOf(edge), { headBytes: 4 * MiB, chunk: MiB, everyMs: 1, upTo: 256 * MiB });
      expect(written).toBeLessThan(256 * MiB);
    } finally {
      await edge.close();
    }
  });

  it('answers a declared length past INGEST_LINGER_MAX_BYTES before the body is sent, and closes', async () => {
    const edge = await start({ ingest: { lingerMaxBytes: 2 * MiB } });
    try {
      const declaredLength = 2 * MiB + 1;
      const { responses, writtenAtAnswer } = await tricklingBody(portOf(edge), {
        headBytes: 0,
        chunk: 16 * 1024,
        everyMs: 20,
        declaredLength,
      });
      expect(responses.map((response) => response.status)).toEqual([413]);
      expect(JSON.parse(responses[0].body.toString('utf8'))).toEqual({ error: 'request_too_large' });
      expect(writtenAtAnswer).toBeLessThan(declaredLength);
    } finally {
      await edge.close();
    }
  });

  it('reads a declared length within INGEST_LINGER_MAX_BYTES to its end before answering', async () => {
    const edge = await start({ ingest: { lingerMaxBytes: 4 * MiB } });
    try {
      const declaredLength = 2 * MiB + 1;
      const { responses, writtenAtAnswer } = await tricklingBody(portOf(edge), {
        headBytes: MiB,
        chunk: 64 * 1024,
        everyMs: 5,
        declaredLength,
      });
      expect(responses.map((response) => response.status)).toEqual([413]);
      expect(writtenAtAnswer).toBe(declaredLength);
    } finally {
      await edge.close();
    }
  });
});
