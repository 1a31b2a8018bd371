import uWS from 'uWebSockets.js';
import { EDGE_REQUEST_HEADERS, MAX_BODY_BYTES, STATUS_TEXT, TOO_LARGE_BODY, fixedJson, type EdgeResponse } from './edgeHttp.js';
import { readiness } from './health.js';
import { LingeringRefusal, type LingerLimits } from './lingeringRefusal.js';
import { createIngestPipeline, type EdgeDeps, type IngestPipeline } from '../pipeline.js';
import { copyBytes } from '../offload/sharedSlots.js';

export type IngestServerDeps = EdgeDeps;

export interface RunningServer {
  port: number;
  pipeline: IngestPipeline;
  /** Graceful stop: stops accepting, answers what is in progress, drains the group commit. */
  close(): Promise<void>;
}

const EMPTY_BODY = Buffer.alloc(0);

const statusLine = (status: number) => `${status} ${STATUS_TEXT[status] ?? 'Unknown'}`;

function writeResponse(res: uWS.HttpResponse, response: EdgeResponse, closeConnection = false, head = false): void {
  res.cork(() => {
    res.writeStatus(statusLine(response.status));
    for (const name in response.headers) res.writeHeader(name, response.headers[name]);
    // A HEAD answer has no body. uWebSockets.js 20.30 leaves a response unfinished when told the
    // length of a body it is not sent, and closing makes it write `Content-Length: 0`, which a
    // HEAD answer must not claim (RFC 9110 §8.6): so no length, and the connection stays open.
    if (head) res.endWithoutBody();
    else res.end(response.body, closeConnection);
  });
}

/** 413, and the connection closed (uWebSockets.js writes `Connection: close`): the rest of the body is never read. */
function tooLarge(res: uWS.HttpResponse, head: boolean): void {
  writeResponse(res, fixedJson(413, TOO_LARGE_BODY, { 'cache-control': 'no-store' }), true, head);
}

/**
 * The ingest edge's uWebSockets.js adapter (00-decisions §1): reads the body with the 1 MiB
 * limit enforced while it streams, hands the request to the pipeline, and writes the answer
 * corked, unless the client went away. Also serves `/healthz`, `/readyz` and `/metrics`.
 */
