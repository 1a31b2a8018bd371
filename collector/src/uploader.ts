// HTTP requests of the library itself, on node:http / node:https rather than fetch: the host's
// fetch instrumentation (undici diagnostics_channel) then never sees them. A request resolves
// with a status (0 when no response arrived) and never rejects.

import { createHmac } from 'node:crypto';
import { Agent as HttpAgent, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';

export interface Answer {
  /** HTTP status, or 0 when no response arrived (network error, timeout, abort). */
  status: number;
  headers: IncomingHttpHeaders;
  /** The response body as text (at most MAX_ANSWER_BYTES kept). */
  body: string;
  /** What went wrong when status is 0. */
  error?: string;
}

/** Answers are small JSON documents; a 207 of 50 items with issues stays far below this. */
const MAX_ANSWER_BYTES = 1024 * 1024;

/** `X-Service-Signature`: `t=<unix seconds>,v1=<hex HMAC-SHA256(token, "<t>.<body>")>`. */
export function signature(token: string, body: string, unixSeconds: number): string {
  const v1 = createHmac('sha256', token).update(`${unixSeconds}.`).update(body, 'utf8').digest('hex');
  return `t=${unixSeconds},v1=${v1}`;
}

export interface Credentials {
  connectionKey: string;
  ingestToken: string;
}

/** The signed headers of a request whose body is `body` (empty for GET), signed now. */
export function signedHeaders(credentials: Credentials, body: string, nowMs = Date.now()): Record<string, string> {
  return {
    'x-service-connection': credentials.connectionKey,
    authorization: `Bearer ${credentials.ingestToken}`,
    'x-service-signature': signature(credentials.ingestToken, body, Math.floor(nowMs / 1000)),
  };
}

export class Uploader {
  private readonly agent: HttpAgent;
  private readonly inFlight = new Set<AbortController>();

  constructor(
    protocol: string,
    private readonly timeoutMs: number,
  ) {
    const Agent = protocol === 'https:' ? HttpsAgent : HttpAgent;
    // Up to 16 uploads (maxConcurrentUploads) and the connection check at once.
    this.agent = new Agent({ keepAlive: true, maxSockets: 17, maxFreeSockets: 16, timeout: 60_000 });
  }

  /** A request to `target` (an URL of the same endpoint); resolves, never rejects. */
  send(target: URL, method: 'GET' | 'POST', headers: Record<string, string>, body?: Buffer): Promise<Answer> {
    return new Promise<Answer>((resolve) => {
      const controller = new AbortController();
      this.inFlight.add(controller);
      let settled = false;
      const finish = (answer: Answer) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        this.inFlight.delete(controller);
        resolve(answer);
      };
      const failed = (error: string) => finish({ status: 0, headers: {}, body: '', error });
      const timer = setTimeout(() => {
        failed(`no answer within ${this.timeoutMs} ms`);
        controller.abort();
      }, this.timeoutMs);
      timer.unref();
      try {
        const request = (target.protocol === 'https:' ? httpsRequest : httpRequest)(target, {
          method,
          agent: this.agent,
          signal: controller.signal,
          headers: body === undefined ? headers : { ...headers, 'content-length': String(body.length) },
        });
        // Telemetry never keeps the host alive: whoever awaits flush() or close() holds a
        // handle of its own (delivery.ts); the agent re-refs a reused socket, so unref each time.
        request.on('socket', (socket) => socket.unref());
        request.on('error', (error) => failed(error.message || error.name));
        request.on('response', (response) => {
          const chunks: Buffer[] = [];
          let kept = 0;
          response.on('data', (chunk: Buffer) => {
            if (kept < MAX_ANSWER_BYTES) {
              chunks.push(chunk);
              kept += chunk.length;
            }
          });
          response.on('error', (error) => failed(error.message || error.name));
          response.on('aborted', () => failed('answer interrupted'));
          response.on('end', () =>
            finish({
              status: response.statusCode ?? 0,
              headers: response.headers,
              body: Buffer.concat(chunks).subarray(0, MAX_ANSWER_BYTES).toString('utf8'),
            }),
          );
        });
        request.end(body);
      } catch (error) {
        failed(error instanceof Error ? error.message : 'request failed');
      }
    });
  }

  /** Aborts every request in flight (each resolves with status 0) and closes idle sockets. */
  abortAll(): void {
    for (const controller of this.inFlight) controller.abort();
    this.agent.destroy();
  }
}
