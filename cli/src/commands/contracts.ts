// `iw contracts list|import|activate|rollback` (issue 30 item 2) on one connection's contract
// versions (01 Contract API; `--integration` is the connection's `int_` id, as the Contract API
// names it). Activation and rollback first show the dry-run impact (GET …/contracts/{id}/impact)
// and ask before changing what the analysis compares traffic with; they bind the active version
// the impact was computed against (`expectedActiveContractVersionId`), so a change by someone
// else in between is refused (409 `active_contract_changed`) rather than overwritten.

import { readFileSync } from 'node:fs';
import { extname } from 'node:path';
import type { Command } from 'commander';
import { parse as parseYaml } from 'yaml';
import type { ApiClient } from '../api.js';
import { contextOf, type CommandContext } from '../context.js';
import { CliError, EXIT } from '../errors.js';
import { renderTable } from '../output.js';
import { withExample } from '../program.js';
import { readPages, withQuery } from './pages.js';
import { confirmOrCancel } from './prompt.js';
import { oneOf, requireId, time, timestampOrAgo } from './values.js';

/** 01 Contract version (list items; `operations` left out of the types). */
interface ContractVersion {
  id: string;
  declaredVersion: string;
  fingerprint: string;
  importedFrom: string;
  lifecycleStatus: 'draft' | 'active' | 'superseded';
  activatedAt: string | null;
  supersededAt: string | null;
  createdAt: string;
  operations: unknown[];
}

interface ContractList {
  integration: { id: string; name: string };
  activeContractVersionId: string | null;
  contracts: ContractVersion[];
  nextCursor: string | null;
}

interface Registration {
  contract: { id: string; declaredVersion: string; lifecycleStatus: string; operationCount: number; importedFrom: string };
  skipped: { pointer: string; reason: string }[];
  connectionRevision: string;
}

interface IncidentChange {
  incidentId: string;
  kind: string;
  operationKey: string;
  affectedRecords: number;
}

/** GET …/contracts/{id}/impact: what activating the version would do to the open incidents. */
interface Impact {
  contractVersionId: string;
  activeContractVersionId: string | null;
  from: string;
  to: string;
  resolves: IncidentChange[];
  continues: IncidentChange[];
  opens: { kind: string; operationKey: string; affectedRecords: number }[];
}

interface Activation {
  activationId: string;
  activeContractVersionId: string;
  previousActiveContractVersionId: string | null;
  revision: number;
}

interface ConnectionOptions {
  integration: string;
}

const contractsPath = (connectionId: string) => `/v1/integrations/${encodeURIComponent(connectionId)}/contracts`;

function connectionOf(options: ConnectionOptions): string {
  return requireId(options.integration, 'int_', '--integration (the connection)');
}

function listContracts(api: ApiClient, workspace: string, connectionId: string): Promise<ContractList> {
  return readPages<ContractList, 'contracts'>('contracts', { api, path: contractsPath(connectionId), workspace });
}

async function listCommand(this: Command): Promise<void> {
  const ctx = contextOf(this);
  const connectionId = connectionOf(this.opts<ConnectionOptions>());
  const list = await listContracts(await ctx.api(), await ctx.workspace(), connectionId);
  ctx.output.result(list, () =>
    renderTable(
      list.contracts,
      [
        { header: 'ID', value: (c) => c.id },
        { header: 'VERSION', value: (c) => c.declaredVersion },
        { header: 'STATUS', value: (c) => c.lifecycleStatus },
        { header: 'FORMAT', value: (c) => c.importedFrom },
        { header: 'OPERATIONS', value: (c) => String(c.operations.length) },
        { header: 'CREATED', value: (c) => time(c.createdAt) },
        { header: 'ACTIVATED', value: (c) => time(c.activatedAt) },
      ],
      ctx.output.columns,
      ctx.output.color,
    ),
  );
}

