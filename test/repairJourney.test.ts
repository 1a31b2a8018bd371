import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BootstrapResult } from '../management/admin/bootstrap.js';
import type { ReplayFixture } from '../shared/repairs/types.js';
import { cliLogin, type CliLogin } from './helpers/cliLogin.js';
import { bootstrapWorkspace, createTestContext, type TestContext } from './helpers/context.js';
import { createCollector, sendEnvelopes, type Collector } from './helpers/ingest.js';
import { applyOverlay } from './helpers/overlay.js';
import { freePort } from './helpers/ports.js';
import { type SpawnedProcess, spawnProcess } from './helpers/processes.js';
import { sampleOf } from './helpers/shapeSamples.js';
import { waitFor } from './helpers/wait.js';
import { DRIFTED_ORDERS, ORDERS_DOCUMENT, driftedOrderEnvelopes } from './helpers/ordersDrift.js';

// Issue 29, "Done means": one journey against the running processes (the compiled edge,
// management plane and analyzer). Drifted envelopes open an incident; a repair is requested with
// a CLI token, generated and validated by the analyzer, previewed, approved and exported; the
// exported repair.ts compiles with `tsc --strict` and its guard accepts every fixture; the Overlay
// applied to the registered document, registered and activated as a new version, makes
// reanalysis resolve the incident. Receipts read back after a restart of the management plane.

const execFileAsync = promisify(execFile);

const SCOPES = ['incidents:read', 'repairs:read', 'repairs:create', 'repairs:approve', 'repairs:export', 'replays:read']
  .concat(['contracts:read', 'contracts:write', 'contracts:activate'])
  .map((suffix) => `service:cli:${suffix}`);

let ctx: TestContext;
let edge: SpawnedProcess;
let management: SpawnedProcess;
let analyzer: SpawnedProcess;
let managementPort: number;
let owner: BootstrapResult;
let collector: Collector;
let cli: CliLogin;

interface Answer {
  status: number;
  body: Record<string, unknown>;
}

async function call(method: 'GET' | 'POST', path: string, body?: unknown, idempotencyKey?: string): Promise<Answer> {
  const headers: Record<string, string> = { authorization: `Bearer ${cli.accessToken}`, 'x-service-workspace': owner.workspace.slug };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (idempotencyKey !== undefined) headers['idempotency-key'] = idempotencyKey;
  const response = await fetch(`${management.url}${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

async function expectStatus(answer: Promise<Answer>, status: number): Promise<Record<string, unknown>> {
  const { status: actual, body } = await answer;
  expect(actual, JSON.stringify(body)).toBe(status);
  return body;
}

async function startManagement(): Promise<SpawnedProcess> {
  return spawnProcess(
    'dist/management/main.js',
    'MANAGEMENT_PORT',
    { CONSOLE_ORIGIN: `http://127.0.0.1:${managementPort}` },
    managementPort,
  );
}

async function openIncident(connectionId: string): Promise<{ id: string; status: string; resolution_state: string } | undefined> {
  const { rows } = await ctx.deps.pool.query<{ id: string; status: string; resolution_state: string }>(
    "SELECT id, status, resolution_state FROM incidents WHERE connection_id = $1 AND kind = 'schema-drift' ORDER BY created_at",
    [connectionId],
  );
  return rows[0];
}

beforeAll(async () => {
  ctx = await createTestContext();
  managementPort = await freePort();
  edge = await spawnProcess('dist/ingest/main.js', 'INGEST_PORT');
  management = await startManagement();
  analyzer = await spawnProcess('dist/analyzer/main.js', 'ANALYZER_PORT', {
    ANALYZER_ROUND_INTERVAL_MS: '20',
    ANALYZER_REANALYSIS_POLL_MS: '50',
  });
  owner = await bootstrapWorkspace(ctx);
  collector = await createCollector(ctx, owner.apiKey.key, { mode: 'live' });
  cli = await cliLogin(management.url, owner.sessionToken, SCOPES, { origin: management.url, db: ctx.deps.pool });
});

afterAll(async () => {
  await Promise.all([edge?.stop(), management?.stop(), analyzer?.stop()]);
  await ctx?.close();
});

