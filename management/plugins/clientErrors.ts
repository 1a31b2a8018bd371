import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { ConnectionError, FastifyError, FastifyInstance, FastifyReply, FastifyHttpOptions, FastifyRequest } from 'fastify';
import { AppError, type ErrorCode } from '../../shared/errors/index.js';
import { sendAppError } from './errorHandler.js';

/**
 * Requests that Node's HTTP parser or Fastify's router refuse before any route runs answer with
 * catalogue codes too (docs/decisions/api-conventions.md, Foundation): HTTP's own status where HTTP names one
 * (408, 417, 431), the catalogue code saying what to fix, and no body on a HEAD answer.
 */

/** Parser errors carry the bytes of the read that failed (Node: `clientError`; Fastify's type says otherwise). */
interface ParserError extends Error {
  code?: string;
  rawPacket?: Buffer;
  bytesParsed?: number;
}

const JSON_TYPE = 'application/json; charset=utf-8';

/** A whole response as bytes, for sockets Node no longer manages as HTTP; it closes the connection. */
function rawAnswer(status: number, code: ErrorCode, head: boolean): string {
  const body = JSON.stringify(new AppError(code).body());
  return (
    `HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\nContent-Type: ${JSON_TYPE}\r\n`
    + `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${head ? '' : body}`
  );
}

/**
 * Whether the request the parser failed on is a HEAD request. The parser gives no method before
 * the header section is complete, so this reads the last request line in the bytes it consumed
 * (header lines are `name:`, a request line is `METHOD target`). When that line arrived in an
 * earlier read (a header section over 16 KiB split across reads) it is not seen and the answer
 * carries its body; the connection is closed right after it either way.
 */
function isHeadRequest(error: ParserError): boolean {
  if (!Buffer.isBuffer(error.rawPacket)) return false;
  const consumed = error.rawPacket.subarray(0, error.bytesParsed ?? error.rawPacket.length).toString('latin1');
  const methods = consumed.match(/(?:^|\n)[!#$%&'*+.^_`|~0-9A-Za-z-]+(?= )/g);
  return methods !== null && methods[methods.length - 1].trim() === 'HEAD';
}

/** The last request whose header section each connection completed (set by registerClientErrors). */
const lastRequest = new WeakMap<Socket, IncomingMessage>();

/** Connections already being answered: a parser that failed fails again on every later read. */
const answering = new WeakSet<Socket>();

/** Node's parser refused the request: bad framing, an unknown method, NUL bytes, a header section over 16 KiB, a timeout. */
function clientErrorHandler(connectionError: ConnectionError, socket: Socket): void {
  const error = connectionError as unknown as ParserError;
  const [status, code]: [number, ErrorCode] =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'request_too_large']
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'invalid_request']
        : [400, 'invalid_request'];
  const write = () => {
    if (!socket.writable) {
      socket.destroy();
      return;
    }
    const inFlight = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
    if (inFlight?.req.complete) {
      // An answer to an earlier, complete request of this connection is under way: bytes written
      // now would land inside it (or cut it off), so this one follows it.
      inFlight.once('close', () => setImmediate(write));
      return;
    }
    if (inFlight?.headersSent) {
      // The failed request is the one being answered (its body broke off) and its answer has begun.
      socket.destroy();
      return;
    }
    // The connection's last request is incomplete when its body or trailer broke off: the failed
    // request is that one and its method is known (the body bytes could pass for a request line).
    const last = lastRequest.get(socket);
    const head = last !== undefined && !last.complete ? last.method === 'HEAD' : isHeadRequest(error);
    // The parser cannot resume after an error: answer, then close once the answer is out.
    socket.end(rawAnswer(status, code, head), () => socket.destroy());
  };
  if (error.code === 'ECONNRESET') socket.destroy();
  else if (!answering.has(socket)) {
    answering.add(socket);
    write();
  }
}

/** Fastify's router refused the URL before routing (Fastify: `frameworkErrors`). */
function frameworkErrors(error: FastifyError, _request: FastifyRequest, reply: FastifyReply): void {
  // A percent-encoding that decodes to nothing makes the URL malformed. A parameter over
  // maxParamLength cannot arrive (below), and would name nothing.
  const code: ErrorCode =
    error.code === 'FST_ERR_BAD_URL' ? 'invalid_request' : error.code === 'FST_ERR_MAX_PARAM_LENGTH' ? 'not_found' : 'service_unavailable';
  // Fastify runs no hooks for these answers, the no-store one included (plugins/noStore.ts).
  reply.header('Cache-Control', 'no-store');
  sendAppError(reply, new AppError(code, code === 'service_unavailable' ? { status: 500 } : {}));
}

/** Server options of the management plane's HTTP layer (spread into `Fastify({...})`). */
export const HTTP_LAYER_OPTIONS = {
  clientErrorHandler,
  frameworkErrors,
  // The router's own limit (100) answered 414 where a shorter impossible id answers the route's
  // 404: a parameter can now be as long as the header section Node accepts, so every id reaches
  // its route, which checks its form before any store sees it.
  routerOptions: { maxParamLength: http.maxHeaderSize },
  // Node answers a missing Host itself, with an empty body: checked in the onRequest hook below.
  http: { requireHostHeader: false },
  // Fastify's own 503 while closing has a body of its own: answered in the onRequest hook below.
  return503OnClosing: false,
} satisfies FastifyHttpOptions<http.Server>;

/**
 * The answers Node would otherwise write without a catalogue body: an HTTP/1.1 request without
 * Host (RFC 9112 §3.2), an `Expect` other than 100-continue (RFC 9110 §10.1.1), CONNECT (which
 * Node answers by closing the connection), and requests that arrive while the plane closes.
 */
export function registerClientErrors(app: FastifyInstance): void {
  let closing = false;
  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  app.addHook('onRequest', (request, _reply, done) => {
    if (closing) return done(new AppError('service_unavailable'));
    if (request.raw.httpVersion === '1.1' && request.headers.host === undefined) return done(new AppError('invalid_request'));
    done();
  });
  app.server.on('request', (request: IncomingMessage) => lastRequest.set(request.socket, request));
  app.server.on('checkExpectation', (_request: IncomingMessage, response: ServerResponse) => {
    const body = JSON.stringify(new AppError('invalid_request').body());
    // ServerResponse leaves out the body of a HEAD answer by itself.
    response.writeHead(417, { 'content-type': JSON_TYPE, 'content-length': Buffer.byteLength(body) }).end(body);
  });
  app.server.on('connect', (_request: IncomingMessage, socket: Duplex) => {
    socket.end(rawAnswer(400, 'invalid_request', false), () => socket.destroy());
  });
}
