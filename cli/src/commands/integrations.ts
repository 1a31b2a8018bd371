// `iw integrations list|show|delete` (issue 30 item 2): the Integration inventory and detail
// (01 "Integration and connection reads", GET /v1/integrations[/{wint_…}]) and the reviewed
// deletion (docs/decisions/integrations.md "Reviewed deletion": preview, then confirmation with
// the Integration's exact name). Every request carries the workspace header (03 Reviewed repairs
// rule 5: CLI OAuth on the management routes).

import type { Command } from 'commander';
import type { ApiClient } from '../api.js';
import { contextOf } from '../context.js';
import { CliError, EXIT } from '../errors.js';
import { renderTable } from '../output.js';
import { withExample } from '../program.js';
import { readPages } from './pages.js';
import { ask, canAsk } from './prompt.js';
import { fields, requireId, time } from './values.js';

interface ConnectionSlot {
  status: 'configured' | 'not_configured';
  mode: 'sandbox' | 'live';
  environmentId: string;
  connectionId?: string;
  revision?: string;
  credentialStatus?: string;
  activeContractVersionId?: string | null;
  latestObservationAt?: string | null;
  openIncidentCount?: number;
  observationState?: string;
}

/** 01 Integration (shared workflow). */
interface Integration {
  id: string;
  name: string;
  provider: string;
  direction: string;
  protocol: string;
  createdAt: string;
  revision: string;
  connections: { sandbox: ConnectionSlot; live: ConnectionSlot };
}

/** The compatibility inventory's item: one connection (docs/decisions/integrations.md). */
interface ConnectionItem {
  id: string;
  workspaceIntegrationId: string;
  name: string;
  provider: string;
  direction: string;
  protocol: string;
  environmentId: string;
  mode: string;
  credentialStatus: string;
  activeContractVersionId: string | null;
}

interface InventoryPage<T> {
  model: 'canonical' | 'legacy';
  items: T[];
  nextCursor: string | null;
}

/** The deletion review (POST …/deletion-preview, 201). */
interface DeletionReview {
  operationId: string;
  action: string;
  status: string;
  workspaceIntegrationId: string;
  connectionId: string | null;
  expiresAt: string;
  fingerprint: string;
  snapshot: {
    integration: { id: string; name: string; provider: string; direction: string; protocol: string; revision: string };
    connections: { connectionId: string; mode: string; environmentId: string; revision: string; credentialStatus: string }[];
  };
  evidence: {
    connectionId: string;
    latestObservationAt: string | null;
    openIncidentCount: number;
    contractVersions: number;
    rules: number;
  }[];
}

interface DeletionReceipt {
  operationId: string;
  workspaceIntegrationId: string;
  name: string;
  integrationDeleted: boolean;
  credentials: { connectionId: string; mode: string; status: string }[];
  replayed: boolean;
}

const slotText = (slot: ConnectionSlot) => (slot.status === 'configured' ? `${slot.connectionId} (${slot.observationState})` : '-');

