// The ceiling reference of the ingest load benchmark (issue 4): a bare uWebSockets.js handler that
// does only the work no ingest edge can avoid — read the body, parse X-Service-Signature, verify
// the HMAC-SHA256 over `<t>.<raw body>` with the connection's ingest token, JSON.parse, answer
// 202 `{}`. No validation, no admission, no persistence. Started by bench/ingest-target.ts.
//
// Also the same work behind Fastify (`fastify-ceiling`, not one of the three targets):
// the two ceilings side by side measure what the HTTP layers alone cost per batch. The edge and
// the Fastify adapter add the same pipeline and stores to those (bench/RESULTS.md, 19:20 UTC).

import type { KeyObject } from 'node:crypto';
import Fastify from 'fastify';
import uWS from 'uWebSockets.js';
import { MAX_BODY_BYTES } from '../ingest/common/edgeHttp.js';
import { STATUS_TEXT } from '../ingest/http/uwsServer.js';
import { parseSignatureHeader, signatureMatches } from '../ingest/auth/signature.js';

/** The ceiling's whole work on a read body: verify the signature, JSON.parse. Status and body. */
function ceilingAnswer(key: KeyObject | undefined, signature: ReturnType<typeof parseSignatureHeader>, body: Buffer): [number, string] {
  if (key === undefined || signature === null || !signatureMatches(key, signature, body)) return [401, '{"error":"unauthenticated"}'];
  try {
    JSON.parse(body.toString('utf8'));
  } catch {
    return [400, '{"error":"invalid_request"}'];
  }
  return [202, '{}'];
}

export interface CeilingServer {
  port: number;
  close(): void;
}

/** `tokens`: ingest token key of each Connection key (what the edge's credential cache holds after warm-up). */
export async function startCeilingServer(tokens: ReadonlyMap<string, KeyObject>, host: string, port: number): Promise<CeilingServer> {
  const app = uWS.App();
  const answer = (res: uWS.HttpResponse, status: string, body: string) => {
    res.cork(() => {
      res.writeStatus(status);
      res.writeHeader('content-type', 'application/json; charset=utf-8');
      res.end(body);
    });
  };
  app.post('/ingest', (res, req) => {
    const key = tokens.get(req.getHeader('x-service-connection'));
    const signature = parseSignatureHeader(req.getHeader('x-service-signature'));
    const declared = Number(req.getHeader('content-length') || '0');
    let aborted = false;
    res.onAborted(() => {
      aborted = true;
    });
    if (declared > MAX_BODY_BYTES) return answer(res, '413 Payload Too Large', '{"error":"request_too_large"}');
    const sized = declared > 0 ? Buffer.allocUnsafe(declared) : null;
    const chunks: Buffer[] = [];
    let size = 0;
    res.onData((chunk, isLast) => {
      if (size < 0) return;
      if (size + chunk.byteLength > (sized?.length ?? MAX_BODY_BYTES)) {
        size = -1;
        if (!aborted) answer(res, '413 Payload Too Large', '{"error":"request_too_large"}');
        return;
      }
      // The chunk is neutered when this callback returns: copy it (as the edge does).
      if (sized !== null) Buffer.from(chunk).copy(sized, size);
      else chunks.push(Buffer.from(chunk.slice(0)));
      size += chunk.byteLength;
      if (!isLast || aborted) return;
      const body = sized !== null ? sized.subarray(0, size) : Buffer.concat(chunks, size);
      const [status, text] = ceilingAnswer(key, signature, body);
      answer(res, `${status} ${STATUS_TEXT[status]}`, text);
    });
  });
  app.any('/*', (res) => answer(res, '404 Not Found', '{"error":"not_found"}'));
  const socket = await new Promise<uWS.us_listen_socket>((resolve, reject) => {
    app.listen(host, port, (listen) =>
      listen ? resolve(listen) : reject(new Error(`ceiling server could not listen on ${host}:${port}`)),
    );
  });
  return {
    port: uWS.us_socket_local_port(socket),
    close: () => uWS.us_listen_socket_close(socket),
  };
}

/** The same ceiling behind Fastify, reading the body as the Fastify adapter does (ingest/http/fastifyServer.ts). */
export async function startFastifyCeilingServer(
  tokens: ReadonlyMap<string, KeyObject>,
  host: string,
  port: number,
): Promise<CeilingServer> {
  const app = Fastify({ logger: false, bodyLimit: MAX_BODY_BYTES });
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: MAX_BODY_BYTES }, (_request, body, done) => done(null, body));
  app.post('/ingest', async (request, reply) => {
    const header = (name: string) => {
      const value = request.headers[name];
      return typeof value === 'string' ? value : '';
    };
    const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
    const [status, text] = ceilingAnswer(
      tokens.get(header('x-service-connection')),
      parseSignatureHeader(header('x-service-signature')),
      body,
    );
    return reply.code(status).header('content-type', 'application/json; charset=utf-8').send(text);
  });
  await app.listen({ host, port });
  const address = app.server.address();
  return {
    port: typeof address === 'object' && address ? address.port : port,
    close: () => {
      void app.close();
    },
  };
}
