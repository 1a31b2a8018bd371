import { spawn, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify as toYaml } from 'yaml';
import type { BootstrapResult } from '../management/admin/bootstrap.js';
import type { ClickHouseClient } from '../shared/clickhouse/client.js';
import { serveOnLoopback } from './helpers/cli.js';
import { bootstrapWorkspace, callWithKey, createTestContext, type TestContext } from './helpers/context.js';
import { ordersOpenApi } from './helpers/contracts.js';
import { insertIncident, type IncidentTarget } from './helpers/incidents.js';
import { createCollector, envelope, sendEnvelopes, startEdge, testClickHouse, type Collector, type Edge } from './helpers/ingest.js';
import { IW_BIN, loginIw, removeIwEnvs, runIw, type IwEnv, type IwResult } from './helpers/iw.js';

// The workspace commands of `iw` (issue 30 item 2), each run once with --json as the built
// binary, a process of its own, against the management plane served on loopback (the stores are
// real; the login is the real device grant, approved through the consent API). Exit codes as gh
// uses them: 0 done, 1 failed, 2 cancelled (a confirmation refused or impossible).

let ctx: TestContext;
let baseUrl: string;
let clickhouse: ClickHouseClient;
let edge: Edge;
let owner: BootstrapResult;
let second: BootstrapResult;
let collector: Collector;
let iw: IwEnv;
let target: IncidentTarget;

beforeAll(async () => {
  ctx = await createTestContext();
  baseUrl = await serveOnLoopback(ctx);
  clickhouse = testClickHouse(ctx);
  edge = await startEdge(ctx, clickhouse);
  owner = await bootstrapWorkspace(ctx, { workspace: 'Iw first' });
  second = await bootstrapWorkspace(ctx, { email: owner.user.email, workspace: 'Iw second' });
  collector = await createCollector(ctx, owner.apiKey.key, { mode: 'sandbox', protocol: 'http-api', name: 'Orders sync' });
  target = {
    workspaceId: owner.workspace.id,
    integrationId: collector.workspaceIntegrationId,
    connectionId: collector.connectionId,
    environmentId: collector.environmentId,
    mode: 'sandbox',
  };
  iw = await loginIw(baseUrl, owner.sessionToken);
}, 60_000);

afterAll(async () => {
  await edge?.close();
  await clickhouse?.close();
  await ctx?.close();
  await removeIwEnvs();
});

/** `iw … --json` in the first workspace (unless the arguments name one); the parsed stdout when it exits 0. */
async function iwJson<T = Record<string, unknown>>(args: string[], env: IwEnv = iw): Promise<{ result: IwResult; body: T }> {
  const withWorkspace = args.includes('-w') || args[0] === 'workspaces' || args[0] === 'use' ? args : [...args, '-w', owner.workspace.slug];
  const result = await runIw([...withWorkspace, '--json'], env);
  expect(result.code, `iw ${args.join(' ')}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`).toBe(0);
  return { result, body: JSON.parse(result.stdout) as T };
}

/** The environment of a spawned `iw`: the test's, without IW_ variables, and the login's. */
function iwProcessEnv(env: IwEnv): Record<string, string> {
  const base: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) if (value !== undefined && !name.startsWith('IW_')) base[name] = value;
  return { ...base, NO_COLOR: '1', ...env.env, IW_CONFIG_DIR: env.configDir };
}

/** util-linux `script` runs a command on a pseudo-terminal: how a person's answers reach iw's questions. */
const hasScript = spawnSync('script', ['--version']).status === 0;

/**
 * Runs `iw args…` on a terminal (`script`), typing `answer` once `question` is on the screen;
 * resolves with the exit code and what the terminal showed.
 */
function iwOnTerminal(args: string[], question: string, answer: string): Promise<{ code: number | null; screen: string }> {
  const quoted = [process.execPath, IW_BIN, ...args].map((arg) => `'${arg.replaceAll("'", "'\\''")}'`).join(' ');
  const child = spawn('script', ['-qec', quoted, '/dev/null'], { env: iwProcessEnv(iw), stdio: ['pipe', 'pipe', 'pipe'] });
  let screen = '';
  let typed = false;
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    screen += chunk;
    if (!typed && screen.includes(question)) {
      typed = true;
      child.stdin.write(answer);
    }
  });
  const killer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  return new Promise((resolve) =>
    child.once('close', (code) => {
      clearTimeout(killer);
      resolve({ code, screen });
    }),
  );
}