/** A JSON or YAML document (YAML by extension, else JSON first and YAML when that fails). */
function readDocument(file: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new CliError(`cannot read ${file}: ${(error as Error).message}`);
  }
  const yamlFile = ['.yaml', '.yml'].includes(extname(file).toLowerCase());
  let document: unknown;
  try {
    document = yamlFile ? parseYaml(text) : JSON.parse(text);
  } catch (jsonError) {
    try {
      document = parseYaml(text);
    } catch {
      throw new CliError(`${file} is neither JSON nor YAML: ${(jsonError as Error).message}`);
    }
  }
  if (typeof document !== 'object' || document === null || Array.isArray(document)) throw new CliError(`${file} does not hold an object`);
  return document as Record<string, unknown>;
}

interface ImportOptions extends ConnectionOptions {
  declaredVersion: string;
  format?: 'openapi' | 'json-schema';
  method?: string;
  route?: string;
  payloadLocation?: string;
  statusSelector: string;
  direction?: string;
  protocol?: string;
}

/** The registration body (01 Register) of a file and the command's flags. */
function registrationOf(file: string, options: ImportOptions): Record<string, unknown> {
  const document = readDocument(file);
  const format = options.format ?? ('openapi' in document || 'swagger' in document ? 'openapi' : 'json-schema');
  const body: Record<string, unknown> = { declaredVersion: options.declaredVersion, format, document };
  if (format === 'json-schema') {
    const { method, route, payloadLocation } = options;
    if (method === undefined || route === undefined || payloadLocation === undefined) {
      throw new CliError(
        'a JSON Schema contract is bound to one operation: pass --method, --route and --payload-location (and --status-selector)',
      );
    }
    body.operation = { method, routeTemplate: route, payloadLocation, statusSelector: options.statusSelector };
  }
  if ((options.direction === undefined) !== (options.protocol === undefined)) throw new CliError('--direction and --protocol go together');
  if (options.direction !== undefined) body.expectedScope = { direction: options.direction, protocol: options.protocol };
  return body;
}

async function importCommand(this: Command, file: string): Promise<void> {
  const ctx = contextOf(this);
  const options = this.opts<ImportOptions>();
  const connectionId = connectionOf(options);
  const body = registrationOf(file, options);
  const api = await ctx.api();
  const result = await api.request<Registration>({
    method: 'POST',
    path: contractsPath(connectionId),
    body,
    workspace: await ctx.workspace(),
  });
  ctx.output.result(result, () => {
    const { contract } = result;
    const lines = [
      `Registered ${contract.id}: version ${contract.declaredVersion}, ${contract.importedFrom}, ${contract.operationCount} operations, ${contract.lifecycleStatus}.`,
    ];
    if (result.skipped.length > 0) {
      lines.push(`Not imported (${result.skipped.length}):`, ...result.skipped.map((s) => `  ${s.pointer}: ${s.reason}`));
    }
    lines.push(`Activate it: iw contracts activate ${contract.id} --integration ${connectionId}`);
    return lines.join('\n');
  });
}

interface ActivateOptions extends ConnectionOptions {
  yes?: boolean;
  dryRun?: boolean;
  since?: string;
  until?: string;
}

function describeImpact(impact: Impact, verb: string): string {
  const lines = [
    `${verb} ${impact.contractVersionId} (active now: ${impact.activeContractVersionId ?? 'none'}) would resolve ${impact.resolves.length} incidents, open ${impact.opens.length}`
      + ` (${impact.continues.length} stay open), judging the traffic from ${time(impact.from)} to ${time(impact.to)}.`,
  ];
  for (const r of impact.resolves) lines.push(`  resolves ${r.incidentId} ${r.kind} ${r.operationKey} (${r.affectedRecords} records)`);
  for (const o of impact.opens) lines.push(`  opens    ${o.kind} ${o.operationKey} (${o.affectedRecords} records)`);
  return lines.join('\n');
}

/**
 * The dry-run impact, shown (stderr) and confirmed, then the activation bound to the active
 * version the impact saw. `--dry-run` prints the impact as the result and changes nothing.
 */
