import { execFile } from 'node:child_process';
import { mkdtemp, readdir, realpath, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClickHouseClient } from '../shared/clickhouse/client.js';
import { sqlLiteral } from '../shared/clickhouse/escape.js';
import { spawnEdgeProcess, type EdgeProcess } from './helpers/collector.js';
import { bootstrapWorkspace, createTestContext, type TestContext } from './helpers/context.js';
import { createCollector, testClickHouse } from './helpers/ingest.js';
import { freePort } from './helpers/ports.js';
import { waitFor } from './helpers/wait.js';

// Issue 26 item 3: the collector installs as its README says, from a tarball of this repository
// (`npm pack` of collector/), into an empty project, and works there with plain `node` against
// the compiled edge; its declared types resolve for a TypeScript user.

const run = promisify(execFile);
const root = resolve(import.meta.dirname, '..');
const collectorDir = join(root, 'collector');

/** Files under `dir`, relative to it, sorted. */
async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => relative(dir, join(entry.parentPath, entry.name)))
    .sort();
}

/** What a user needs: the compiled JS and declarations of every source file, the README, the manifest. */
async function expectedPackageFiles(): Promise<string[]> {
  const sources = (await filesUnder(join(collectorDir, 'src'))).filter((file) => file.endsWith('.ts'));
  const compiled = sources.flatMap((file) => [`dist/${file.replace(/\.ts$/, '.js')}`, `dist/${file.replace(/\.ts$/, '.d.ts')}`]);
  return [...compiled, 'README.md', 'package.json'].sort();
}

const USE_SCRIPT = `
import { createCollector, observeFetch } from '@integration-watch/collector';

const env = JSON.parse(process.env.PACK_TEST);
const checks = [];
const collector = createCollector({
  endpoint: env.endpoint, integrationKey: env.integrationKey, connectionKey: env.connectionKey, ingestToken: env.ingestToken,
  direction: 'outbound', protocol: 'http-api', hashKey: 'pack-test', onConnectionCheck: (result) => checks.push(result),
});
const vendorFetch = observeFetch(collector, fetch, { routes: ['/v1/models/{model}'] });
const response = await vendorFetch(env.vendor + '/v1/models/gpt-4o');
const body = await response.json();
// observeFetch reads a clone of the body in the background: wait until it is observed.
while (collector.counters().observed + collector.counters().buildErrors + collector.counters().throttled === 0) {
  await new Promise((done) => setTimeout(done, 10));
}
// The connection check runs beside the first delivery: closing first would cancel it (a busy
// machine made that race visible), and its result is what the test reads.
while (checks.length === 0) await new Promise((done) => setTimeout(done, 10));
await collector.flush();
await collector.close(5_000);
console.log(JSON.stringify({ status: response.status, body, counters: collector.counters(), checks }));
`;

const USE_TYPES = `
import { createCollector, observeFetch, type Collector, type CollectorCounters, type Observation } from '@integration-watch/collector';

const options = {
  endpoint: 'http://127.0.0.1:9', integrationKey: 'wint_x', connectionKey: 'conn_x', ingestToken: 'token',
  direction: 'outbound', protocol: 'http-api', connectionCheck: false,
} as const;
const collector: Collector = createCollector(options);
const observation: Observation = { method: 'GET', routeTemplate: '/v1/models', statusCode: 200, durationMs: 1 };
collector.observe(observation);
const counters: CollectorCounters = collector.counters();
const observed: number = counters.observed;
const vendorFetch: (input: string) => Promise<Response> = observeFetch(collector, fetch, { routes: ['/v1/models/{model}'] });
// @ts-expect-error the declared types are read: a direction outside the union is refused
createCollector({ ...options, direction: 'sideways' });
export { observed, vendorFetch };
`;

let ctx: TestContext;
let clickhouse: ClickHouseClient;
let edge: EdgeProcess;
let vendor: Server;
let workDir: string;