function tempFile(name: string, content: string): string {
  const path = join(iw.configDir, name);
  writeFileSync(path, content);
  return path;
}

describe('workspaces', () => {
  it('lists every workspace of the user with --json (the API shape, one list) and exits 0', async () => {
    const { body } = await iwJson<{ schemaVersion: number; items: { slug: string; role: string }[]; nextCursor: null }>([
      'workspaces',
      'list',
    ]);
    expect(body.schemaVersion).toBe(1);
    expect(body.nextCursor).toBeNull();
    expect(body.items.map((w) => w.slug).sort()).toEqual([owner.workspace.slug, second.workspace.slug].sort());
    expect(body.items.every((w) => w.role === 'owner')).toBe(true);
  });

  it('use saves a workspace of the user for the profile; --workspace and IW_WORKSPACE override it; an unknown slug is refused', async () => {
    const own = await loginIw(baseUrl, owner.sessionToken);
    const refused = await runIw(['use', 'no-such-workspace', '--json'], own);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('no-such-workspace is not one of your workspaces');
    // Nothing chosen yet: a workspace command says how to choose.
    const unchosen = await runIw(['integrations', 'list', '--json'], own);
    expect(unchosen.code).toBe(1);
    expect(unchosen.stderr).toContain('iw use');

    const { body } = await iwJson<{ slug: string; role: string }>(['use', owner.workspace.slug], own);
    expect(body).toMatchObject({ slug: owner.workspace.slug, role: 'owner' });
    const saved = await iwJson<{ items: { id: string }[] }>(['integrations', 'list', '-w', owner.workspace.slug], own);
    const implicit = await runIw(['integrations', 'list', '--json'], own);
    expect(implicit.code, implicit.stderr).toBe(0);
    expect(JSON.parse(implicit.stdout)).toEqual(saved.body);
    expect(saved.body.items.map((i) => i.id)).toContain(collector.workspaceIntegrationId);

    const overridden = await runIw(['integrations', 'list', '--json', '--workspace', second.workspace.slug], own);
    expect(overridden.code, overridden.stderr).toBe(0);
    expect(JSON.parse(overridden.stdout).items).toEqual([]);
    const fromEnv = await runIw(['integrations', 'list', '--json'], { ...own, env: { ...own.env, IW_WORKSPACE: second.workspace.slug } });
    expect(fromEnv.code).toBe(0);
    expect(JSON.parse(fromEnv.stdout).items).toEqual([]);
    // The list marks the workspace commands act in.
    const table = await runIw(['workspaces', 'list'], own);
    expect(table.stdout).toMatch(new RegExp(`\\*\\s+${owner.workspace.slug}`));
  });
});

