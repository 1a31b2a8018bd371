import { createHash } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BootstrapResult } from '../management/admin/bootstrap.js';
import { type AnswerProxy, startAnswerProxy } from './helpers/answerProxy.js';
import { bootstrapWorkspace, callWithKey, createTestContext, type TestContext } from './helpers/context.js';
import { createCollector, sendEnvelopes, type Collector } from './helpers/ingest.js';
import { type IwEnv, type IwResult, loginIw, runIw } from './helpers/iw.js';
import { type SpawnedProcess, spawnProcess } from './helpers/processes.js';
import { waitFor } from './helpers/wait.js';
import { DRIFTED_ORDERS, ORDERS_DOCUMENT, driftedOrderEnvelopes } from './helpers/ordersDrift.js';

// Issue 30, `iw repairs request|show|preview|apply|export`: the built binary against the running
// processes (the compiled edge, management plane and analyzer, as in test/repairJourney.test.ts).
// Drifted envelopes open an incident; `iw` requests a repair and waits for the analyzer to generate
// and validate it, shows it, previews and applies the decision (a wrong fingerprint refused, a lost
// answer recovered by running the same command again), and exports the bundle as files whose
// SHA-256 are checked on disk. The CLI talks to the plane through a proxy of the test's own
// (test/helpers/answerProxy.ts) that can lose or change one answer.

const SCOPES = ['incidents:read', 'repairs:read', 'repairs:create', 'repairs:approve', 'repairs:export', 'replays:read'];
const FINGERPRINT = /^sha256:[0-9a-f]{64}$/;
const WRONG_FINGERPRINT = `sha256:${'0'.repeat(64)}`;

let ctx: TestContext;
let edge: SpawnedProcess;
let management: SpawnedProcess;
let analyzer: SpawnedProcess;
let proxy: AnswerProxy;
let owner: BootstrapResult;
let collector: Collector;
let iw: IwEnv;
let incidentId: string;
const dirs: string[] = [];

async function iwRun(args: string[], timeoutMs?: number): Promise<IwResult> {
  return runIw(args, iw, { timeoutMs });
}

/** Runs `iw args… --json`, expects `code`, and returns stdout parsed. */
async function iwJson<T = Record<string, unknown>>(args: string[], code = 0, timeoutMs?: number): Promise<T> {
  const result = await iwRun([...args, '--json'], timeoutMs);
  expect(result.code, `iw ${args.join(' ')}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`).toBe(code);
  return JSON.parse(result.stdout) as T;
}

async function newDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'iw-export-'));
  dirs.push(dir);
  return dir;
}

const sha256 = (bytes: Buffer | string) => createHash('sha256').update(bytes).digest('hex');

interface Proposal {
  id: string;
  status: string;
  validation: { replayRunId: string; replayPassed: boolean; valid: boolean } | null;
  decision: { status: string; approvalRecordId: string } | null;
}

interface Bundle {
  marker: string;
  filename: string;
  files: { name: string; mediaType: string; sha256: string; content: string }[];
}

beforeAll(async () => {
  ctx = await createTestContext();
  edge = await spawnProcess('dist/ingest/main.js', 'INGEST_PORT');
  management = await spawnProcess('dist/management/main.js', 'MANAGEMENT_PORT');
  analyzer = await spawnProcess('dist/analyzer/main.js', 'ANALYZER_PORT', {
    ANALYZER_ROUND_INTERVAL_MS: '20',
    ANALYZER_REANALYSIS_POLL_MS: '50',
  });
  proxy = await startAnswerProxy(management.url);
  owner = await bootstrapWorkspace(ctx);
  collector = await createCollector(ctx, owner.apiKey.key, { mode: 'live' });
  iw = await loginIw(proxy.url, owner.sessionToken, { scopes: SCOPES });
  iw.env.IW_WORKSPACE = owner.workspace.slug;

  const contracts = `/v1/integrations/${collector.connectionId}/contracts`;
  const v1 = await callWithKey(ctx, owner.apiKey.key, 'POST', contracts, {
    body: { declaredVersion: '1', format: 'openapi', document: ORDERS_DOCUMENT },
  });
  expect(v1.statusCode, v1.body).toBe(201);
  const activated = await callWithKey(ctx, owner.apiKey.key, 'POST', `${contracts}/${v1.json().contract.id}/activate`, {
    body: { expectedActiveContractVersionId: null, reason: 'promote' },
  });
  expect(activated.statusCode, activated.body).toBe(200);

  const sent = await sendEnvelopes({ url: edge.url, clock: ctx.deps.clock }, collector, driftedOrderEnvelopes(collector));
  expect(sent.status, sent.text).toBe(202);
  incidentId = await waitFor(
    async () => {
      const { rows } = await ctx.deps.pool.query<{ id: string; affected_records: string }>(
        "SELECT id, affected_records FROM incidents WHERE connection_id = $1 AND kind = 'schema-drift' AND status = 'open'",
        [collector.connectionId],
      );
      return rows[0] && Number(rows[0].affected_records) === DRIFTED_ORDERS.length ? rows[0].id : undefined;
    },
    30_000,
    'the schema-drift incident with every drifted observation',
  );
}, 120_000);

