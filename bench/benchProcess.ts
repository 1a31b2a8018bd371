import { execFileSync } from 'node:child_process';
// Process-level helpers shared by the benchmarks that drive several processes: command-line
// options, and child Node processes that are killed if the benchmark exits early.

import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';

/**
 * `--name value`, `--name=value` and bare `--flag` (= 'true'). A name in `alwaysTakesValue`
 * takes the next argument even when it starts with `--` (node flags passed through).
 */
export function parseArgs(argv: string[], alwaysTakesValue: readonly string[] = []): Map<string, string> {
  const parsed = new Map<string, string>();
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i];
    if (!arg.startsWith('--')) throw new Error(`unexpected argument ${arg}`);
    const equals = arg.indexOf('=');
    if (equals !== -1) {
      parsed.set(arg.slice(2, equals), arg.slice(equals + 1));
      continue;
    }
    const name = arg.slice(2);
    if (i + 1 < argv.length && (alwaysTakesValue.includes(name) || !argv[i + 1].startsWith('--'))) parsed.set(name, argv[++i]);
    else parsed.set(name, 'true');
  }
  return parsed;
}

/** Node processes this benchmark started: killed (SIGKILL) if the benchmark exits early. */
const children = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => process.exit(130));
}

/**
 * Spawns `node <argv>` and resolves once a line of its stdout matches `ready` (that line is
 * returned). Its stderr goes to ours unless `stderr` is 'pipe'; an IPC channel is open.
 */
export async function spawnNode(
  name: string,
  argv: string[],
  env: NodeJS.ProcessEnv,
  ready: RegExp,
  options: { timeoutMs?: number; stderr?: 'inherit' | 'pipe' } = {},
): Promise<{ child: ChildProcess; line: string }> {
  const timeoutMs = options.timeoutMs ?? 30_000;
  const child = spawn(process.execPath, argv, { env, stdio: ['ignore', 'pipe', options.stderr ?? 'inherit', 'ipc'] });
  children.add(child);
  child.once('exit', () => children.delete(child));
  const line = await new Promise<string>((resolveLine, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} did not start within ${timeoutMs} ms`)), timeoutMs);
    let buffered = '';
    const onData = (chunk: Buffer) => {
      buffered += chunk.toString('utf8');
      const found = buffered.split('\n').find((candidate) => ready.test(candidate));
      if (found !== undefined) {
        clearTimeout(timer);
        child.stdout!.off('data', onData);
        child.stdout!.resume();
        resolveLine(found);
      }
    };
    child.stdout!.on('data', onData);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited before it was ready (code ${code}, signal ${signal})`));
    });
  });
  return { child, line };
}

/** A loopback port free right now. */
export function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolvePort(port));
    });
  });
}

/** The CPU list a process may run on (`taskset -p`), e.g. `0,1` or `0-1`. */
export function cpuAffinity(pid: number): string {
  return execFileSync('taskset', ['-cp', String(pid)], { encoding: 'utf8' })
    .trim()
    .split(':')
    .pop()!
    .trim();
}

/**
 * Pins a process and all its threads to CPUs (util-linux taskset), so benches can keep apart what
 * they compare from what drives them. `cpus` is a taskset list: `1`, `0-1`.
 */
export function pinToCpu(pid: number, cpus: number | string): void {
  execFileSync('taskset', ['-a', '-cp', String(cpus), String(pid)], { stdio: 'ignore' });
}