describe('integrations', () => {
  it('list, show by wint_ and by int_ print the API bodies', async () => {
    const { body: list } = await iwJson<{ model: string; items: { id: string; connections: { sandbox: { connectionId: string } } }[] }>([
      'integrations',
      'list',
    ]);
    expect(list.model).toBe('canonical');
    const mine = list.items.find((i) => i.id === collector.workspaceIntegrationId);
    expect(mine?.connections.sandbox.connectionId).toBe(collector.connectionId);

    const { body: shown } = await iwJson(['integrations', 'show', collector.workspaceIntegrationId]);
    const direct = await callWithKey(ctx, owner.apiKey.key, 'GET', `/v1/integrations/${collector.workspaceIntegrationId}`);
    expect(shown).toEqual(direct.json());
    const { body: byConnection } = await iwJson(['integrations', 'show', collector.connectionId]);
    expect(byConnection).toEqual(shown);

    const { body: connections } = await iwJson<{ items: { id: string }[] }>(['integrations', 'list', '--connections']);
    expect(connections.items.map((c) => c.id)).toContain(collector.connectionId);
  });

  it('delete previews, refuses a wrong name without confirming, refuses without a terminal (2), and deletes with --confirm', async () => {
    const doomed = await createCollector(ctx, owner.apiKey.key, { mode: 'sandbox', name: 'Doomed feed' });
    const confirmed = async () =>
      (
        await ctx.deps.pool.query<{ count: number }>(
          'SELECT count(*)::int AS count FROM deletion_reviews WHERE integration_id = $1 AND completed_at IS NOT NULL',
          [doomed.workspaceIntegrationId],
        )
      ).rows[0].count;
    const stillThere = async () =>
      (await callWithKey(ctx, owner.apiKey.key, 'GET', `/v1/integrations/${doomed.workspaceIntegrationId}`)).statusCode;

    const wrong = await runIw(
      ['integrations', 'delete', doomed.workspaceIntegrationId, '--confirm', 'doomed feed', '-w', owner.workspace.slug, '--json'],
      iw,
    );
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain('Doomed feed');
    expect(wrong.stderr).toContain('not deleted');
    expect(wrong.stdout).toBe('');
    expect(await stillThere()).toBe(200);

    const unasked = await runIw(['integrations', 'delete', doomed.workspaceIntegrationId, '-w', owner.workspace.slug, '--json'], iw);
    expect(unasked.code).toBe(2);
    expect(unasked.stderr).toContain('--confirm');
    expect(await stillThere()).toBe(200);
    expect(await confirmed()).toBe(0);

    const { body, result } = await iwJson<{
      integrationDeleted: boolean;
      name: string;
      credentials: { connectionId: string; status: string }[];
    }>(['integrations', 'delete', doomed.workspaceIntegrationId, '--confirm', 'Doomed feed']);
    expect(result.stderr).toContain(doomed.connectionId);
    expect(body).toMatchObject({ integrationDeleted: true, name: 'Doomed feed', replayed: false });
    expect(body.credentials).toEqual([expect.objectContaining({ connectionId: doomed.connectionId, status: 'revoked' })]);
    expect(await stillThere()).toBe(404);
    expect(await confirmed()).toBe(1);
  });

  it.skipIf(!hasScript)('delete on a terminal asks for the name: a wrong one or Ctrl-C cancels (2), the exact one deletes', async () => {
    const doomed = await createCollector(ctx, owner.apiKey.key, { mode: 'sandbox', name: 'Typed name' });
    const args = ['integrations', 'delete', doomed.workspaceIntegrationId, '-w', owner.workspace.slug];
    const status = async () =>
      (await callWithKey(ctx, owner.apiKey.key, 'GET', `/v1/integrations/${doomed.workspaceIntegrationId}`)).statusCode;
    const question = "Type the Integration's name (Typed name) to delete it:";

    const wrong = await iwOnTerminal(args, question, 'typed name\r');
    expect(wrong.code, wrong.screen).toBe(2);
    expect(wrong.screen).toContain('not deleted');
    expect(await status()).toBe(200);
    const interrupted = await iwOnTerminal(args, question, '\u0003');
    expect(interrupted.code, interrupted.screen).toBe(2);
    expect(await status()).toBe(200);

    const typed = await iwOnTerminal(args, question, 'Typed name\r');
    expect(typed.code, typed.screen).toBe(0);
    expect(typed.screen).toContain(`Deleted "Typed name" (${doomed.workspaceIntegrationId})`);
    expect(await status()).toBe(404);
  });
});

