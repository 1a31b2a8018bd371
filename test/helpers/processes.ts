import { spawn, type ChildProcess } from 'node:child_process';
import { freePort } from './ports.js';
import { waitFor } from './wait.js';

/** A compiled process of this project (`dist/…/main.js`) listening on a free loopback port. */
export interface SpawnedProcess {
  child: ChildProcess;
  port: number;
  url: string;
  stop(): Promise<void>;
}

/**
 * Spawns `file` with the test environment plus `env`, its port variable set to a free port, and
 * waits until it answers /healthz. `stop()` sends SIGTERM, then SIGKILL after 10 s.
 */
export async function spawnProcess(file: string, portVar: string, env: Record<string, string> = {}): Promise<SpawnedProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, [file], { env: { ...process.env, ...env, [portVar]: String(port) }, stdio: 'ignore' });
  const url = `http://127.0.0.1:${port}`;
  await waitFor(async () => {
    if (child.exitCode !== null) throw new Error(`${file} exited with ${child.exitCode}`);
    try {
      return (await fetch(`${url}/healthz`)).ok ? true : undefined;
    } catch {
      return undefined;
    }
  }, 30_000, `${file} to answer /healthz`);
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((done) => child.once('exit', () => done()));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  };
  return { child, port, url, stop };
}
