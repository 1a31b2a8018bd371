// A minimal HTTP/1.1 keep-alive client for the load driver (bench/ingest-load.ts). The driver
// shares the two cores with the server under test, so every microsecond it spends per request is
// taken from the server: this client writes a preformatted head and the body in one writev and
// reads only the status line, Content-Length and (for a non-202) the body. It speaks just what the
// three targets answer: responses with Content-Length, no chunked bodies, no pipelining.

import { connect, type Socket } from 'node:net';

export interface RawAnswer {
  status: number;
  /** The body of a non-202 answer ('' for a 202, which is not read). */
  text: string;
}

interface Exchange {
  resolve(answer: RawAnswer): void;
  reject(error: Error): void;
}

class HttpError extends Error {
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message);
  }
}

const HEAD_END = Buffer.from('\r\n\r\n');

/** One keep-alive connection with at most one request in flight. */
class Connection {
  private buffered: Buffer | null = null;
  private exchange: Exchange | null = null;
  private idleTimer: NodeJS.Timeout | null = null;
  closed = false;

  constructor(
    private readonly socket: Socket,
    private readonly idleMs: number,
    private readonly onIdle: (connection: Connection) => void,
    private readonly onClose: (connection: Connection) => void,
  ) {
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.read(chunk));
    socket.on('error', (error: NodeJS.ErrnoException) => this.fail(new HttpError(error.message, error.code ?? 'ESOCKET')));
    socket.on('close', () => this.fail(new HttpError('connection closed', 'ECONNRESET')));
  }

  send(head: string, body: Buffer, exchange: Exchange): void {
    if (this.idleTimer !== null) clearTimeout(this.idleTimer);
    this.idleTimer = null;
    this.exchange = exchange;
    this.socket.cork();
    this.socket.write(head, 'latin1');
    this.socket.write(body);
    this.socket.uncork();
  }

  private read(chunk: Buffer): void {
    const data = this.buffered === null ? chunk : Buffer.concat([this.buffered, chunk]);
    const headEnd = data.indexOf(HEAD_END);
    if (headEnd === -1) {
      this.buffered = data;
      return;
    }
    const head = data.toString('latin1', 0, headEnd);
    const status = Number(head.slice(9, 12));
    const lengthMatch = /\r\ncontent-length: *(\d+)/i.exec(head);
    if (!lengthMatch || /\r\ntransfer-encoding:/i.test(head)) {
      this.fail(new HttpError(`unsupported response framing: ${head.slice(0, 200)}`, 'EPROTO'));
      this.socket.destroy();
      return;
    }
    const bodyStart = headEnd + HEAD_END.length;
    const bodyEnd = bodyStart + Number(lengthMatch[1]);
    if (data.length < bodyEnd) {
      this.buffered = data;
      return;
    }
    this.buffered = null;
    const exchange = this.exchange;
    this.exchange = null;
    const closing = /\r\nconnection: *close/i.test(head);
    if (closing) this.close();
    else {
      this.idleTimer = setTimeout(() => this.close(), this.idleMs);
      this.onIdle(this);
    }
    exchange?.resolve({ status, text: status === 202 ? '' : data.toString('utf8', bodyStart, bodyEnd) });
  }

  private fail(error: Error): void {
    const exchange = this.exchange;
    this.exchange = null;
    this.close();
    exchange?.reject(error);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.idleTimer !== null) clearTimeout(this.idleTimer);
    this.socket.destroy();
    this.onClose(this);
  }
}

/**
 * Up to `maxConnections` keep-alive connections to one server; requests beyond them wait in a
 * queue. An idle connection is closed after `idleMs` (below the server's own idle close, so a
 * request never races the server closing the socket).
 */
export class RawHttpClient {
  private readonly idle: Connection[] = [];
  private readonly all = new Set<Connection>();
  private opening = 0;
  private readonly queue: { head: string; body: Buffer; exchange: Exchange }[] = [];

  constructor(
    private readonly host: string,
    private readonly port: number,
    private readonly maxConnections: number,
    private readonly idleMs: number,
  ) {}

  /** Sends `head` (request line and headers, ending with the empty line) and `body`. */
  request(head: string, body: Buffer): Promise<RawAnswer> {
    return new Promise<RawAnswer>((resolve, reject) => {
      const exchange = { resolve, reject };
      const connection = this.idle.pop();
      if (connection !== undefined) return connection.send(head, body, exchange);
      this.queue.push({ head, body, exchange });
      if (this.all.size + this.opening < this.maxConnections) this.open();
    });
  }

  private open(): void {
    this.opening += 1;
    const socket = connect(this.port, this.host);
    socket.once('connect', () => {
      this.opening -= 1;
      const connection = new Connection(
        socket,
        this.idleMs,
        (ready) => this.ready(ready),
        (gone) => this.gone(gone),
      );
      this.all.add(connection);
      this.ready(connection);
    });
    socket.once('error', (error: NodeJS.ErrnoException) => {
      if (!socket.connecting) return;
      this.opening -= 1;
      const waiting = this.queue.shift();
      waiting?.exchange.reject(new HttpError(error.message, error.code ?? 'ECONNREFUSED'));
    });
  }

  /** A connection free for the next request: the oldest waiting one gets it. */
  private ready(connection: Connection): void {
    const next = this.queue.shift();
    if (next !== undefined) connection.send(next.head, next.body, next.exchange);
    else this.idle.push(connection);
  }

  private gone(connection: Connection): void {
    this.all.delete(connection);
    const index = this.idle.indexOf(connection);
    if (index !== -1) this.idle.splice(index, 1);
    if (this.queue.length > 0 && this.all.size + this.opening < this.maxConnections) this.open();
  }

  close(): void {
    for (const connection of [...this.all]) connection.close();
  }
}
