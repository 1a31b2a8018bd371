// Startup of the `iw` CLI (issue 30): the time from spawning `iw whoami` to its first HTTP request
// arriving at a local server that answers GET /v1/cli/me, with a file login prepared (a token that
// does not need a refresh). Three runs, each printed, then the median and the spread. Target:
// under 150 ms. Needs the built CLI (`npm run build`); no stores.
//
//   npm run bench:build && node dist/bench/iw-startup.js

import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';

const RUNS = 3;
const TARGET_MS = 150;
const IW_BIN = resolve(process.cwd(), 'cli/bin/iw.js');

let requestArrived: ((at: number) => void) | undefined;
const server = createServer((request, response) => {
  const at = performance.now();
  requestArrived?.(at);
  if (request.url === '/v1/cli/me' && request.headers.authorization === 'Bearer svc_cli_at_bench') {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ schemaVersion: 1, user: { id: 'usr_bench', name: 'Bench' }, scopes: ['service:cli:incidents:read'] }));
  } else {
    response.writeHead(401, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ error: 'unauthenticated' }));
  }
});
await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

// The platform's config directory as a user has it (env-paths resolves it, as without
// IW_CONFIG_DIR): $XDG_CONFIG_HOME/iw on Linux; elsewhere IW_CONFIG_DIR points at it.
const configHome = await mkdtemp(join(tmpdir(), 'iw-bench-'));
const configDir = join(configHome, 'iw');
const configEnv: Record<string, string> = process.platform === 'linux' ? { XDG_CONFIG_HOME: configHome } : { IW_CONFIG_DIR: configDir };
await mkdir(join(configDir, 'tokens'), { recursive: true, mode: 0o700 });
await writeFile(join(configDir, 'config.json'), JSON.stringify({ profiles: { default: { baseUrl, storage: 'file' } } }), { mode: 0o600 });
await writeFile(
  join(configDir, 'tokens', 'default.json'),
  JSON.stringify({
    baseUrl,
    accessToken: 'svc_cli_at_bench',
    refreshToken: 'svc_cli_rt_bench',
    expiresAt: Date.now() + 3600_000,
    scope: 'service:cli:incidents:read offline_access',
  }),
  { mode: 0o600 },
);

async function run(): Promise<{ firstRequestMs: number; exitMs: number; code: number | null }> {
  const arrived = new Promise<number>((done) => {
    requestArrived = done;
  });
  const start = performance.now();
  const child = spawn(process.execPath, [IW_BIN, 'whoami'], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...configEnv, NO_COLOR: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  child.stdout.resume();
  const exited = new Promise<{ at: number; code: number | null }>((done) =>
    child.once('close', (code) => done({ at: performance.now(), code })),
  );
  const first = await Promise.race([arrived, exited.then(() => Number.NaN)]);
  const end = await exited;
  if (end.code !== 0) throw new Error(`iw whoami exited ${end.code}: ${stderr}`);
  return { firstRequestMs: first - start, exitMs: end.at - start, code: end.code };
}

const firstRequest: number[] = [];
console.log(`iw whoami against ${baseUrl} (node ${process.version}, ${RUNS} runs)`);
for (let i = 1; i <= RUNS; i++) {
  const { firstRequestMs, exitMs } = await run();
  firstRequest.push(firstRequestMs);
  console.log(`run ${i}: first request after ${firstRequestMs.toFixed(1)} ms, exit after ${exitMs.toFixed(1)} ms`);
}
const sorted = [...firstRequest].sort((a, b) => a - b);
const median = sorted[Math.floor(sorted.length / 2)];
console.log(
  `spawn → first request: median ${median.toFixed(1)} ms, min ${sorted[0].toFixed(1)}, max ${sorted.at(-1)?.toFixed(1)}, spread ${(
    (sorted.at(-1) ?? 0) - sorted[0]
  ).toFixed(1)} ms; target < ${TARGET_MS} ms: ${(sorted.at(-1) ?? Infinity) < TARGET_MS ? 'met' : 'NOT met'}`,
);

server.close();
await rm(configHome, { recursive: true, force: true });
