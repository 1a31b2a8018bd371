import uWS from 'uWebSockets.js';
import { EDGE_REQUEST_HEADERS, MAX_BODY_BYTES, type EdgeResponse } from '../common/edgeHttp.js';
import type { RequestMemory } from '../offload/requestMemory.js';
import { copyBytes } from '../offload/sharedSlots.js';
import { createIngestPipeline, type EdgeDeps } from '../pipeline/compose.js';
import type { IngestPipeline } from '../pipeline/ingestPipeline.js';
import { healthy, metricsText, notFound, readiness, stopping, stoppingReadiness, tooLarge } from './edgeAnswers.js';
import { LingeringRefusal, type LingerLimits } from './lingeringRefusal.js';

export type IngestServerDeps = EdgeDeps;

export interface RunningServer {
  port: number;
  pipeline: IngestPipeline;
  /** Graceful stop: stops accepting, answers what is in progress, ships what the log holds. */
  close(): Promise<void>;
}

const EMPTY_BODY = Buffer.alloc(0);

/** Reason phrases for the statuses the edge answers (uWebSockets.js writes the status line itself). */
export const STATUS_TEXT: Record<number, string> = {
  200: 'OK',
  202: 'Accepted',
  207: 'Multi-Status',
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  409: 'Conflict',
  413: 'Payload Too Large',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

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

/** An answer that takes a while: written unless the client went away meanwhile. */
function asyncAnswer(res: uWS.HttpResponse, head: boolean, answer: () => Promise<EdgeResponse>): void {
  let aborted = false;
  res.onAborted(() => {
    aborted = true;
  });
  answer().then((response) => {
    if (!aborted) writeResponse(res, response, false, head);
  });
}

/**
 * Collects one request's body with the 1 MiB limit checked as the bytes arrive. With a declared
 * length the body is copied once into memory of that size (a shared slot when one is free:
 * RequestMemory.body); a chunked body is collected chunk by chunk. The request's memory is this
 * reader's until `take` hands it to the pipeline with the body; `abandon` gives it back when the
 * request never gets there (the client went away, the body grew too large).
 */
class BodyReader {
  private readonly sized: Buffer | null;
  private readonly chunks: Buffer[] = [];
  private size = 0;
  private done = false;

  constructor(
    private readonly memory: RequestMemory,
    declaredLength: number,
  ) {
    this.sized = declaredLength > 0 ? memory.body(declaredLength) : null;
  }

  /** False once the body would pass the limit or its declared length: the reader is abandoned. */
  add(chunk: ArrayBuffer): boolean {
    const next = this.size + chunk.byteLength;
    if (next > MAX_BODY_BYTES || (this.sized !== null && next > this.sized.length)) {
      this.abandon();
      return false;
    }
    // uWebSockets.js neuters the chunk when its callback returns: copy it.
    if (this.sized !== null) copyBytes(new Uint8Array(chunk), this.sized, this.size);
    else this.chunks.push(Buffer.from(chunk.slice(0)));
    this.size = next;
    return true;
  }

  get length(): number {
    return this.size;
  }

  /** The whole body, and the memory it lies in, which the pipeline releases from now on. */
  take(): { body: Buffer; memory: RequestMemory } {
    this.done = true;
    const { sized, chunks, size, memory } = this;
    if (sized === null) return { body: chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size), memory };
    // Shorter than declared: the pipeline gets a view of the body's own length.
    return { body: size === sized.length ? sized : memory.shrink(sized, size), memory };
  }

  abandon(): void {
    if (this.done) return;
    this.done = true;
    this.chunks.length = 0;
    this.memory.release();
  }
}

/**
 * The ingest edge's uWebSockets.js adapter (00-decisions §1): reads the body with the 1 MiB
 * limit enforced while it streams, hands the request to the pipeline, and writes the answer
 * corked, unless the client went away. Also serves `/healthz`, `/readyz` and `/metrics`.
 */
export async function startIngestServer(deps: IngestServerDeps, host: string, port: number): Promise<RunningServer> {
  const pipeline = await createIngestPipeline(deps);
  const linger: LingerLimits = { maxBytes: deps.config.ingest.lingerMaxBytes, maxMs: deps.config.ingest.lingerMs };
  let stoppingNow = false;
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
    // Set once the body is over the limit: the rest is read and dropped, then 413 (lingeringRefusal.ts).
    let refusal: LingeringRefusal | null = null;
    let reader: BodyReader | null = null;
    res.onAborted(() => {
      aborted = true;
      refusal?.cancel();
      reader?.abandon();
    });
    if (stoppingNow) return writeResponse(res, stopping(), true, head);
    // A body that is announced too long to be worth reading is refused before it is sent.
    if (declaredLength > MAX_BODY_BYTES && (head || declaredLength > linger.maxBytes)) return writeResponse(res, tooLarge(), true, head);
    const refuse = () => {
      refusal = new LingeringRefusal(linger, () => {
        if (!aborted) writeResponse(res, tooLarge(), true);
      });
      return refusal;
    };
    if (declaredLength > MAX_BODY_BYTES) {
      const announced = refuse();
      res.onData((chunk, isLast) => announced.discard(chunk.byteLength, isLast));
      return;
    }
    const respond = (body: Buffer, memory?: RequestMemory) => {
      pipeline.handle({ method: head ? 'GET' : method, path, headers, rawBody: body, ...(memory ? { memory } : {}) }).then((response) => {
        if (!aborted) writeResponse(res, response, stoppingNow, head);
      });
    };
    if (method === 'GET' || head) return respond(EMPTY_BODY);
    const body = new BodyReader(pipeline.requestMemory(), declaredLength);
    reader = body;
    res.onData((chunk, isLast) => {
      if (refusal !== null) return refusal.discard(chunk.byteLength, isLast);
      if (!body.add(chunk)) {
        refuse().discard(body.length + chunk.byteLength, isLast);
        return;
      }
      if (!isLast) return;
      const taken = body.take();
      respond(taken.body, taken.memory);
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

  getRoute('/healthz', (res, head) => writeResponse(res, healthy(), false, head));
  getRoute('/readyz', (res, head) => {
    if (stoppingNow) writeResponse(res, stoppingReadiness(), true, head);
    else asyncAnswer(res, head, () => readiness(deps));
  });
  getRoute('/metrics', (res, head) => asyncAnswer(res, head, () => metricsText(deps.metrics)));
  app.any('/*', (res, req) => writeResponse(res, notFound(), false, req.getMethod() === 'head'));

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
      if (stoppingNow) return;
      stoppingNow = true;
      uWS.us_listen_socket_close(listenSocket);
      await pipeline.drain();
    },
  };
}
