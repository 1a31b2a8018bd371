import { createServer, request as httpRequest, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * What the proxy does with one request: `pass` it, `lose` the answer (the request reaches the
 * service and is done there, then the client's connection is cut before any answer: a lost
 * response), or `rewrite` the answer's JSON body before passing it on.
 */
export type ProxyAction = 'pass' | 'lose' | { rewrite: (body: Record<string, unknown>) => Record<string, unknown> };

export interface SeenRequest {
  method: string;
  path: string;
  idempotencyKey: string | undefined;
}

export interface AnswerProxy {
  url: string;
  /** Decides what happens to the next requests; the rule stays until replaced (`() => 'pass'` by default). */
  rule(decide: (method: string, path: string) => ProxyAction): void;
  /** The requests the proxy has seen, in order (what the CLI actually sent). */
  seen: SeenRequest[];
  close(): Promise<void>;
}

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'content-length', 'host']);

function forwardable(headers: IncomingHttpHeaders): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) if (value !== undefined && !HOP_BY_HOP.has(name)) out[name] = value;
  return out;
}

/**
 * A loopback HTTP proxy in front of a management plane (`target`, e.g. http://127.0.0.1:port) that
 * a test points the CLI's profile at, to lose or change the answers of chosen requests while the
 * service itself runs unchanged.
 */
export async function startAnswerProxy(target: string): Promise<AnswerProxy> {
  const upstream = new URL(target);
  let decide: (method: string, path: string) => ProxyAction = () => 'pass';
  const seen: SeenRequest[] = [];
  const server: Server = createServer((incoming, outgoing) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      const method = incoming.method ?? 'GET';
      const path = incoming.url ?? '/';
      const key = incoming.headers['idempotency-key'];
      seen.push({ method, path, idempotencyKey: typeof key === 'string' ? key : undefined });
      const action = decide(method, path);
      const body = Buffer.concat(chunks);
      const forward = httpRequest(
        {
          host: upstream.hostname,
          port: upstream.port,
          method,
          path,
          headers: { ...forwardable(incoming.headers), 'content-length': String(body.length) },
        },
        (answer) => {
          const parts: Buffer[] = [];
          answer.on('data', (chunk: Buffer) => parts.push(chunk));
          answer.on('end', () => {
            if (action === 'lose') {
              outgoing.socket?.destroy();
              return;
            }
            let payload = Buffer.concat(parts);
            if (action !== 'pass') payload = Buffer.from(JSON.stringify(action.rewrite(JSON.parse(payload.toString('utf8')))));
            outgoing.writeHead(answer.statusCode ?? 502, { ...forwardable(answer.headers), 'content-length': String(payload.length) });
            outgoing.end(payload);
          });
        },
      );
      forward.on('error', () => outgoing.socket?.destroy());
      forward.end(body);
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', () => done()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    rule(next) {
      decide = next;
    },
    seen,
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}