async function listIntegrations(this: Command): Promise<void> {
  const ctx = contextOf(this);
  const { connections } = this.opts<{ connections?: boolean }>();
  const read = { api: await ctx.api(), path: '/v1/integrations', workspace: await ctx.workspace() };
  const { output } = ctx;
  if (connections) {
    const page = await readPages<InventoryPage<ConnectionItem>, 'items'>('items', read);
    output.result(page, () =>
      renderTable(
        page.items,
        [
          { header: 'CONNECTION', value: (c) => c.id },
          { header: 'MODE', value: (c) => c.mode },
          { header: 'NAME', value: (c) => c.name },
          { header: 'PROVIDER', value: (c) => c.provider },
          { header: 'PROTOCOL', value: (c) => `${c.direction} ${c.protocol}` },
          { header: 'CREDENTIAL', value: (c) => c.credentialStatus },
          { header: 'INTEGRATION', value: (c) => c.workspaceIntegrationId },
        ],
        output.columns,
        output.color,
      ),
    );
    return;
  }
  const page = await readPages<InventoryPage<Integration>, 'items'>('items', { ...read, query: { view: 'canonical' } }).catch((error) => {
    if ((error as CliError).code === 'workspace_modes_unavailable') {
      throw new CliError(
        `${(error as CliError).message}; iw integrations list --connections lists this workspace's connections`,
        EXIT.failure,
        'workspace_modes_unavailable',
        (error as CliError).body,
      );
    }
    throw error;
  });
  output.result(page, () =>
    renderTable(
      page.items,
      [
        { header: 'ID', value: (i) => i.id },
        { header: 'NAME', value: (i) => i.name },
        { header: 'PROVIDER', value: (i) => i.provider },
        { header: 'PROTOCOL', value: (i) => `${i.direction} ${i.protocol}` },
        { header: 'SANDBOX', value: (i) => slotText(i.connections.sandbox) },
        { header: 'LIVE', value: (i) => slotText(i.connections.live) },
        {
          header: 'OPEN',
          value: (i) => String((i.connections.sandbox.openIncidentCount ?? 0) + (i.connections.live.openIncidentCount ?? 0)),
        },
      ],
      output.columns,
      output.color,
    ),
  );
}

/** A `wint_` id as given, or the Integration of an `int_` connection (GET /v1/connections/{id}). */
async function integrationIdOf(api: ApiClient, workspace: string, id: string): Promise<string> {
  if (id.startsWith('int_')) {
    const connection = await api.request<{ workspaceIntegrationId: string }>({
      method: 'GET',
      path: `/v1/connections/${encodeURIComponent(id)}`,
      workspace,
    });
    return connection.workspaceIntegrationId;
  }
  return requireId(id, 'wint_', 'the Integration');
}

function describeIntegration(integration: Integration): string {
  const head = fields([
    ['Integration', `${integration.name} (${integration.id})`],
    ['Provider', integration.provider],
    ['Protocol', `${integration.direction} ${integration.protocol}`],
    ['Created', time(integration.createdAt)],
    ['Revision', integration.revision],
  ]);
  const slots = [integration.connections.sandbox, integration.connections.live];
  const table = renderTable(
    slots,
    [
      { header: 'MODE', value: (s) => s.mode },
      { header: 'CONNECTION', value: (s) => s.connectionId ?? 'not configured' },
      { header: 'CREDENTIAL', value: (s) => s.credentialStatus ?? '-' },
      { header: 'ACTIVE CONTRACT', value: (s) => (s.status === 'configured' ? (s.activeContractVersionId ?? 'none') : '-') },
      { header: 'STATE', value: (s) => s.observationState ?? '-' },
      { header: 'OPEN', value: (s) => (s.openIncidentCount === undefined ? '-' : String(s.openIncidentCount)) },
      { header: 'LAST OBSERVED', value: (s) => time(s.latestObservationAt) },
    ],
    1000,
    false,
  );
  return `${head}\n\n${table}`;
}

async function showIntegration(this: Command, id: string): Promise<void> {
  const ctx = contextOf(this);
  const api = await ctx.api();
  const workspace = await ctx.workspace();
  const integrationId = await integrationIdOf(api, workspace, id);
  const body = await api.request<{ model: string; integration: Integration }>({
    method: 'GET',
    path: `/v1/integrations/${encodeURIComponent(integrationId)}`,
    workspace,
  });
  ctx.output.result(body, () => describeIntegration(body.integration));
}

/** What a deletion would take away, for the person about to confirm it (stderr). */
function describeReview(review: DeletionReview): string {
  const { integration } = review.snapshot;
  const evidence = new Map(review.evidence.map((e) => [e.connectionId, e]));
  const lines = [
    `This deletes the Integration ${JSON.stringify(integration.name)} (${integration.id}, ${integration.provider}, ${integration.direction} ${integration.protocol})`,
    review.snapshot.connections.length === 0 ? 'with no connection.' : 'and its connections, revoking their credentials:',
  ];
  for (const connection of review.snapshot.connections) {
    const e = evidence.get(connection.connectionId);
    lines.push(
      `  ${connection.connectionId} ${connection.mode}: credential ${connection.credentialStatus}`
        + (e
          ? `, ${e.openIncidentCount} open incidents, ${e.contractVersions} contract versions, ${e.rules} rules, last observed ${time(e.latestObservationAt)}`
          : ''),
    );
  }
  lines.push(`The review ${review.operationId} expires at ${time(review.expiresAt)}.`);
  return lines.join('\n');
}

