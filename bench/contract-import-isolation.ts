// Contract import isolation (issue 25, item 1): a document of a few kilobytes whose schemas share
// sub-schemas level after level, registered on the running management plane while /healthz is
// probed every 5 ms. Prints, per run, the registration's time and status and the probes' latency
// (p50, p99, max); then the same for a 700 KB document refused by the import budget (the longest
// import a document under the body limit can cause). Three runs each. From the project root,
// with the stack up (`npm run build` first):
//   npx tsc -p bench/tsconfig.json && node dist/bench/contract-import-isolation.js

import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { bootstrap } from '../management/admin/bootstrap.js';
import { createClock } from '../shared/clock.js';
import { loadConfig } from '../shared/config.js';
import { createPool } from '../shared/db/pool.js';
import { connectRedis } from '../shared/redis.js';
import { allOfChainDocument, sharedDefinitionDocument } from '../test/helpers/sharedSchemaDocuments.js';
import { freePort } from './benchProcess.js';

const RUNS = 3;
const config = loadConfig();
const pool = createPool(config.databaseUrl);
const redis = await connectRedis(config.redisUrl);
const boot = await bootstrap(
  { config, pool, redis, clock: createClock(false, redis) },
  { email: `bench-${randomBytes(4).toString('hex')}@example.test` },
);
const port = await freePort();
const child = spawn(process.execPath, ['dist/management/main.js'], {
  env: { ...process.env, MANAGEMENT_PORT: String(port) },
  stdio: 'ignore',
});
process.on('exit', () => child.kill('SIGKILL'));
const base = `http://127.0.0.1:${port}`;
await waitHealthy();

const headers = { authorization: `Bearer ${boot.apiKey.key}`, 'content-type': 'application/json' };
for (const [label, document] of [
  ['24-level allOf chain', allOfChainDocument(24)],
  ['2,000 operations x 5,000-member definition', sharedDefinitionDocument(2_000, 5_000)],
] as const) {
  const body = JSON.stringify(document);
  console.log(`\n${label}: ${body.length} bytes`);
  for (let run = 1; run <= RUNS; run++) {
    const created = (await fetch(`${base}/v1/integrations`, {
      method: 'POST',
      headers: { ...headers, 'idempotency-key': randomBytes(8).toString('hex') },
      body: JSON.stringify({
        mode: 'sandbox',
        name: `Import bench ${run}`,
        provider: 'Bench',
        direction: 'outbound',
        protocol: 'http-api',
      }),
    }).then((res) => res.json())) as { integration: { connectionId: string } };
    const probes: number[] = [];
    let done = false;
    const probing = (async () => {
      while (!done) {
        const started = performance.now();
        await fetch(`${base}/healthz`).then((res) => res.arrayBuffer());
        probes.push(performance.now() - started);
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    })();
    const started = performance.now();
    const res = await fetch(`${base}/v1/integrations/${created.integration.connectionId}/contracts`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ declaredVersion: `run-${run}`, format: 'openapi', document }),
    });
    const answer = (await res.json()) as { reason?: string };
    const elapsed = performance.now() - started;
    done = true;
    await probing;
    probes.sort((a, b) => a - b);
    const at = (q: number) => probes[Math.min(probes.length - 1, Math.floor(q * probes.length))].toFixed(1);
    console.log(
      `run ${run}: ${res.status}${answer.reason ? ` (${answer.reason})` : ''} in ${elapsed.toFixed(0)} ms; /healthz ${probes.length} probes, p50 ${at(0.5)} ms, p99 ${at(0.99)} ms, max ${probes[probes.length - 1].toFixed(1)} ms`,
    );
  }
}
child.kill('SIGTERM');
await pool.end();
redis.disconnect();

async function waitHealthy(): Promise<void> {
  for (let i = 0; i < 300; i++) {
    if (
      await fetch(`${base}/healthz`).then(
        (res) => res.ok,
        () => false,
      )
    )
      return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('management did not answer /healthz');
}
