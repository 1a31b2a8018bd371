import { loadConfig, ConfigError, type Config } from './config.js';

/** Loads config or exits with the reason: processes fail fast on bad configuration. */
export function loadConfigOrExit(): Config {
  try {
    return loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`configuration error: ${error.message}\n`);
      process.exit(78);
    }
    throw error;
  }
}

/** Runs `stop` once on SIGINT/SIGTERM, then exits. */
export function onShutdown(stop: () => Promise<void>): void {
  let stopping = false;
  const handler = () => {
    if (stopping) return;
    stopping = true;
    stop().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
}

/** The URL a client on this machine uses for a listener on host:port (a wildcard host means loopback). */
export function localUrl(host: string, port: number): string {
  const local = host === '0.0.0.0' || host === '' ? '127.0.0.1' : host === '::' ? '::1' : host;
  return `http://${local.includes(':') ? `[${local}]` : local}:${port}`;
}

/**
 * The one plain line a process prints on stdout once it listens and is ready, e.g.
 * `management plane ready at http://127.0.0.1:8081`: the JSON logs are for machines, this is for
 * the person who ran `npm start` (and for the supervisor's and tests' eyes).
 */
export function announceReady(what: string, host: string, port: number): void {
  process.stdout.write(`${what} ready at ${localUrl(host, port)}\n`);
}
