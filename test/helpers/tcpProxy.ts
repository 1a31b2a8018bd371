import { connect, createServer, type Server, type Socket } from 'node:net';
import { freePort } from './ports.js';

/**
 * A loopback TCP proxy to a store that a test can cut (connections refused and the open ones
 * reset, as when the store is stopped) and restore, without stopping the store other tests use.
 */
export interface TcpProxy {
  port: number;
  cut(): Promise<void>;
  restore(): Promise<void>;
  close(): Promise<void>;
}

export async function startTcpProxy(targetPort: number): Promise<TcpProxy> {
  const port = await freePort();
  const sockets = new Set<Socket>();
  let server: Server | null = null;
  const listen = () =>
    new Promise<void>((done) => {
      if (server !== null) return done();
      server = createServer((client) => {
        const upstream = connect(targetPort, '127.0.0.1');
        for (const socket of [client, upstream]) {
          sockets.add(socket);
          socket.on('close', () => sockets.delete(socket));
          socket.on('error', () => {
            client.destroy();
            upstream.destroy();
          });
        }
        client.pipe(upstream).pipe(client);
      });
      server.listen(port, '127.0.0.1', () => done());
    });
  const cut = async () => {
    const current = server;
    server = null;
    for (const socket of sockets) socket.destroy();
    if (current) await new Promise((done) => current.close(() => done(undefined)));
  };
  await listen();
  return { port, cut, restore: listen, close: cut };
}