describe('contracts', () => {
  interface ContractList {
    activeContractVersionId: string | null;
    contracts: { id: string; declaredVersion: string; lifecycleStatus: string }[];
    nextCursor: null;
  }
  interface Impact {
    contractVersionId: string;
    activeContractVersionId: string | null;
    resolves: unknown[];
    opens: unknown[];
  }
  const listOf = async () => (await iwJson<ContractList>(['contracts', 'list', '--integration', collector.connectionId])).body;

  it('imports YAML and JSON, shows the impact before activating, asks (2 without a terminal), activates and rolls back', async () => {
    const yamlFile = tempFile('orders.yaml', toYaml(ordersOpenApi(0)));
    const { body: first } = await iwJson<{ contract: { id: string; lifecycleStatus: string; importedFrom: string } }>([
      'contracts',
      'import',
      yamlFile,
      '--integration',
      collector.connectionId,
      '--declared-version',
      '1.0',
    ]);
    expect(first.contract).toMatchObject({ lifecycleStatus: 'draft', importedFrom: 'openapi-3.1' });
    const jsonFile = tempFile('orders-2.json', JSON.stringify(ordersOpenApi(2)));
    const { body: second } = await iwJson<{ contract: { id: string } }>([
      'contracts',
      'import',
      jsonFile,
      '--integration',
      collector.connectionId,
      '--declared-version',
      '2.0',
      '--direction',
      'outbound',
      '--protocol',
      'http-api',
    ]);
    const listed = await listOf();
    expect(listed.contracts.map((c) => c.id)).toEqual([second.contract.id, first.contract.id]);
    expect(listed.activeContractVersionId).toBeNull();

    // The dry run is the impact route's body; the activation prints the same counts on stderr.
    const { body: impact } = await iwJson<Impact>([
      'contracts',
      'activate',
      first.contract.id,
      '--integration',
      collector.connectionId,
      '--dry-run',
    ]);
    expect(impact).toMatchObject({ contractVersionId: first.contract.id, activeContractVersionId: null });
    expect((await listOf()).activeContractVersionId).toBeNull();

    const unasked = await runIw(
      ['contracts', 'activate', first.contract.id, '--integration', collector.connectionId, '-w', owner.workspace.slug, '--json'],
      iw,
    );
    expect(unasked.code).toBe(2);
    expect(unasked.stderr).toContain(`would resolve ${impact.resolves.length} incidents, open ${impact.opens.length}`);
    expect(unasked.stdout).toBe('');
    expect((await listOf()).activeContractVersionId).toBeNull();

    const { body: activated, result } = await iwJson<{ activeContractVersionId: string; previousActiveContractVersionId: null }>([
      'contracts',
      'activate',
      first.contract.id,
      '--integration',
      collector.connectionId,
      '--yes',
    ]);
    expect(result.stderr).toContain('would resolve');
    expect(activated).toMatchObject({ activeContractVersionId: first.contract.id, previousActiveContractVersionId: null });
    await iwJson(['contracts', 'activate', second.contract.id, '--integration', collector.connectionId, '--yes']);

    // Rollback: back to the version the active one replaced, with reason rollback.
    const { body: rolledBack } = await iwJson<{ activeContractVersionId: string; previousActiveContractVersionId: string }>([
      'contracts',
      'rollback',
      '--integration',
      collector.connectionId,
      '--yes',
    ]);
    expect(rolledBack).toMatchObject({ activeContractVersionId: first.contract.id, previousActiveContractVersionId: second.contract.id });
    const after = await listOf();
    expect(after.activeContractVersionId).toBe(first.contract.id);
    expect(after.contracts.find((c) => c.id === second.contract.id)?.lifecycleStatus).toBe('superseded');
    const { rows } = await ctx.deps.pool.query<{ reason: string }>(
      'SELECT reason FROM contract_activations WHERE connection_id = $1 ORDER BY created_at DESC LIMIT 1',
      [collector.connectionId],
    );
    expect(rows[0].reason).toBe('rollback');

    // A draft named as the rollback target is refused before any request changes anything.
    const third = await iwJson<{ contract: { id: string } }>([
      'contracts',
      'import',
      tempFile('orders-3.json', JSON.stringify(ordersOpenApi(3))),
      '--integration',
      collector.connectionId,
      '--declared-version',
      '3.0',
    ]);
    const toDraft = await runIw(
      [
        'contracts',
        'rollback',
        '--integration',
        collector.connectionId,
        '--to',
        third.body.contract.id,
        '--yes',
        '-w',
        owner.workspace.slug,
      ],
      iw,
    );
    expect(toDraft.code).toBe(1);
    expect(toDraft.stderr).toContain('is a draft');
    expect((await listOf()).activeContractVersionId).toBe(first.contract.id);
  });

  it('refuses a JSON Schema without its operation selector (1) and imports it with one', async () => {
    const queue = await createCollector(ctx, owner.apiKey.key, { mode: 'sandbox', protocol: 'queue', name: 'Orders queue' });
    const schema = tempFile('order.schema.json', JSON.stringify({ type: 'object', properties: { orderId: { type: 'string' } } }));
    const bare = await runIw(
      ['contracts', 'import', schema, '--integration', queue.connectionId, '--declared-version', '1', '-w', owner.workspace.slug],
      iw,
    );
    expect(bare.code).toBe(1);
    expect(bare.stderr).toContain('--method');
    const { body } = await iwJson<{ contract: { importedFrom: string; operationCount: number } }>([
      'contracts',
      'import',
      schema,
      '--integration',
      queue.connectionId,
      '--declared-version',
      '1',
      '--method',
      'POST',
      '--route',
      'orders.created',
      '--payload-location',
      'message',
    ]);
    expect(body.contract).toMatchObject({ importedFrom: 'json-schema', operationCount: 1 });
  });
});

