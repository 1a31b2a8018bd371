// `npm run demo`: the product's main job in one command, on the stack `npm start` runs.
// 1. a demo workspace and API key (created once, then reused from DEMO_STATE_FILE);
// 2. a local vendor API on loopback, whose OpenAPI document is imported and activated;
// 3. a small application instrumented with the collector calls the vendor;
// 4. the vendor drifts (a new field, a changed type) and the application calls an undocumented
//    route: the observations and the incidents the analyzer opens are printed as they happen,
//    with the commands that show them through the API.
// Addresses: DEMO_INGEST_URL / DEMO_MANAGEMENT_URL, else INGEST_PORT / MANAGEMENT_PORT on loopback.

import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createCollector, observeFetch } from '@integration-watch/collector';
import { ManagementClient } from './management.js';
import { startVendor, type Vendor } from './vendor.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const ingestUrl = process.env.DEMO_INGEST_URL ?? `http://127.0.0.1:${process.env.INGEST_PORT || 8080}`;
const managementUrl = process.env.DEMO_MANAGEMENT_URL ?? `http://127.0.0.1:${process.env.MANAGEMENT_PORT || 8081}`;
const stateFile = resolve(process.env.DEMO_STATE_FILE ?? resolve(root, '.data/demo.json'));
const DEADLINE_MS = Number(process.env.DEMO_TIMEOUT_MS || 90_000);

const say = (line = '') => process.stdout.write(`${line}\n`);
const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

async function reachable(url: string): Promise<boolean> {
  try {
    return (await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(2_000) })).ok;
  } catch {
    return false;
  }
}

/** The demo workspace's API key: the saved one while it still works, else a new bootstrap. */
async function demoApiKey(): Promise<string> {
  try {
    const saved = JSON.parse(readFileSync(stateFile, 'utf8')) as { apiKey: string };
    if ((await new ManagementClient(managementUrl, saved.apiKey).call('GET', '/v1/environments')).status === 200) {
      say(`Reusing the demo workspace (API key from ${stateFile}).`);
      return saved.apiKey;
    }
  } catch {
    // No usable state yet.
  }
  const email = `demo-${Date.now().toString(36)}@example.com`;
  const result = spawnSync(
    process.execPath,
    [resolve(root, 'dist/management/admin/cli.js'), 'bootstrap', '--email', email, '--workspace', 'Demo', '--scopes', 'all', '--json'],
    { encoding: 'utf8' },
  );
  if (result.status !== 0) throw new Error(`admin bootstrap failed: ${result.stderr || result.stdout}`);
  const apiKey = (JSON.parse(result.stdout) as { apiKey: { key: string } }).apiKey.key;
  mkdirSync(dirname(stateFile), { recursive: true });
  writeFileSync(stateFile, `${JSON.stringify({ apiKey, email })}\n`, { mode: 0o600 });
  say(`Created a demo workspace for ${email} (API key saved in ${stateFile}).`);
  return apiKey;
}

interface Observation {
  eventId: string;
  operationKey: string;
  statusCode: number;
}
interface Incident {
  id: string;
  kind: string;
  operationKey: string;
  affectedRecords: number;
  status: string;
}
interface Finding {
  kind: string;
  path: string;
  expected: string;
  observed: string;
}

async function until<T>(what: string, deadline: number, probe: () => Promise<T | undefined>): Promise<T> {
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(250);
  }
}