describe('a reviewed repair, from drift to a resolved incident', () => {
  it('repairs the contract from the evidence and resolves the incident once the repair is applied', async () => {
    const contracts = `/v1/integrations/${collector.connectionId}/contracts`;
    const v1 = await expectStatus(call('POST', contracts, { declaredVersion: '1', format: 'openapi', document: ORDERS_DOCUMENT }), 201);
    const v1Id = (v1.contract as { id: string }).id;
    await expectStatus(call('POST', `${contracts}/${v1Id}/activate`, { expectedActiveContractVersionId: null, reason: 'promote' }), 200);

    const sent = await sendEnvelopes({ url: edge.url, clock: ctx.deps.clock }, collector, driftedOrderEnvelopes(collector));
    expect(sent.status, sent.text).toBe(202);
    const incident = await waitFor(() => openIncident(collector.connectionId), 30_000, 'the schema-drift incident');
    const base = `/v1/cli/connections/${collector.connectionId}`;
    await waitFor(
      async () => {
        const detail = await call('GET', `${base}/incidents/${incident.id}`);
        return (detail.body.incident as { affectedRecords: number }).affectedRecords === DRIFTED_ORDERS.length || undefined;
      },
      30_000,
      'every drifted observation in the incident',
    );

    // Request: a receipt at once (202), the proposal queued for the analyzer.
    const requested = await expectStatus(call('POST', `${base}/incidents/${incident.id}/repair-proposals`, {}, 'journey-request-1'), 202);
    expect(requested).toMatchObject({ schemaVersion: 1, action: 'repair.request', targetId: incident.id, status: 'completed' });
    const { proposalId, datasetId } = requested.data as { proposalId: string; datasetId: string };

    const proposal = await waitFor(
      async () => {
        const read = await expectStatus(call('GET', `${base}/repair-proposals/${proposalId}`), 200);
        const found = read.proposal as { status: string; validation: { replayRunId: string; replayPassed: boolean } | null };
        if (found.status === 'failed') throw new Error(`proposal failed: ${JSON.stringify(found)}`);
        return found.status === 'awaiting_approval' ? found : undefined;
      },
      30_000,
      'the proposal awaiting approval',
    );
    expect(proposal.validation?.replayPassed).toBe(true);
    const run = (await expectStatus(call('GET', `${base}/replay-runs/${proposal.validation?.replayRunId}`), 200)).run as Record<
      string,
      unknown
    >;
    expect(run).toMatchObject({ datasetId, status: 'passed' });
    const dataset = (await expectStatus(call('GET', `${base}/replay-datasets/${datasetId}`), 200)).dataset as Record<string, unknown>;
    expect(dataset).toMatchObject({ incidentId: incident.id, fixtureCount: DRIFTED_ORDERS.length });

    // Decision: preview, then apply with its exact fingerprint.
    const preview = await expectStatus(
      call('POST', `${base}/repair-proposals/${proposalId}/decision-preview`, {
        decision: 'approved',
        rationale: 'The vendor now sends these shapes.',
      }),
      201,
    );
    expect(preview.status).toBe('previewed');
    const decided = await expectStatus(
      call(
        'POST',
        `/v1/cli/operations/${preview.operationId}/apply`,
        { approvalFingerprint: preview.approvalFingerprint },
        'journey-apply-1',
      ),
      200,
    );
    expect(decided).toMatchObject({ action: 'repair.decision', data: { proposalId, status: 'approved' } });

    // Export: every file's SHA-256 matches its content.
    const exported = await expectStatus(call('POST', `${base}/repair-proposals/${proposalId}/export`, {}, 'journey-export-1'), 200);
    const bundle = exported.data as { marker: string; files: { name: string; sha256: string; content: string }[] };
    expect(bundle.marker).toBe('service-repair-export/1');
    for (const file of bundle.files) expect(createHash('sha256').update(file.content).digest('hex'), file.name).toBe(file.sha256);
    const fileOf = (name: string) => {
      const file = bundle.files.find((entry) => entry.name === name);
      if (!file) throw new Error(`the bundle has no ${name}`);
      return file.content;
    };

    // repair.ts compiles with tsc --strict, and its guard accepts every frozen fixture.
    const { rows } = await ctx.deps.pool.query<{ fixtures: ReplayFixture[] }>('SELECT fixtures FROM replay_datasets WHERE id = $1', [
      datasetId,
    ]);
    await expectGuardAccepts(fileOf('repair.ts'), rows[0].fixtures);

    // The Overlay, applied to the registered document, registered and activated as a new version,
    // resolves the incident by reanalysis.
    const repaired = await applyOverlay(ORDERS_DOCUMENT, fileOf('repair.overlay.yaml'));
    const v2 = await expectStatus(call('POST', contracts, { declaredVersion: '2', format: 'openapi', document: repaired }), 201);
    await expectStatus(
      call('POST', `${contracts}/${(v2.contract as { id: string }).id}/activate`, {
        expectedActiveContractVersionId: v1Id,
        reason: 'promote',
      }),
      200,
    );
    const resolved = await waitFor(
      async () => {
        const current = await openIncident(collector.connectionId);
        return current?.status === 'resolved' ? current : undefined;
      },
      30_000,
      'the incident resolved by the repaired contract',
    );
    expect(resolved.resolution_state).toBe('resolved_by_contract');

    // Receipts recover their original result after a restart of the management plane.
    await management.stop();
    management = await startManagement();
    const request = await expectStatus(call('GET', `/v1/cli/operations/${requested.operationId}`), 200);
    expect(request.data).toEqual(requested.data);
    const exportReceipt = await expectStatus(call('GET', `/v1/cli/operations/${exported.operationId}`), 200);
    expect(exportReceipt.data).toEqual(exported.data);
    const replayed = await expectStatus(call('POST', `${base}/repair-proposals/${proposalId}/export`, {}, 'journey-export-1'), 200);
    expect(replayed.data).toEqual(exported.data);
  });
});

/** Type-checks repair.ts under `tsc --strict`, then runs its guard on a value of every fixture's shape. */
async function expectGuardAccepts(source: string, fixtures: ReplayFixture[]): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'repair-ts-'));
  try {
    const file = join(dir, 'repair.ts');
    await writeFile(file, source);
    const tsc = join(process.cwd(), 'node_modules', 'typescript', 'bin', 'tsc');
    await execFileAsync(process.execPath, [tsc, '--strict', '--noEmit', '--target', 'es2022', '--module', 'nodenext', file]);
    const compiled = ts.transpileModule(source, { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } });
    const module = (await import(`data:text/javascript;base64,${Buffer.from(compiled.outputText).toString('base64')}`)) as Record<
      string,
      unknown
    >;
    const guards = Object.entries(module).filter(([name, value]) => name.startsWith('is') && typeof value === 'function');
    expect(guards.length, 'repair.ts exports a guard').toBeGreaterThan(0);
    const guard = guards[0][1] as (value: unknown) => boolean;
    for (const fixture of fixtures) expect(guard(sampleOf(fixture.shape)), fixture.observationId).toBe(true);
    expect(guard({ id: 1 }), 'the guard refuses another shape').toBe(false);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
