import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnStack, type SpawnedProcess } from './helpers/processes.js';

// `npm run demo` end to end: the three compiled processes on free ports (as `npm start` runs
// them), then the demo script, which must finish on its own with the incidents it promises.

describe('npm run demo', () => {
  const processes: SpawnedProcess[] = [];
  beforeAll(async () => {
    processes.push(...(await spawnStack()));
  });
  afterAll(async () => {
    await Promise.all(processes.map((proc) => proc.stop()));
  });

  async function runDemo(stateFile: string): Promise<{ code: number | null; output: string }> {
    const [ingest, management] = processes;
    const child = spawn(process.execPath, ['dist/demo/main.js'], {
      env: {
        ...process.env,
        DEMO_INGEST_URL: ingest.url,
        DEMO_MANAGEMENT_URL: management.url,
        DEMO_STATE_FILE: stateFile,
        DEMO_TIMEOUT_MS: '60000',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    const code = await new Promise<number | null>((done) => child.on('exit', done));
    return { code, output };
  }

  it('creates a workspace, watches a vendor drift, and prints the incidents and the commands to read them; a second run reuses the workspace', async () => {
    const stateFile = join(mkdtempSync(join(tmpdir(), 'demo-')), 'demo.json');
    const first = await runDemo(stateFile);
    expect(first.code, first.output).toBe(0);
    expect(first.output).toContain('Created a demo workspace');
    expect(first.output).toContain('incidents so far: 0');
    expect(first.output).toMatch(/observed GET \/v1\/orders\/\{orderId\}:response → 200/);
    expect(first.output).toMatch(/incident schema-drift on GET \/v1\/orders\/\{orderId\}:response:200/);
    expect(first.output).toContain('undeclared_field /loyaltyPoints: expected forbidden, observed integer');
    expect(first.output).toContain('type_mismatch /total: expected number, observed string');
    expect(first.output).toMatch(/incident unknown-operation on GET \/v1\/refunds\/\{refundId\}:response:200/);
    expect(first.output).toMatch(/curl -s -H "Authorization: Bearer \$KEY" ".*\/v1\/incidents\?integrationId=int_/);
    const saved = JSON.parse(readFileSync(stateFile, 'utf8')) as { apiKey: string };
    expect(saved.apiKey).toMatch(/\S{20,}/);

    const second = await runDemo(stateFile);
    expect(second.code, second.output).toBe(0);
    expect(second.output).toContain('Reusing the demo workspace');
  }, 180_000);

  it('says how to start the stack when it is not running', async () => {
    const child = spawn(process.execPath, ['dist/demo/main.js'], {
      env: { ...process.env, DEMO_INGEST_URL: 'http://127.0.0.1:9', DEMO_MANAGEMENT_URL: 'http://127.0.0.1:9' },
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    const code = await new Promise<number | null>((done) => child.on('exit', done));
    expect(code).toBe(1);
    expect(output).toContain('Start it with `npm start`');
  });
});