describe('rules', () => {
  interface Receipt {
    action: string;
    revision: string;
    rule: { id: string; sourceEventType: string; maxDelayMs: number; enabled: boolean };
    replayed: boolean;
  }
  const rulesOf = async () =>
    (await iwJson<{ revision: string; rules: Receipt['rule'][] }>(['rules', 'list', '--integration', collector.connectionId])).body;

  it('creates (flags and --file), lists, updates and deletes (asking first) with the revision the API asks for', async () => {
    const before = await rulesOf();
    const { body: created } = await iwJson<Receipt>([
      'rules',
      'create',
      '--integration',
      collector.connectionId,
      '--source-event',
      'order.created',
      '--expected-object',
      'invoice',
      '--max-delay',
      '15m',
    ]);
    expect(created).toMatchObject({ action: 'rule.create', replayed: false });
    expect(created.rule).toMatchObject({ sourceEventType: 'order.created', maxDelayMs: 900_000, enabled: false });
    expect(created.revision).not.toBe(before.revision);

    const file = tempFile(
      'rule.json',
      JSON.stringify({ sourceEventType: 'order.paid', expectedObjectType: 'receipt', maxDelayMs: 60_000, enabled: true }),
    );
    const { body: fromFile } = await iwJson<Receipt>(['rules', 'create', '--integration', collector.connectionId, '--file', file]);
    expect(fromFile.rule).toMatchObject({ sourceEventType: 'order.paid', maxDelayMs: 60_000, enabled: true });

    const listed = await rulesOf();
    expect(listed.revision).toBe(fromFile.revision);
    expect(listed.rules.map((r) => r.id).sort()).toEqual([created.rule.id, fromFile.rule.id].sort());

    const { body: updated } = await iwJson<Receipt>([
      'rules',
      'update',
      created.rule.id,
      '--integration',
      collector.connectionId,
      '--max-delay',
      '30m',
      '--enable',
    ]);
    expect(updated).toMatchObject({ action: 'rule.update' });
    expect(updated.rule).toMatchObject({ id: created.rule.id, maxDelayMs: 1_800_000, enabled: true, sourceEventType: 'order.created' });

    // A stale --revision is the service's refusal, and changes nothing.
    const stale = await runIw(
      [
        'rules',
        'update',
        created.rule.id,
        '--integration',
        collector.connectionId,
        '--disable',
        '--revision',
        before.revision,
        '-w',
        owner.workspace.slug,
        '--json',
      ],
      iw,
    );
    expect(stale.code).toBe(1);
    expect(JSON.parse(stale.stdout)).toEqual({ error: 'connection_configuration_changed' });

    const unasked = await runIw(
      ['rules', 'delete', fromFile.rule.id, '--integration', collector.connectionId, '-w', owner.workspace.slug],
      iw,
    );
    expect(unasked.code).toBe(2);
    expect((await rulesOf()).rules).toHaveLength(2);
    const { body: deleted } = await iwJson<Receipt>([
      'rules',
      'delete',
      fromFile.rule.id,
      '--integration',
      collector.connectionId,
      '--yes',
    ]);
    expect(deleted).toMatchObject({ action: 'rule.delete', rule: { id: fromFile.rule.id } });
    expect((await rulesOf()).rules.map((r) => r.id)).toEqual([created.rule.id]);
  });
});

