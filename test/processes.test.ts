import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../shared/config.js';
import { runningProcesses } from '../shared/processRegistry.js';
import { connectRedis, type Redis } from '../shared/redis.js';

// The three compiled processes (npm test builds dist/ first) start on free ports and answer
// their health routes against the real stores.
const PROCESSES = [
  {
    name: 'ingest',
    title: 'ingest edge',
    file: 'dist/ingest/main.js',
    portVar: 'INGEST_PORT',
    port: 18080,
    ready: ['redis', 'clickhouse'],
  },
  {
    name: 'management',
    title: 'management plane',
    file: 'dist/management/main.js',
    portVar: 'MANAGEMENT_PORT',
    port: 18081,
    ready: ['postgres', 'redis', 'clickhouse'],
  },
  {
    name: 'analyzer',
    title: 'analyzer',
    file: 'dist/analyzer/main.js',
    portVar: 'ANALYZER_PORT',
    port: 18082,
    ready: ['postgres', 'redis', 'clickhouse'],
  },
] as const;

const children: ChildProcess[] = [];
let redis: Redis;
beforeAll(async () => {
  redis = await connectRedis(loadConfig().redisUrl);
});
afterAll(() => {
  for (const child of children) child.kill('SIGTERM');
  redis.disconnect();
});

const TEST_CLOCK_WARNING = /WARNING: \w+ runs with ENABLE_TEST_CLOCK=1/;

/** Spawns a compiled process with its stdout and stderr kept in `output()`, complete once `closed` resolves. */
function spawnWithOutput(
  file: string,
  env: Record<string, string>,
): { child: ChildProcess; output: () => string; closed: Promise<number | null> } {
  const child = spawn(process.execPath, [file], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr!.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  // 'close' comes after the exit and after both streams ended: all the output has been read.
  const closed = new Promise<number | null>((done) => child.on('close', (code) => done(code)));
  return { child, output: () => output, closed };
}

const registered = async (pid: number) => (await runningProcesses(redis)).find((running) => running.pid === pid);

async function waitFor(url: string, timeoutMs = 15_000): Promise<Response> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await fetch(url);
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((done) => setTimeout(done, 100));
    }
  }
}

/** Resolves once `output()` matches `pattern` (the process writes it soon after it listens). */
async function waitForOutput(output: () => string, pattern: RegExp, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!pattern.test(output())) {
    if (Date.now() > deadline) throw new Error(`no output matching ${pattern} within ${timeoutMs} ms; got:\n${output()}`);
    await new Promise((done) => setTimeout(done, 50));
  }
}

describe.each(PROCESSES)('$name process', (proc) => {
  it('starts, prints one plain line saying it is ready at its URL, answers /healthz, /readyz and /metrics, and stops on SIGTERM', async () => {
    expect(existsSync(proc.file)).toBe(true);
    const { child, output, closed } = spawnWithOutput(proc.file, { [proc.portVar]: String(proc.port) });
    const base = `http://127.0.0.1:${proc.port}`;
    expect((await waitFor(`${base}/healthz`)).status).toBe(200);
    await waitForOutput(output, /ready at /);
    expect(output().match(/^.* ready at .*$/gm)).toEqual([`${proc.title} ready at ${base}`]);
    const ready = await fetch(`${base}/readyz`);
    expect(ready.status).toBe(200);
    const body = await ready.json();
    for (const store of proc.ready) expect(body[store]).toBe(true);
    const metrics = await fetch(`${base}/metrics`);
    expect(metrics.status).toBe(200);
    expect(await metrics.text()).toContain('process_cpu_user_seconds_total');
    child.kill('SIGTERM');
    expect(await closed).toBe(0);
  });

  it('warns at start that it honours the test clock, and reports it running with it until stopped', async () => {
    expect(process.env.ENABLE_TEST_CLOCK).toBe('1');
    const { child, output, closed } = spawnWithOutput(proc.file, { [proc.portVar]: String(proc.port) });
    expect((await waitFor(`http://127.0.0.1:${proc.port}/healthz`)).status).toBe(200);
    expect(await registered(child.pid!)).toMatchObject({ kind: proc.name, testClock: true });
    child.kill('SIGTERM');
    expect(await closed).toBe(0);
    expect(output()).toMatch(TEST_CLOCK_WARNING);
    expect(await registered(child.pid!)).toBeUndefined();
  });

  it('without ENABLE_TEST_CLOCK=1: no warning, and reported running without the test clock', async () => {
    const { child, output, closed } = spawnWithOutput(proc.file, {
      [proc.portVar]: String(proc.port),
      ENABLE_TEST_CLOCK: '0',
      LOG_LEVEL: 'info',
    });
    expect((await waitFor(`http://127.0.0.1:${proc.port}/healthz`)).status).toBe(200);
    expect(await registered(child.pid!)).toMatchObject({ kind: proc.name, testClock: false });
    child.kill('SIGTERM');
    expect(await closed).toBe(0);
    expect(output()).not.toMatch(TEST_CLOCK_WARNING);
    expect(output()).not.toContain('ENABLE_TEST_CLOCK');
  });
});

describe('management plane logs', () => {
  type Line = { level: number; reqId?: string; msg?: string; req?: { url: string } };
  const INFO = 30;
  const DEBUG = 20;

  /** Runs the management plane at `level`, sends the three probes then one other request; its request log lines as [url, msg, level]. */
  async function requestLog(level: string): Promise<Array<[string | undefined, string | undefined, number]>> {
    const port = 18081;
    const base = `http://127.0.0.1:${port}`;
    const { child, output, closed } = spawnWithOutput('dist/management/main.js', { MANAGEMENT_PORT: String(port), LOG_LEVEL: level });
    expect((await waitFor(`${base}/healthz`)).status).toBe(200);
    for (const probe of ['/healthz', '/readyz', '/metrics']) expect((await fetch(`${base}${probe}`)).status).toBe(200);
    // A request people make, after the probes: once its completion is logged, the probes' lines
    // (written before it, on the same stream) are there too.
    expect((await fetch(`${base}/v1/environments`)).status).toBe(401);
    await waitForOutput(output, /"statusCode":401[^\n]*"msg":"request completed"/);
    child.kill('SIGTERM');
    expect(await closed).toBe(0);
    const lines = output()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Line);
    const urlOf = new Map(lines.filter((line) => line.req?.url).map((line) => [line.reqId, line.req!.url]));
    return lines.filter((line) => line.reqId !== undefined).map((line) => [urlOf.get(line.reqId), line.msg, line.level]);
  }

  it('logs health probes at debug: at LOG_LEVEL=info only the other requests appear, at debug the probes too', async () => {
    const atInfo = await requestLog('info');
    expect(atInfo.filter(([, , level]) => level >= INFO)).toEqual([
      ['/v1/environments', 'incoming request', INFO],
      ['/v1/environments', 'request completed', INFO],
    ]);
    const atDebug = await requestLog('debug');
    for (const probe of ['/healthz', '/readyz', '/metrics']) {
      expect(atDebug).toContainEqual([probe, 'incoming request', DEBUG]);
      expect(atDebug).toContainEqual([probe, 'request completed', DEBUG]);
    }
    expect(atDebug.filter(([url, , level]) => url !== '/v1/environments' && level > DEBUG)).toEqual([]);
  });
});