export async function startIngestServer(deps: IngestServerDeps, host: string, port: number): Promise<RunningServer> {
  const pipeline = await createIngestPipeline(deps);
  const linger: LingerLimits = { maxBytes: deps.config.ingest.lingerMaxBytes, maxMs: deps.config.ingest.lingerMs };
  let stopping = false;
  const app = uWS.App();

  const pipelineRoute = (res: uWS.HttpResponse, req: uWS.HttpRequest) => {
    // The request object lives only until this handler returns: read everything now.
    const method = req.getMethod().toUpperCase();
    // HEAD is GET without the body (uWebSockets.js routes it apart; Fastify does this itself).
    const head = method === 'HEAD';
    const path = req.getUrl();
    const headers: Record<string, string | undefined> = {};
    for (const name of EDGE_REQUEST_HEADERS) {
      const value = req.getHeader(name);
      if (value !== '') headers[name] = value;
    }
    const declaredLength = Number(req.getHeader('content-length') || '0');
    let aborted = false;
    let finished = false;
    // The request's memory (the body's, when its length is declared: see below); given back
    // here unless the request reaches the pipeline, which gives it back itself.
    const memory = pipeline.requestMemory();
    let sized: Buffer | null = null;
    // Set once the body is over the limit: the rest is read and dropped, then 413 (lingeringRefusal.ts).
    let refusal: LingeringRefusal | null = null;
    res.onAborted(() => {
      aborted = true;
      refusal?.cancel();
      if (!finished) memory.release();
    });
    if (stopping) {
      finished = true;
      writeResponse(res, fixedJson(503, '{"error":"service_unavailable"}'), true, head);
      return;
    }
    const refuse = () => {
      finished = true;
      memory.release();
      refusal = new LingeringRefusal(linger, () => { if (!aborted) tooLarge(res, false); });
      return refusal;
    };
    if (declaredLength > MAX_BODY_BYTES) {
      // A body that is announced too long to be worth reading is refused before it is sent.
      if (head || declaredLength > linger.maxBytes) {
        finished = true;
        tooLarge(res, head);
        return;
      }
      const announced = refuse();
      res.onData((chunk, isLast) => announced.discard(chunk.byteLength, isLast));
      return;
    }
    const respond = (rawBody: Buffer) => {
      pipeline.handle({ method: head ? 'GET' : method, path, headers, rawBody, memory }).then((response) => {
        if (!aborted) writeResponse(res, response, stopping, head);
      });
    };
    if (method === 'GET' || head) {
      finished = true;
      respond(EMPTY_BODY);
      return;
    }
    // With a declared length the body is copied once into memory of that size (a shared slot
    // when one is free: RequestMemory.body); a chunked body is collected chunk by chunk. Either
    // way the limit is checked as the bytes arrive.
    sized = declaredLength > 0 ? memory.body(declaredLength) : null;
    const chunks: Buffer[] = [];
    let size = 0;
    res.onData((chunk, isLast) => {
      if (refusal !== null) return refusal.discard(chunk.byteLength, isLast);
      if (finished) return;
      const next = size + chunk.byteLength;
      if (next > MAX_BODY_BYTES || (sized !== null && next > sized.length)) {
        chunks.length = 0;
        refuse().discard(next, isLast);
        return;
      }
      // uWebSockets.js neuters the chunk when this callback returns: copy it.
      if (sized !== null) copyBytes(new Uint8Array(chunk), sized, size);
      else chunks.push(Buffer.from(chunk.slice(0)));
      size = next;
      if (!isLast) return;
      finished = true;
      if (sized === null) respond(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size));
      else if (size === sized.length) respond(sized);
      else {
        // Shorter than declared: the pipeline gets a buffer of the body's own length.
        const body = Buffer.from(sized.subarray(0, size));
        memory.release();
        respond(body);
      }
    });
  };
  /** A GET route that answers HEAD too, without the body. */
  const getRoute = (pattern: string, handler: (res: uWS.HttpResponse, head: boolean) => void) => {
    app.get(pattern, (res) => handler(res, false));
    app.head(pattern, (res) => handler(res, true));
  };
  app.post('/ingest', pipelineRoute);
  app.get('/v1/collector/connection', pipelineRoute);
  app.head('/v1/collector/connection', pipelineRoute);

  getRoute('/healthz', (res, head) => writeResponse(res, fixedJson(200, '{"status":"ok"}'), false, head));
  getRoute('/readyz', (res, head) => {
    if (stopping) return writeResponse(res, fixedJson(503, '{"status":"stopping"}'), true, head);
    let aborted = false;
    res.onAborted(() => { aborted = true; });
    readiness(deps).then((response) => { if (!aborted) writeResponse(res, response, false, head); });
  });
  getRoute('/metrics', (res, head) => {
    let aborted = false;
    res.onAborted(() => { aborted = true; });
    deps.metrics.metrics().then((text) => {
      if (!aborted) writeResponse(res, { status: 200, headers: { 'content-type': deps.metrics.contentType }, body: text }, false, head);
    });
  });
  app.any('/*', (res, req) => writeResponse(res, fixedJson(404, '{"error":"not_found"}'), false, req.getMethod() === 'head'));

  const listenSocket = await new Promise<uWS.us_listen_socket>((resolve, reject) => {
    app.listen(host, port, (socket) => {
      if (!socket) return reject(new Error(`ingest edge could not listen on ${host}:${port}`));
      resolve(socket);
    });
  });
  return {
    port: uWS.us_socket_local_port(listenSocket),
    pipeline,
    async close() {
      if (stopping) return;
      stopping = true;
      uWS.us_listen_socket_close(listenSocket);
      await pipeline.drain();
    },
  };
}
