import { spawn, type ChildProcess } from 'node:child_process';
import { newLogDir } from './logDirs.js';
import { freePort } from './ports.js';
import { waitFor } from './wait.js';

/** A compiled process of this project (`dist/…/main.js`) listening on a loopback port. */
export interface SpawnedProcess {
  child: ChildProcess;
  port: number;
  url: string;
  /** Resolves once the process has exited. */
  exited: Promise<void>;
  /** Sends `signal` (unless the process is gone) and waits for the exit. */
  kill(signal: NodeJS.Signals): Promise<void>;
  /** SIGTERM, then SIGKILL after 10 s. */
  stop(): Promise<void>;
}

/**
 * Spawns `file` with the test environment plus `env`, its port variable set to `port` (a free
 * one by default), and waits until it answers /healthz (`npm run build` first).
 */
export async function spawnProcess(
  file: string,
  portVar: string,
  env: Record<string, string> = {},
  port?: number,
): Promise<SpawnedProcess> {
  const listenPort = port ?? (await freePort());
  // An edge holds its write-ahead log folder alone (a lock file): each spawned edge gets its own
  // unless the test names one, so test runs on one machine never share the default folder.
  const logDir = file === 'dist/ingest/main.js' && env.INGEST_WAL_DIR === undefined ? { INGEST_WAL_DIR: newLogDir() } : {};
  const child = spawn(process.execPath, [file], {
    env: { ...process.env, ...logDir, ...env, [portVar]: String(listenPort) },
    stdio: 'ignore',
  });
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  const url = `http://127.0.0.1:${listenPort}`;
  const kill = async (signal: NodeJS.Signals) => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    await exited;
  };
  const stop = async () => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await kill('SIGTERM');
    clearTimeout(timer);
  };
  try {
    await waitFor(
      async () => {
        if (child.exitCode !== null) throw new Error(`${file} exited with ${child.exitCode}`);
        return (
          (await fetch(`${url}/healthz`).then(
            (response) => response.ok,
            () => false,
          )) || undefined
        );
      },
      30_000,
      `${file} to answer /healthz`,
    );
  } catch (error) {
    await kill('SIGKILL');
    throw error;
  }
  return { child, port: listenPort, url, exited, kill, stop };
}

/** The three compiled processes on free ports, as `npm start` runs them: ingest, management, analyzer. */
export async function spawnStack(): Promise<[ingest: SpawnedProcess, management: SpawnedProcess, analyzer: SpawnedProcess]> {
  return [
    await spawnProcess('dist/ingest/main.js', 'INGEST_PORT'),
    await spawnProcess('dist/management/main.js', 'MANAGEMENT_PORT'),
    await spawnProcess('dist/analyzer/main.js', 'ANALYZER_PORT'),
  ];
}