describe('incidents', () => {
  it('list (with --status) and show print the CLI evidence bodies', async () => {
    const open = await insertIncident(ctx, target, { createdAt: new Date(Date.now() - 60_000).toISOString(), summary: 'Orders drifted' });
    const resolved = await insertIncident(ctx, target, { createdAt: new Date(Date.now() - 120_000).toISOString(), status: 'resolved' });

    const { body: all } = await iwJson<{ schemaVersion: 1; mode: string; items: { id: string; status: string }[]; nextCursor: null }>([
      'incidents',
      'list',
      '--integration',
      collector.connectionId,
    ]);
    expect(all.mode).toBe('sandbox');
    expect(all.items.map((i) => i.id)).toEqual(expect.arrayContaining([open, resolved]));
    const { body: openOnly } = await iwJson<{ items: { id: string; status: string }[] }>([
      'incidents',
      'list',
      '--integration',
      collector.connectionId,
      '--status',
      'open',
    ]);
    expect(openOnly.items.map((i) => i.id)).toContain(open);
    expect(openOnly.items.every((i) => i.status === 'open')).toBe(true);

    const { body: shown } = await iwJson<{ incident: { id: string; findings: unknown[]; observationIds: string[] } }>([
      'incidents',
      'show',
      open,
      '--integration',
      collector.connectionId,
    ]);
    expect(shown.incident).toMatchObject({ id: open, observationIds: ['evt_1', 'evt_2', 'evt_3'] });

    const wrongForm = await runIw(['incidents', 'list', '--integration', collector.workspaceIntegrationId, '-w', owner.workspace.slug], iw);
    expect(wrongForm.code).toBe(1);
    expect(wrongForm.stderr).toContain('int_');
  });

  it('--watch prints a line for a new incident and for its resolution, one JSON object each, and exits 0 on Ctrl-C', async () => {
    const child = spawn(
      process.execPath,
      [
        IW_BIN,
        'incidents',
        'list',
        '--watch',
        '--json',
        '--interval',
        '1',
        '--integration',
        collector.connectionId,
        '-w',
        owner.workspace.slug,
      ],
      { env: iwProcessEnv(iw), stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
    const killer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    const lines = () =>
      stdout
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as { id: string; status: string });
    const until = async (what: string, probe: () => boolean) => {
      while (!probe()) {
        if (child.exitCode !== null) throw new Error(`iw exited ${child.exitCode} before ${what}\nstdout: ${stdout}\nstderr: ${stderr}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    };
    try {
      // The first read is the state changes are measured from: it prints nothing.
      await until('watching', () => stderr.includes('Watching the incidents'));
      expect(stdout).toBe('');
      const fresh = await insertIncident(ctx, target, { createdAt: new Date().toISOString(), summary: 'Totals drifted' });
      await until('the new incident', () => lines().some((line) => line.id === fresh));
      expect(lines().find((line) => line.id === fresh)).toMatchObject({ id: fresh, status: 'open', summary: 'Totals drifted' });
      await ctx.deps.pool.query(
        `UPDATE incidents SET status = 'resolved', resolution_state = 'resolved_by_contract', resolved_at = now(), updated_at = now() WHERE id = $1`,
        [fresh],
      );
      await until('the resolution', () => lines().some((line) => line.id === fresh && line.status === 'resolved'));
      expect(
        lines()
          .filter((line) => line.id === fresh)
          .map((line) => line.status),
      ).toEqual(['open', 'resolved']);
      child.kill('SIGINT');
      expect(await exited).toBe(0);
    } finally {
      clearTimeout(killer);
      child.kill('SIGKILL');
    }
  });
});

describe('observations', () => {
  it('lists the newest observations of the connection, filtered by event type, up to --limit', async () => {
    const sent = [
      envelope(collector, { eventType: 'order.created' }),
      envelope(collector, { eventType: 'order.created' }),
      envelope(collector, { eventType: 'order.refunded' }),
    ];
    const res = await sendEnvelopes(edge, collector, sent);
    expect(res.status, res.text).toBe(202);
    expect(await edge.shipped()).toBe(true);

    const { body: refunds } = await iwJson<{ items: { eventId: string; eventType: string }[]; nextCursor: string | null }>([
      'observations',
      'list',
      '--integration',
      collector.connectionId,
      '--event-type',
      'order.refunded',
      '--from',
      '1h',
    ]);
    expect(refunds.items.map((o) => o.eventId)).toEqual([sent[2].eventId]);
    expect(refunds.nextCursor).toBeNull();

    const { body: two } = await iwJson<{ items: { eventId: string }[]; nextCursor: string | null }>([
      'observations',
      'list',
      '--integration',
      collector.connectionId,
      '--limit',
      '2',
    ]);
    expect(two.items).toHaveLength(2);
    expect(two.nextCursor).not.toBeNull();
  });
});
