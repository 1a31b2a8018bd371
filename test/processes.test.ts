import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';

// The three compiled processes (npm test builds dist/ first) start on free ports and answer
// their health routes against the real stores.
const PROCESSES = [
  { name: 'ingest', file: 'dist/ingest/main.js', portVar: 'INGEST_PORT', port: 18080, ready: ['redis', 'clickhouse'] },
  { name: 'management', file: 'dist/management/main.js', portVar: 'MANAGEMENT_PORT', port: 18081, ready: ['postgres', 'redis', 'clickhouse'] },
  { name: 'analyzer', file: 'dist/analyzer/main.js', portVar: 'ANALYZER_PORT', port: 18082, ready: ['postgres', 'redis', 'clickhouse'] },
] as const;

const children: ChildProcess[] = [];
afterAll(() => { for (const child of children) child.kill('SIGTERM'); });

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

describe.each(PROCESSES)('$name process', (proc) => {
  it('starts, answers /healthz, /readyz and /metrics, and stops on SIGTERM', async () => {
    expect(existsSync(proc.file)).toBe(true);
    const child = spawn(process.execPath, [proc.file], { env: { ...process.env, [proc.portVar]: String(proc.port) }, stdio: 'ignore' });
    children.push(child);
    const base = `http://127.0.0.1:${proc.port}`;
    expect((await waitFor(`${base}/healthz`)).status).toBe(200);
    const ready = await fetch(`${base}/readyz`);
    expect(ready.status).toBe(200);
    const body = await ready.json();
    for (const store of proc.ready) expect(body[store]).toBe(true);
    const metrics = await fetch(`${base}/metrics`);
    expect(metrics.status).toBe(200);
    expect(await metrics.text()).toContain('process_cpu_user_seconds_total');
    const exited = new Promise<number | null>((done) => child.on('exit', (code) => done(code)));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  });
});