async function activateReviewed(
  ctx: CommandContext,
  options: ActivateOptions,
  connectionId: string,
  versionId: string,
  reason: 'promote' | 'rollback',
  expectActive?: string,
): Promise<void> {
  const api = await ctx.api();
  const workspace = await ctx.workspace();
  const path = `${contractsPath(connectionId)}/${encodeURIComponent(versionId)}`;
  const impactPath = withQuery(`${path}/impact`, { from: options.since, to: options.until });
  const impact = await api.request<Impact>({ method: 'GET', path: impactPath, workspace });
  const verb = reason === 'rollback' ? 'Rolling back to' : 'Activating';
  if (options.dryRun) {
    ctx.output.result(impact, () => describeImpact(impact, verb));
    return;
  }
  if (expectActive !== undefined && impact.activeContractVersionId !== expectActive) {
    throw new CliError(
      `the active version changed to ${impact.activeContractVersionId ?? 'none'} while this was prepared: run the command again`,
    );
  }
  ctx.output.progress(describeImpact(impact, verb));
  await confirmOrCancel(reason === 'rollback' ? `Roll back to ${versionId}?` : `Activate ${versionId}?`, options.yes);
  const result = await api.request<Activation>({
    method: 'POST',
    path: `${path}/activate`,
    body: { expectedActiveContractVersionId: impact.activeContractVersionId, reason },
    workspace,
  });
  ctx.output.result(
    result,
    () =>
      `${reason === 'rollback' ? 'Rolled back to' : 'Activated'} ${result.activeContractVersionId} on ${connectionId}`
      + ` (before: ${result.previousActiveContractVersionId ?? 'none'}); the stored traffic is being analysed again (analysis revision ${result.revision}).`,
  );
}

async function activateCommand(this: Command, versionId: string): Promise<void> {
  const options = this.opts<ActivateOptions>();
  await activateReviewed(
    contextOf(this),
    options,
    connectionOf(options),
    requireId(versionId, 'cv_', 'the contract version'),
    'promote',
  ).catch((error: CliError) => {
    if (error.code === 'contract_not_activatable') {
      throw new CliError(
        `${error.message}: only a draft can be activated; a superseded version comes back with iw contracts rollback --to ${versionId}`,
        EXIT.failure,
        error.code,
        error.body,
      );
    }
    throw error;
  });
}

interface RollbackOptions extends ActivateOptions {
  to?: string;
}

/**
 * Rollback (01 "Contract version lifecycle": a `superseded` version activated with `reason:
 * rollback`): to `--to`, else to the version the active one superseded (the latest superseded).
 */
async function rollbackCommand(this: Command): Promise<void> {
  const ctx = contextOf(this);
  const options = this.opts<RollbackOptions>();
  const connectionId = connectionOf(options);
  const list = await listContracts(await ctx.api(), await ctx.workspace(), connectionId);
  const active = list.activeContractVersionId;
  if (active === null) throw new CliError(`${connectionId} has no active contract version to roll back from`);
  let target: ContractVersion | undefined;
  if (options.to !== undefined) {
    const id = requireId(options.to, 'cv_', '--to');
    target = list.contracts.find((c) => c.id === id);
    if (!target)
      throw new CliError(
        `${id} is not a contract version of ${connectionId} (iw contracts list --integration ${connectionId})`,
        EXIT.failure,
        'contract_not_found',
      );
    if (target.lifecycleStatus !== 'superseded') {
      throw new CliError(
        target.lifecycleStatus === 'active'
          ? `${id} is already the active version`
          : `${id} is a draft, never active: activate it with iw contracts activate ${id} --integration ${connectionId}`,
      );
    }
  } else {
    target = list.contracts
      .filter((c) => c.lifecycleStatus === 'superseded')
      .sort((a, b) => (b.supersededAt ?? '').localeCompare(a.supersededAt ?? ''))[0];
    if (!target) throw new CliError(`${connectionId} has no earlier version to roll back to`);
  }
  await activateReviewed(ctx, options, connectionId, target.id, 'rollback', active);
}