afterAll(async () => {
  await proxy?.close();
  await Promise.all([edge?.stop(), management?.stop(), analyzer?.stop()]);
  await ctx?.close();
  await Promise.all([...dirs, ...(iw ? [iw.configDir] : [])].map((dir) => rm(dir, { recursive: true, force: true })));
});

describe('iw repairs', () => {
  let proposalId: string;
  let preview: { operationId: string; approvalFingerprint: string };
  let approvalRecordId: string;
  /** The directory and bundle of the first export (03 Limits: 5 exports per actor and minute, so the tests share them). */
  let exportDir: string;
  let exported: Bundle;

  it('every repairs command has an example and names its flags in --help', async () => {
    const flags: Record<string, string[]> = {
      request: ['--integration', '--dataset', '--wait', '--timeout'],
      show: ['--integration'],
      preview: ['--integration', '--decision', '--rationale'],
      apply: ['--fingerprint'],
      export: ['--integration', '--force'],
    };
    for (const [command, names] of Object.entries(flags)) {
      const help = await iwRun(['repairs', command, '--help']);
      expect(help.code, help.stderr).toBe(0);
      expect(help.stdout).toContain('Example:\n  $ iw repairs ');
      for (const name of names) expect(help.stdout, `${command} --help`).toContain(name);
    }
  });

  it('refuses a repair of an unknown incident with its code, its recovery and exit 1', async () => {
    const result = await iwRun(['repairs', 'request', 'inc_00000000000000000000000000', '--integration', collector.connectionId]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('incident_not_found');
    expect(result.stderr).toContain('check the exact workspace, connection and id');
    expect(result.stdout).toBe('');
  });

  it('request --wait: queues the proposal, follows it through generation and validation, prints its final state', async () => {
    const result = await iwRun(['repairs', 'request', incidentId, '--integration', collector.connectionId, '--wait', '--json'], 120_000);
    expect(result.code, result.stderr).toBe(0);
    const read = JSON.parse(result.stdout) as {
      schemaVersion: number;
      proposal: Proposal & { incidentId: string };
      run: { id: string; status: string };
    };
    expect(read.schemaVersion).toBe(1);
    expect(read.run).toMatchObject({ id: read.proposal.validation?.replayRunId, status: 'passed' });
    expect(read.proposal).toMatchObject({ incidentId, status: 'awaiting_approval', validation: { valid: true, replayPassed: true } });
    proposalId = read.proposal.id;
    // The receipt went to stderr, with the operation and the queued status.
    expect(result.stderr).toMatch(new RegExp(`Repair proposal ${proposalId} is queued.*operation cliop_`));
    const { rows } = await ctx.deps.pool.query<{ id: string; status: string }>(
      'SELECT id, status FROM repair_proposals WHERE incident_id = $1',
      [incidentId],
    );
    expect(rows).toEqual([{ id: proposalId, status: 'awaiting_approval' }]);
  }, 150_000);

  it('show: the proposal, its validation and its replay run', async () => {
    const shown = await iwJson<{ proposal: Proposal; run: { id: string; status: string } }>([
      'repairs',
      'show',
      proposalId,
      '--integration',
      collector.connectionId,
    ]);
    expect(shown.proposal).toMatchObject({ id: proposalId, status: 'awaiting_approval', decision: null });
    expect(shown.run).toMatchObject({ id: shown.proposal.validation?.replayRunId, status: 'passed' });

    const human = await iwRun(['repairs', 'show', proposalId, '--integration', collector.connectionId]);
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout).toMatch(/Status\s+awaiting_approval/);
    expect(human.stdout).toContain(`${shown.run.id} passed`);
    expect(human.stdout).toContain('the replay passed');
  });

  it('show: an unknown proposal is exit 1 with repair_proposal_not_found', async () => {
    const result = await iwRun(['repairs', 'show', 'rp_00000000000000000000000000', '--integration', collector.connectionId, '--json']);
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stdout)).toEqual({ error: 'repair_proposal_not_found' });
    expect(result.stderr).toContain('repair_proposal_not_found');
  });

  it('preview: the review in words, its expiry and what apply needs; --json is the 201 body', async () => {
    const rationale = 'The vendor now sends these shapes.';
    const human = await iwRun([
      'repairs',
      'preview',
      proposalId,
      '--integration',
      collector.connectionId,
      '--decision',
      'approved',
      '--rationale',
      rationale,
    ]);
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout).toContain(`Approve repair proposal ${proposalId}`);
    expect(human.stdout).toContain(rationale);
    expect(human.stdout).toMatch(/Replay\s+passed \(run rrun_/);
    expect(human.stdout).toMatch(/Expires\s+\d{4}-\d\d-\d\dT.*\(in about 10 minutes\)/);
    expect(human.stdout).toMatch(/iw repairs apply cliop_\S+ --fingerprint sha256:[0-9a-f]{64}/);

    preview = await iwJson([
      'repairs',
      'preview',
      proposalId,
      '--integration',
      collector.connectionId,
      '--decision',
      'approved',
      '--rationale',
      rationale,
    ]);
    expect(preview).toMatchObject({
      schemaVersion: 1,
      proposalId,
      connectionId: collector.connectionId,
      status: 'previewed',
      review: { proposalId, decision: 'approved', rationale, validation: { replayPassed: true } },
    });
    expect(preview.approvalFingerprint).toMatch(FINGERPRINT);
    expect(preview.operationId).toMatch(/^cliop_/);
  });

  it('preview: a decision outside approved|rejected is refused before any request (exit 1)', async () => {
    const before = proxy.seen.length;
    const result = await iwRun([
      'repairs',
      'preview',
      proposalId,
      '--integration',
      collector.connectionId,
      '--decision',
      'maybe',
      '--rationale',
      'x'.repeat(12),
    ]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("argument 'maybe' is invalid");
    expect(proxy.seen.length).toBe(before);
  });

  it('apply with a wrong fingerprint: exit 1, approval_mismatch and its recovery, nothing decided', async () => {
    const result = await iwRun(['repairs', 'apply', preview.operationId, '--fingerprint', WRONG_FINGERPRINT, '--json']);
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stdout)).toEqual({ error: 'approval_mismatch' });
    expect(result.stderr).toContain('approval_mismatch: apply with the approval fingerprint the preview printed');
    const { rows } = await ctx.deps.pool.query('SELECT status FROM repair_proposals WHERE id = $1', [proposalId]);
    expect(rows[0].status).toBe('awaiting_approval');
  });

  it('apply after a lost answer: the same command again reuses its key and gets the original receipt (replayed)', async () => {
    const applyPath = `/v1/cli/operations/${preview.operationId}/apply`;
    const seenBefore = proxy.seen.length;
    let lost = false;
    proxy.rule((method, path) => {
      if (method === 'POST' && path === applyPath && !lost) {
        lost = true;
        return 'lose';
      }
      return 'pass';
    });
    const args = ['repairs', 'apply', preview.operationId, '--fingerprint', preview.approvalFingerprint];
    const first = await iwRun([...args, '--json']);
    proxy.rule(() => 'pass');
    expect(lost).toBe(true);
    expect(first.code).toBe(1);
    expect(first.stderr).toContain('cannot reach');
    // The service did decide: the answer alone was lost.
    const decided = await ctx.deps.pool.query<{ id: string }>('SELECT id FROM repair_approvals WHERE proposal_id = $1', [proposalId]);
    expect(decided.rows).toHaveLength(1);

    const receipt = await iwJson<{
      action: string;
      replayed: boolean;
      operationId: string;
      data: { status: string; approvalRecordId: string };
    }>(args);
    expect(receipt).toMatchObject({
      action: 'repair.decision',
      operationId: preview.operationId,
      replayed: true,
      data: { proposalId, status: 'approved', approvalRecordId: decided.rows[0].id },
    });
    approvalRecordId = receipt.data.approvalRecordId;
    const applies = proxy.seen.slice(seenBefore).filter((seen) => seen.method === 'POST' && seen.path === applyPath);
    expect(applies).toHaveLength(2);
    expect(applies[1].idempotencyKey).toBeDefined();
    expect(applies[1].idempotencyKey).toBe(applies[0].idempotencyKey);
  });

  it('apply once more after the receipt came back: a new key, and the CLI recovers the original receipt', async () => {
    const applyPath = `/v1/cli/operations/${preview.operationId}/apply`;
    const before = proxy.seen.filter((seen) => seen.path === applyPath).map((seen) => seen.idempotencyKey);
    const again = await iwRun(['repairs', 'apply', preview.operationId, '--fingerprint', preview.approvalFingerprint]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain(`Repair proposal ${proposalId} is approved (replayed`);
    expect(again.stdout).toContain(approvalRecordId);
    expect(again.stderr).toContain('was applied already');
    const keys = proxy.seen.filter((seen) => seen.path === applyPath).map((seen) => seen.idempotencyKey);
    expect(keys).toHaveLength(before.length + 1);
    expect(before).not.toContain(keys.at(-1));

    const shown = await iwJson<{ proposal: Proposal }>(['repairs', 'show', proposalId, '--integration', collector.connectionId]);
    expect(shown.proposal.decision).toMatchObject({ status: 'approved', approvalRecordId });
  });

  it('export: writes the bundle into a new directory and every file on disk has its SHA-256', async () => {
    const dir = join(await newDir(), 'nested', 'repair');
    exportDir = dir;
    const receipt = await iwJson<{ action: string; targetId: string; data: Bundle }>([
      'repairs',
      'export',
      proposalId,
      '--integration',
      collector.connectionId,
      dir,
    ]);
    expect(receipt).toMatchObject({ action: 'repair.export', targetId: proposalId, data: { marker: 'service-repair-export/1' } });
    exported = receipt.data;
    const names = receipt.data.files.map((file) => file.name);
    expect(names).toEqual(expect.arrayContaining(['repair.json', 'REPAIR.md', 'repair.ts']));
    expect((await readdir(dir)).sort()).toEqual([...names].sort());
    for (const file of receipt.data.files) {
      const onDisk = await readFile(join(dir, file.name));
      expect(sha256(onDisk), file.name).toBe(file.sha256);
      expect(onDisk.toString('utf8'), file.name).toBe(file.content);
    }

    // The same export into the same directory: the files are there already, unchanged.
    const human = await iwRun(['repairs', 'export', proposalId, '--integration', collector.connectionId, dir]);
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout).toContain("every file's SHA-256 matches the bundle");
    expect(human.stdout).toContain(`into ${dir} `);
    for (const file of receipt.data.files)
      expect(human.stdout).toMatch(new RegExp(`^${file.name.replace(/[.]/g, '\\.')}\\s+unchanged\\s+${file.sha256}$`, 'm'));
  });

  it('export: refuses to overwrite a different file unless --force, then replaces it (same receipt)', async () => {
    const dir = exportDir;
    const target = join(dir, 'REPAIR.md');
    await writeFile(target, 'my own notes\n');

    const refused = await iwRun(['repairs', 'export', proposalId, '--integration', collector.connectionId, dir]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`refusing to overwrite ${target}`);
    expect(refused.stderr).toContain('--force');
    expect(await readFile(target, 'utf8')).toBe('my own notes\n');

    const forced = await iwJson<{ replayed: boolean; data: Bundle }>([
      'repairs',
      'export',
      proposalId,
      '--integration',
      collector.connectionId,
      dir,
      '--force',
    ]);
    // The refused run kept its key pending (its files were not written): --force finished that export.
    expect(forced.replayed).toBe(true);
    const expected = exported.files.find((file) => file.name === 'REPAIR.md');
    expect(sha256(await readFile(target))).toBe(expected?.sha256);
  });

  it('export: a file whose bytes do not have the bundle SHA-256 fails the command naming it', async () => {
    const exportPath = `/v1/cli/connections/${collector.connectionId}/repair-proposals/${proposalId}/export`;
    proxy.rule((method, path) =>
      method === 'POST' && path === exportPath
        ? {
            rewrite: (body) => {
              const data = body.data as Bundle;
              const files = data.files.map((file) =>
                file.name === 'repair.ts' ? { ...file, content: `${file.content}// changed in transit\n` } : file,
              );
              return { ...body, data: { ...data, files } };
            },
          }
        : 'pass',
    );
    const dir = await newDir();
    try {
      const result = await iwRun(['repairs', 'export', proposalId, '--integration', collector.connectionId, dir]);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(`SHA-256 mismatch after writing: ${join(dir, 'repair.ts')}`);
      expect(result.stderr).not.toContain('REPAIR.md');
    } finally {
      proxy.rule(() => 'pass');
    }
  });
});
