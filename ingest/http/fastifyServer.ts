import type { IncomingMessage } from 'node:http';
import Fastify, { type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { MAX_BODY_BYTES, type EdgeResponse } from '../common/edgeHttp.js';
import { createIngestPipeline, type EdgeDeps } from '../pipeline/compose.js';
import type { IngestPipeline } from '../pipeline/ingestPipeline.js';
import { healthy, metricsText, notFound, readiness, tooLarge, unreadable } from './edgeAnswers.js';
import { LingeringRefusal, type LingerLimits } from './lingeringRefusal.js';
import type { RunningServer } from './uwsServer.js';

const EMPTY_BODY = Buffer.alloc(0);

function send(reply: FastifyReply, response: EdgeResponse): FastifyReply {
  return reply.code(response.status).headers(response.headers).send(response.body);
}

/**
 * Resolves once what is left of a refused body has been read and dropped, within `limits`, or
 * the client went away (lingeringRefusal.ts: the 413 then reaches a client still writing).
 */
function drained(raw: IncomingMessage, limits: LingerLimits): Promise<void> {
  return new Promise((resolve) => {
    if (raw.complete || raw.socket.destroyed) return resolve();
    const refusal = new LingeringRefusal(limits, resolve);
    raw.on('data', (chunk: Buffer) => refusal.discard(chunk.length, false));
    raw.on('end', () => refusal.discard(0, true));
    raw.socket.once('close', () => refusal.discard(0, true));
    raw.resume();
  });
}

/**
 * The same ingest pipeline behind Fastify (issue 4: the benchmark compares adapters). Fastify
 * reads the raw body as a Buffer with the 1 MiB limit enforced while it streams; the pipeline
 * does the rest, so both adapters answer identically.
 */
export async function buildFastifyEdge(deps: EdgeDeps): Promise<{ app: FastifyInstance; pipeline: IngestPipeline }> {
  const pipeline = await createIngestPipeline(deps);
  const linger: LingerLimits = { maxBytes: deps.config.ingest.lingerMaxBytes, maxMs: deps.config.ingest.lingerMs };
  const app = Fastify({ logger: false, bodyLimit: MAX_BODY_BYTES });
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: MAX_BODY_BYTES }, (_request, body, done) => done(null, body));
  const handle = async (request: FastifyRequest, reply: FastifyReply) => {
    const headers: Record<string, string | undefined> = {};
    for (const name in request.headers) {
      const value = request.headers[name];
      headers[name] = Array.isArray(value) ? value.join(', ') : value;
    }
    const rawBody = Buffer.isBuffer(request.body) ? request.body : EMPTY_BODY;
    return send(reply, await pipeline.handle({ method: request.method, path: request.url.split('?')[0], headers, rawBody }));
  };
  app.post('/ingest', handle);
  app.get('/v1/collector/connection', handle);
  app.get('/healthz', (_request, reply) => send(reply, healthy()));
  app.get('/readyz', async (_request, reply) => send(reply, await readiness(deps)));
  app.get('/metrics', async (_request, reply) => send(reply, await metricsText(deps.metrics)));
  app.setNotFoundHandler((_request, reply) => send(reply, notFound()));
  app.setErrorHandler(async (error: FastifyError, request, reply) => {
    if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE' || error.statusCode === 413) {
      // A declared length past what would be read is refused before the body is sent.
      const declared = Number(request.headers['content-length'] ?? '0');
      if (!(declared > linger.maxBytes)) await drained(request.raw, linger);
      const refused = tooLarge();
      return send(reply, { ...refused, headers: { ...refused.headers, connection: 'close' } });
    }
    return send(reply, unreadable(typeof error.statusCode === 'number' ? error.statusCode : 500));
  });
  return { app, pipeline };
}

export async function startFastifyIngestServer(deps: EdgeDeps, host: string, port: number): Promise<RunningServer> {
  const { app, pipeline } = await buildFastifyEdge(deps);
  await app.listen({ host, port });
  const address = app.server.address();
  return {
    port: typeof address === 'object' && address ? address.port : port,
    pipeline,
    async close() {
      const closing = app.close();
      await pipeline.drain();
      await closing;
    },
  };
}