export function registerContractCommands(program: Command): void {
  const contracts = program
    .command('contracts')
    .description("A connection's contract versions: import, review the impact, activate, roll back");
  withExample(
    contracts,
    'iw contracts import openapi.yaml --integration int_01jx… --declared-version 2.0',
    'iw contracts activate cv_01jx… --integration int_01jx…',
    'iw contracts rollback --integration int_01jx…',
  );
  const integration = ['--integration <int_id>', 'the connection (int_…, see iw integrations show)'] as const;

  withExample(
    contracts
      .command('list')
      .description('List the contract versions of a connection (every page), newest first')
      .requiredOption(...integration)
      .action(listCommand),
    'iw contracts list --integration int_01jx…',
  );

  withExample(
    contracts
      .command('import')
      .argument('<file>', 'an OpenAPI document, or a JSON Schema, as JSON or YAML')
      .description('Register a contract version as a draft (analysis changes only when it is activated)')
      .requiredOption(...integration)
      // Not `--version`: commander reads the root's options anywhere on the line, and the root's
      // --version prints iw's version and exits 0, so `--version 2.0` would import nothing, silently.
      .requiredOption('--declared-version <label>', "your label for this version, unique per connection (the API's declaredVersion)")
      .option(
        '--format <format>',
        'openapi or json-schema (default: openapi when the document has an openapi or swagger member)',
        oneOf('openapi', 'json-schema'),
      )
      .option('--method <verb>', 'json-schema: the operation method (queue and feed operations use POST)')
      .option('--route <template>', 'json-schema: the route template, queue or feed label')
      .option('--payload-location <where>', 'json-schema: request, response or message', oneOf('request', 'response', 'message'))
      .option('--status-selector <selector>', 'json-schema: a status code, a range such as 2XX, or default', 'default')
      .option(
        '--direction <direction>',
        "guard: refuse unless the connection's direction is this (inbound, outbound)",
        oneOf('inbound', 'outbound'),
      )
      .option(
        '--protocol <protocol>',
        "guard: refuse unless the connection's protocol is this",
        oneOf('http-api', 'http-webhook', 'scheduled-feed', 'queue'),
      )
      .action(importCommand),
    'iw contracts import openapi.yaml --integration int_01jx… --declared-version 2.0',
    'iw contracts import order.schema.json --integration int_01jx… --declared-version 3 --method POST --route orders.created --payload-location message',
  );

  const reviewOptions = (command: Command) =>
    command
      .option('--yes', 'activate without asking (the impact is still printed on stderr)')
      .option('--dry-run', 'print the impact and change nothing')
      .option(
        '--since <time>',
        'judge the traffic from this time (RFC 3339, or a duration before now such as 7d; default: the reanalysis window)',
        timestampOrAgo,
      )
      .option('--until <time>', 'judge the traffic up to this time (default: now)', timestampOrAgo);

  withExample(
    reviewOptions(
      contracts
        .command('activate')
        .argument('<versionId>', 'the draft to activate (cv_…)')
        .description('Show what activating a draft would resolve and open, ask, then activate it')
        .requiredOption(...integration),
    ).action(activateCommand),
    'iw contracts activate cv_01jx… --integration int_01jx…',
    'iw contracts activate cv_01jx… --integration int_01jx… --dry-run --json',
  );

  withExample(
    reviewOptions(
      contracts
        .command('rollback')
        .description('Show the impact, ask, then activate again an earlier version (default: the one the active version replaced)')
        .requiredOption(...integration)
        .option('--to <versionId>', 'the superseded version to go back to (cv_…)'),
    ).action(rollbackCommand),
    'iw contracts rollback --integration int_01jx…',
    'iw contracts rollback --integration int_01jx… --to cv_01jx… --yes',
  );
}