async function main(): Promise<void> {
  const deadline = Date.now() + DEADLINE_MS;
  if (!(await reachable(managementUrl)) || !(await reachable(ingestUrl))) {
    say(
      `The stack is not running (${managementUrl}, ${ingestUrl}). Start it with \`npm start\` in another terminal, then run \`npm run demo\` again.`,
    );
    process.exitCode = 1;
    return;
  }
  const api = new ManagementClient(managementUrl, await demoApiKey());

  const vendor: Vendor = await startVendor();
  const document = await (await fetch(`${vendor.url}/openapi.json`)).json();
  say(
    `\n1. A vendor API runs at ${vendor.url}; its OpenAPI document declares GET /v1/orders/{orderId} and GET /v1/customers/{customerId}.`,
  );

  const created = await api.expect<{
    integration: { connectionId: string };
    collectorConfiguration: { integrationKey: string; connectionKey: string; ingestToken: string };
  }>(
    201,
    'POST',
    '/v1/integrations',
    {
      mode: 'sandbox',
      name: `Demo vendor ${new Date().toISOString()}`,
      provider: 'Demo vendor',
      direction: 'outbound',
      protocol: 'http-api',
    },
    true,
  );
  const connectionId = created.integration.connectionId;
  const draft = await api.expect<{ contract: { id: string; operationCount: number } }>(
    201,
    'POST',
    `/v1/integrations/${connectionId}/contracts`,
    { declaredVersion: '2026-11-01', format: 'openapi', document },
  );
  await api.expect(200, 'POST', `/v1/integrations/${connectionId}/contracts/${draft.contract.id}/activate`, {
    expectedActiveContractVersionId: null,
    reason: 'promote',
  });
  say(
    `2. Integration ${connectionId} created; the vendor's contract (${draft.contract.operationCount} operations) is imported and active.`,
  );

  const collector = createCollector({
    endpoint: ingestUrl,
    ...created.collectorConfiguration,
    direction: 'outbound',
    protocol: 'http-api',
    flushIntervalMs: 200,
    onConnectionCheck: (result) =>
      say(`   collector connection check: ${result.ok ? 'ok' : `failed (${result.status} ${result.error ?? ''})`}`),
  });
  // The application's fetch, observed: response bodies are read from a clone, in the background.
  // (instrumentFetch observes the global fetch without a wrapper, but Node 20's fetch does not
  // publish body chunks, so it cannot see the shapes this demo is about.)
  const vendorFetch = observeFetch(collector, fetch, {
    origins: [vendor.url],
    routes: ['/v1/orders/{orderId}', '/v1/customers/{customerId}', '/v1/refunds/{refundId}'],
  });

  const seen = new Set<string>();
  const printObservations = async (expected: number) => {
    await until(`${expected} observations`, deadline, async () => {
      const { body } = await api.call<{ items: Observation[] }>('GET', `/v1/observations?integrationId=${connectionId}&limit=100`);
      for (const item of [...(body?.items ?? [])].reverse()) {
        if (seen.has(item.eventId)) continue;
        seen.add(item.eventId);
        say(`   observed ${item.operationKey.replace(/:(\d+)$/, ' → $1')}`);
      }
      return seen.size >= expected ? true : undefined;
    });
  };
  const shop = async (paths: string[]) => {
    for (const path of paths) await (await vendorFetch(vendor.url + path)).arrayBuffer();
    await until('the collector to read the bodies', deadline, async () =>
      collector.counters().pendingInspections === 0 ? true : undefined,
    );
    await collector.flush();
  };

  say('3. The application calls the vendor; the collector sends shapes, never values:');
  await shop(['/v1/orders/ord_1001', '/v1/orders/ord_1002', '/v1/customers/cus_77', '/v1/orders/missing']);
  await printObservations(4);
  await sleep(1_000);
  const quiet = await api.expect<{ items: Incident[] }>(200, 'GET', `/v1/incidents?integrationId=${connectionId}&mode=sandbox`);
  say(`   incidents so far: ${quiet.items.length} (the traffic matches the contract)`);

  say('4. The vendor drifts (orders gain `loyaltyPoints`, `total` becomes a string) and the app calls an undocumented route:');
  vendor.drift();
  await shop(['/v1/orders/ord_1003', '/v1/orders/ord_1004', '/v1/refunds/ref_9']);
  await printObservations(7);
  const incidents = await until("the analyzer's incidents", deadline, async () => {
    const { body } = await api.call<{ items: Incident[] }>('GET', `/v1/incidents?integrationId=${connectionId}&mode=sandbox`);
    const kinds = new Set((body?.items ?? []).map((incident) => incident.kind));
    return kinds.has('schema-drift') && kinds.has('unknown-operation') ? body.items : undefined;
  });
  for (const incident of incidents) {
    const { incident: detail } = await api.expect<{ incident: Incident & { findings: Finding[] } }>(
      200,
      'GET',
      `/v1/incidents/${incident.id}?mode=sandbox`,
    );
    say(`   incident ${detail.kind} on ${detail.operationKey} (${detail.affectedRecords} observations):`);
    for (const finding of detail.findings)
      say(`     ${finding.kind} ${finding.path || '(payload)'}: expected ${finding.expected}, observed ${finding.observed}`);
  }

  await collector.close(5_000);
  await vendor.close();
  const counters = collector.counters();
  say(
    `\nCollector counters: delivered ${counters.delivered}, failedBatches ${counters.failedBatches}, rejected ${counters.rejected}, dropped ${counters.dropped}.`,
  );
  say(`\nSee it through the API (the demo API key is in ${stateFile}):`);
  say(`  KEY=$(node -p "require('${stateFile}').apiKey")`);
  say(`  curl -s -H "Authorization: Bearer $KEY" "${managementUrl}/v1/observations?integrationId=${connectionId}"`);
  say(`  curl -s -H "Authorization: Bearer $KEY" "${managementUrl}/v1/incidents?integrationId=${connectionId}&mode=sandbox"`);
  say(`  curl -s -H "Authorization: Bearer $KEY" "${managementUrl}/v1/incidents/${incidents[0].id}?mode=sandbox"`);
  say(`  curl -s -H "Authorization: Bearer $KEY" "${managementUrl}/v1/connections/${connectionId}/coverage"`);
}

// Exits explicitly: a failure half-way leaves the vendor server and sockets open.
main().then(
  () => process.exit(process.exitCode ?? 0),
  (error: unknown) => {
    say(`demo failed: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  },
);
