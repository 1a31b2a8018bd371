import net from 'node:net';
import { ERROR_CATALOGUE, INGEST_BATCH_SHAPE_ERROR } from '../../shared/errors/index.js';

/** One HTTP/1.1 response as it came over the wire. */
export interface RawResponse {
  status: number;
  /** Lower-case names; a repeated header keeps its last value. */
  headers: Record<string, string>;
  body: Buffer;
}

/** Everything a server sent back to one raw request. */
export interface RawExchange {
  responses: RawResponse[];
  /** Bytes after the last complete response (a body sent after a HEAD answer lands here). */
  rest: Buffer;
  /** The server closed the connection (rather than the wait ending). */
  closed: boolean;
}

export interface RawOptions {
  /** The request was HEAD: its answer has no body, and anything after the header section is `rest`. */
  head?: boolean;
  /** Half-close after writing: a server that waits for more of the request sees the end instead. */
  endAfterWrite?: boolean;
  /** How long to wait for an answer or the close (ms). */
  waitMs?: number;
  /** How long to keep reading after the first complete response, for stray bytes (ms). */
  graceMs?: number;
}

const HEADER_END = Buffer.from('\r\n\r\n');

/**
 * Parses as many complete responses as `data` holds. A response is complete when its header
 * section has ended and then: nothing for a HEAD request, a 1xx or a 204/304; Content-Length
 * bytes; a chunked body up to its last chunk; otherwise everything up to the close.
 */
export function parseResponses(data: Buffer, head: boolean, closed: boolean): { responses: RawResponse[]; rest: Buffer } {
  const responses: RawResponse[] = [];
  let offset = 0;
  for (;;) {
    const end = data.indexOf(HEADER_END, offset);
    if (end < 0) break;
    const [statusLine, ...lines] = data.subarray(offset, end).toString('latin1').split('\r\n');
    const match = /^HTTP\/1\.[01] (\d{3})(?: .*)?$/.exec(statusLine);
    if (!match) throw new Error(`not an HTTP response: ${JSON.stringify(statusLine)}`);
    const status = Number(match[1]);
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const colon = line.indexOf(':');
      if (colon <= 0) throw new Error(`bad header line: ${JSON.stringify(line)}`);
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    let next = end + HEADER_END.length;
    let body: Buffer = Buffer.alloc(0);
    if (status < 200) {
      offset = next;
      continue; // 100 Continue: the real answer follows
    }
    if (!head && status !== 204 && status !== 304) {
      if (headers['transfer-encoding']?.toLowerCase() === 'chunked') {
        const chunks: Buffer[] = [];
        for (;;) {
          const lineEnd = data.indexOf('\r\n', next);
          if (lineEnd < 0) return { responses, rest: data.subarray(offset) };
          const size = parseInt(data.subarray(next, lineEnd).toString('latin1'), 16);
          if (!Number.isInteger(size)) throw new Error('bad chunk size');
          if (size === 0) {
            // The last chunk's line, any trailer lines, then an empty line.
            const trailerEnd = data.indexOf(HEADER_END, lineEnd);
            if (trailerEnd < 0) return { responses, rest: data.subarray(offset) };
            next = trailerEnd + HEADER_END.length;
            break;
          }
          if (data.length < lineEnd + 2 + size + 2) return { responses, rest: data.subarray(offset) };
          chunks.push(data.subarray(lineEnd + 2, lineEnd + 2 + size));
          next = lineEnd + 2 + size + 2;
        }
        body = Buffer.concat(chunks);
      } else if (headers['content-length'] !== undefined) {
        const length = Number(headers['content-length']);
        if (data.length < next + length) break;
        body = data.subarray(next, next + length);
        next += length;
      } else {
        if (!closed) break;
        body = data.subarray(next);
        next = data.length;
      }
    }
    responses.push({ status, headers, body });
    offset = next;
  }
  return { responses, rest: data.subarray(offset) };
}

/**
 * Writes `request` on a fresh connection (an array: one write per part, 50 ms apart, so that the
 * server reads them separately) and collects what comes back until the server closes, the first
 * response is complete (then a short grace for stray bytes), or `waitMs` passes.
 */
export function sendRaw(port: number, request: string | Buffer | (string | Buffer)[], options: RawOptions = {}): Promise<RawExchange> {
  const { head = false, endAfterWrite = false, waitMs = 2000, graceMs = 50 } = options;
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const received: Buffer[] = [];
    let settled = false;
    let grace: NodeJS.Timeout | undefined;
    const finish = (closed: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearTimeout(grace);
      socket.destroy();
      try {
        resolve({ ...parseResponses(Buffer.concat(received), head, closed), closed });
      } catch (error) {
        reject(new Error(`${(error as Error).message} in ${JSON.stringify(Buffer.concat(received).toString('latin1').slice(0, 300))}`));
      }
    };
    const timer = setTimeout(() => finish(false), waitMs);
    socket.on('data', (chunk) => {
      received.push(chunk);
      if (grace) return;
      try {
        if (parseResponses(Buffer.concat(received), head, false).responses.length > 0) grace = setTimeout(() => finish(false), graceMs);
      } catch {
        // not a response (yet): keep reading, finish() reports it
      }
    });
    socket.on('end', () => finish(true));
    socket.on('close', () => finish(true));
    // A reset after the server wrote its answer still leaves the answer to check.
    socket.on('error', () => finish(true));
    socket.on('connect', async () => {
      const parts = Array.isArray(request) ? request : [request];
      for (const [index, part] of parts.entries()) {
        if (index > 0) await new Promise((wait) => setTimeout(wait, 50));
        if (!socket.destroyed) socket.write(part);
      }
      if (endAfterWrite && !socket.destroyed) socket.end();
    });
  });
}

const CATALOGUE = ERROR_CATALOGUE as Record<string, { status: number }>;

/**
 * Statuses the HTTP layer answers with a catalogue code besides the catalogue's own
 * (docs/decisions/api-conventions.md, Foundation), plus the one code the spec gives two statuses.
 */
export const HTTP_LAYER_STATUSES: Record<string, number[]> = {
  invalid_request: [408, 417],
  request_too_large: [431],
  integration_scope_mismatch: [403],
  service_unavailable: [500],
};

/**
 * Why `response` is not a catalogue answer, or null when it is one (bodies of 2xx/3xx are not
 * checked; a HEAD answer has no body to check).
 */
export function catalogueViolation(response: RawResponse, options: { allowBatchShape?: boolean; head?: boolean } = {}): string | null {
  if (response.status < 400) return null;
  if (options.head) return response.body.length === 0 ? null : `a HEAD answer with a body`;
  let body: unknown;
  try {
    body = JSON.parse(response.body.toString('utf8'));
  } catch {
    return `${response.status} without a JSON body: ${JSON.stringify(response.body.toString('latin1').slice(0, 200))}`;
  }
  const code = (body as { error?: unknown } | null)?.error;
  if (typeof code !== 'string') return `${response.status} body without an error code: ${JSON.stringify(body)}`;
  if (options.allowBatchShape && code === INGEST_BATCH_SHAPE_ERROR)
    return response.status === 400 ? null : `${code} with ${response.status}`;
  const spec = CATALOGUE[code];
  if (!spec) return `uncatalogued code ${code}`;
  if (![spec.status, ...(HTTP_LAYER_STATUSES[code] ?? [])].includes(response.status)) return `${code} with ${response.status}`;
  if (!/^application\/json/.test(response.headers['content-type'] ?? ''))
    return `${code} with content-type ${response.headers['content-type']}`;
  return null;
}