beforeAll(async () => {
  ctx = await createTestContext();
  clickhouse = testClickHouse(ctx);
  edge = await spawnEdgeProcess(await freePort());
  vendor = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ id: 'gpt-4o', object: 'model', created: 1715367049, owned_by: 'system' }));
  });
  await new Promise<void>((done) => vendor.listen(0, '127.0.0.1', done));
  workDir = await realpath(await mkdtemp(join(tmpdir(), 'collector-pack-')));
}, 60_000);

afterAll(async () => {
  await edge?.stop();
  await new Promise((done) => vendor?.close(done));
  await clickhouse?.close();
  await ctx?.close();
  if (workDir) await rm(workDir, { recursive: true, force: true });
});

describe('the collector package', () => {
  it('packs exactly the compiled library, installs from the tarball into an empty project and delivers an observed fetch', async () => {
    // The suite builds first (`npm run build`); prepack's clean rebuild would rewrite collector/dist
    // under the test files running alongside, so the tarball is made from that build.
    const packed = await run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', workDir], { cwd: collectorDir });
    const [manifest] = JSON.parse(packed.stdout) as { filename: string; files: { path: string }[] }[];
    const expected = await expectedPackageFiles();
    expect(manifest.files.map((file) => file.path).sort()).toEqual(expected);

    const project = join(workDir, 'app');
    await run('mkdir', ['-p', project]);
    await writeFile(join(project, 'package.json'), JSON.stringify({ name: 'pack-check', version: '1.0.0', private: true, type: 'module' }));
    await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', join(workDir, manifest.filename)], { cwd: project });
    const installed = join(project, 'node_modules', '@integration-watch', 'collector');
    expect(await realpath(installed)).toBe(installed); // a copy, not a link back into the repository
    expect(await filesUnder(installed)).toEqual(expected);

    const boot = await bootstrapWorkspace(ctx);
    const integration = await createCollector(ctx, boot.apiKey.key, { mode: 'sandbox' });
    await writeFile(join(project, 'use.mjs'), USE_SCRIPT);
    const config = {
      endpoint: edge.url,
      vendor: `http://127.0.0.1:${(vendor.address() as AddressInfo).port}`,
      integrationKey: integration.integrationKey,
      connectionKey: integration.connectionKey,
      ingestToken: integration.ingestToken,
    };
    const used = await run(process.execPath, ['use.mjs'], { cwd: project, env: { ...process.env, PACK_TEST: JSON.stringify(config) } });
    const result = JSON.parse(used.stdout) as {
      status: number;
      body: { id: string };
      counters: Record<string, number | string>;
      checks: { ok: boolean }[];
    };
    expect(result.status).toBe(200);
    expect(result.body.id).toBe('gpt-4o');
    expect(result.checks).toEqual([expect.objectContaining({ ok: true })]);
    expect(result.counters).toMatchObject({ observed: 1, delivered: 1, rejected: 0, buildErrors: 0, dropped: 0, deliveryState: 'closed' });

    const rows = await waitFor(
      async () => {
        const answer = await clickhouse.query({
          query: `SELECT method, route_template, status_code FROM observations WHERE connection_id = ${sqlLiteral(integration.connectionId)}`,
          format: 'JSONEachRow',
        });
        const found = await answer.json<{ method: string; route_template: string; status_code: number }>();
        return found.length > 0 ? found : undefined;
      },
      20_000,
      'the observation in ClickHouse',
    );
    expect(rows).toEqual([{ method: 'GET', route_template: '/v1/models/{model}', status_code: 200 }]);

    // A TypeScript user: the installed declarations resolve and type-check (the root's typescript).
    await writeFile(join(project, 'use.ts'), USE_TYPES);
    await writeFile(
      join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          strict: true,
          noEmit: true,
          types: ['node'],
          typeRoots: [join(root, 'node_modules', '@types')],
        },
        files: ['use.ts'],
      }),
    );
    const tsc = await run(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json'], {
      cwd: project,
    }).catch((error: { stdout: string }) => ({ stdout: error.stdout, failed: true }));
    expect(tsc.stdout).toBe('');
  }, 60_000);
});