/** The name the user confirms with: `--confirm`, else typed at the terminal; exactly the Integration's. */
async function confirmedName(name: string, given: string | undefined): Promise<string> {
  if (given !== undefined) {
    if (given !== name) {
      throw new CliError(
        `not deleted: --confirm ${JSON.stringify(given)} is not the Integration's exact name ${JSON.stringify(name)} (case counts)`,
        EXIT.failure,
        'confirmation_mismatch',
      );
    }
    return given;
  }
  if (!canAsk()) throw new CliError(`not deleted: there is no terminal to ask on; pass --confirm ${JSON.stringify(name)}`, EXIT.cancelled);
  const typed = await ask(`Type the Integration's name (${name}) to delete it: `);
  if (typed !== name)
    throw new CliError("not deleted: the name typed is not the Integration's exact name", EXIT.cancelled, 'confirmation_mismatch');
  return typed;
}

async function deleteIntegration(this: Command, id: string): Promise<void> {
  const ctx = contextOf(this);
  const { confirm } = this.opts<{ confirm?: string }>();
  const integrationId = requireId(id, 'wint_', 'the Integration to delete');
  const api = await ctx.api();
  const workspace = await ctx.workspace();
  const path = `/v1/integrations/${encodeURIComponent(integrationId)}`;
  const review = await api.request<DeletionReview>({ method: 'POST', path: `${path}/deletion-preview`, body: {}, workspace });
  ctx.output.progress(describeReview(review));
  const confirmName = await confirmedName(review.snapshot.integration.name, confirm);
  const body = { operationId: review.operationId, confirmName, fingerprint: review.fingerprint };
  const receipt = await ctx.keyed({ command: 'integrations delete', workspace, integrationId, ...body }, (idempotencyKey) =>
    api.request<DeletionReceipt>({ method: 'POST', path: `${path}/deletion`, body, workspace, idempotencyKey }),
  );
  ctx.output.result(receipt, () => {
    const revoked = receipt.credentials.map((c) => `${c.connectionId} (${c.mode}, credential ${c.status})`).join(', ');
    return `Deleted ${JSON.stringify(receipt.name)} (${receipt.workspaceIntegrationId})${revoked ? `: ${revoked}` : ''}. Receipt ${receipt.operationId}.`;
  });
}

export function registerIntegrationCommands(program: Command): void {
  const integrations = program.command('integrations').description("The workspace's Integrations and their Sandbox and Live connections");
  withExample(integrations, 'iw integrations list', 'iw integrations show wint_01jx…', 'iw integrations delete wint_01jx…');

  withExample(
    integrations
      .command('list')
      .description('List the Integrations of the workspace (every page) with both mode connections')
      .option('--connections', 'list connections instead (one row per int_ connection; also for legacy workspaces)')
      .action(listIntegrations),
    'iw integrations list',
    'iw integrations list --connections --json',
  );

  withExample(
    integrations
      .command('show')
      .argument('<id>', 'the Integration (wint_…), or one of its connections (int_…)')
      .description('Show an Integration: its connections, credentials, active contracts and open incidents')
      .action(showIntegration),
    'iw integrations show wint_01jx…',
    'iw integrations show int_01jx… --json',
  );

  withExample(
    integrations
      .command('delete')
      .argument('<id>', 'the Integration (wint_…)')
      .description(
        'Delete an Integration and its connections after a review: shows what goes, then asks for its exact name (its credentials are revoked)',
      )
      .option('--confirm <name>', "the Integration's exact name, to confirm without being asked (scripts)")
      .action(deleteIntegration),
    'iw integrations delete wint_01jx…',
    'iw integrations delete wint_01jx… --confirm "Orders sync" --json',
  );
}
