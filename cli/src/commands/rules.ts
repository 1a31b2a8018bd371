// `iw rules list|create|update|delete` (issue 30 item 2): a connection's reconciliation rules
// (02 "Reconciliation rules", /v1/connections/{int_…}/reconciliation-rules). Every change names
// the connection revision it was made against (`expectedRevision`): `--revision` when the user
// reviewed one, else the revision the command reads just before (list for create, the rule's
// read for update and delete). Changes are keyed writes (context.ts `keyed`): the request with
// its revision is the key's identity, so a retry after a lost answer reuses the key while the
// revision is unchanged (nothing committed: the service runs it once) and gets a new one once the
// first attempt committed (the revision moved), which the service then refuses or applies to the
// same end state (a create's pair already exists, a delete's rule is gone) instead of repeating it.

import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import type { ApiClient } from '../api.js';
import { contextOf, type CommandContext } from '../context.js';
import { CliError } from '../errors.js';
import { renderTable } from '../output.js';
import { withExample } from '../program.js';
import { readPages } from './pages.js';
import { confirmOrCancel } from './prompt.js';
import { duration, formatDuration, requireId, time } from './values.js';

/** 02 Reconciliation rule. */
interface Rule {
  id: string;
  sourceEventType: string;
  expectedObjectType: string;
  maxDelayMs: number;
  enabled: boolean;
  lastEvaluatedAt: string | null;
  createdAt: string;
  updatedAt: string;
}

interface RuleContext {
  connectionId: string;
  workspaceIntegrationId: string;
  mode: string;
  revision: string;
}

interface RuleList extends RuleContext {
  rules: Rule[];
  nextCursor: string | null;
}

/** 02 Rule mutation receipt. */
interface RuleReceipt extends RuleContext {
  operationId: string;
  action: 'rule.create' | 'rule.update' | 'rule.delete';
  rule: Rule;
  replayed: boolean;
}

interface RuleOptions {
  integration: string;
  revision?: string;
  file?: string;
  sourceEvent?: string;
  expectedObject?: string;
  maxDelay?: number;
  enabled?: boolean;
  enable?: boolean;
  disable?: boolean;
  yes?: boolean;
}

const rulesPath = (connectionId: string) => `/v1/connections/${encodeURIComponent(connectionId)}/reconciliation-rules`;
const rulePath = (connectionId: string, ruleId: string) => `${rulesPath(connectionId)}/${encodeURIComponent(ruleId)}`;

const describeRule = (rule: Rule) =>
  `${rule.sourceEventType} → ${rule.expectedObjectType} within ${formatDuration(rule.maxDelayMs)}, ${rule.enabled ? 'enabled' : 'disabled'}`;

/** The definition fields a `--file` holds (the API body's members; `expectedRevision` too). */
function fileBody(file: string | undefined): Record<string, unknown> {
  if (file === undefined) return {};
  let body: unknown;
  try {
    body = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new CliError(`cannot read the rule in ${file}: ${(error as Error).message}`);
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new CliError(`${file} does not hold a JSON object`);
  return body as Record<string, unknown>;
}

/** The body's definition: the file's members, then the flags given (flags win). */
function definitionOf(options: RuleOptions): Record<string, unknown> {
  const body = fileBody(options.file);
  if (options.sourceEvent !== undefined) body.sourceEventType = options.sourceEvent;
  if (options.expectedObject !== undefined) body.expectedObjectType = options.expectedObject;
  if (options.maxDelay !== undefined) body.maxDelayMs = options.maxDelay;
  if (options.enable && options.disable) throw new CliError('--enable and --disable contradict each other');
  if (options.enabled || options.enable) body.enabled = true;
  if (options.disable) body.enabled = false;
  return body;
}

interface Target {
  ctx: CommandContext;
  api: ApiClient;
  workspace: string;
  connectionId: string;
}

async function targetOf(command: Command): Promise<Target & { options: RuleOptions }> {
  const ctx = contextOf(command);
  const options = command.opts<RuleOptions>();
  const connectionId = requireId(options.integration, 'int_', '--integration (the connection)');
  return { ctx, api: await ctx.api(), workspace: await ctx.workspace(), connectionId, options };
}

/** Sends one keyed mutation and prints its receipt. */
async function mutate(
  target: Target,
  request: { method: 'POST' | 'PATCH' | 'DELETE'; path: string; body: Record<string, unknown> },
  done: (receipt: RuleReceipt) => string,
): Promise<void> {
  const { ctx, api, workspace } = target;
  const receipt = await ctx.keyed({ command: 'rules', workspace, ...request }, (idempotencyKey) =>
    api.request<RuleReceipt>({ ...request, workspace, idempotencyKey }),
  );
  ctx.output.result(receipt, () => `${done(receipt)} Connection revision ${receipt.revision}; receipt ${receipt.operationId}.`);
}

async function listCommand(this: Command): Promise<void> {
  const { ctx, api, workspace, connectionId } = await targetOf(this);
  const list = await readPages<RuleList, 'rules'>('rules', { api, path: rulesPath(connectionId), workspace });
  ctx.output.result(list, () => {
    const table = renderTable(
      list.rules,
      [
        { header: 'ID', value: (r) => r.id },
        { header: 'SOURCE EVENT', value: (r) => r.sourceEventType },
        { header: 'EXPECTED OBJECT', value: (r) => r.expectedObjectType },
        { header: 'WITHIN', value: (r) => formatDuration(r.maxDelayMs) },
        { header: 'ENABLED', value: (r) => (r.enabled ? 'yes' : 'no') },
        { header: 'LAST EVALUATED', value: (r) => time(r.lastEvaluatedAt) },
      ],
      ctx.output.columns,
      ctx.output.color,
    );
    return `${list.connectionId} (${list.mode}), revision ${list.revision}\n${table}`;
  });
}

async function createCommand(this: Command): Promise<void> {
  const target = await targetOf(this);
  const { options, api, workspace, connectionId } = target;
  const body = definitionOf(options);
  for (const [member, flag] of [
    ['sourceEventType', '--source-event'],
    ['expectedObjectType', '--expected-object'],
    ['maxDelayMs', '--max-delay'],
  ] as const) {
    if (body[member] === undefined) throw new CliError(`a rule needs ${flag} (or ${member} in --file)`);
  }
  if (options.revision !== undefined) body.expectedRevision = options.revision;
  if (body.expectedRevision === undefined) {
    const page = await api.request<RuleList>({ method: 'GET', path: `${rulesPath(connectionId)}?limit=1`, workspace });
    body.expectedRevision = page.revision;
  }
  await mutate(target, { method: 'POST', path: rulesPath(connectionId), body }, (r) => `Created ${r.rule.id}: ${describeRule(r.rule)}.`);
}

/** The revision a change of `ruleId` is made against: `--revision`, the file's, or the rule's read now. */
async function revisionFor(target: Target, ruleId: string, given: unknown): Promise<{ revision: string; rule?: Rule }> {
  if (typeof given === 'string') return { revision: given };
  const read = await target.api.request<RuleContext & { rule: Rule }>({
    method: 'GET',
    path: rulePath(target.connectionId, ruleId),
    workspace: target.workspace,
  });
  return { revision: read.revision, rule: read.rule };
}

async function updateCommand(this: Command, ruleId: string): Promise<void> {
  const target = await targetOf(this);
  const { options, connectionId } = target;
  requireId(ruleId, 'rule_', 'the rule');
  const { expectedRevision, ...definition } = definitionOf(options);
  if (Object.keys(definition).length === 0) {
    throw new CliError('nothing to change: pass --source-event, --expected-object, --max-delay, --enable or --disable (or --file)');
  }
  const { revision } = await revisionFor(target, ruleId, options.revision ?? expectedRevision);
  const body = { expectedRevision: revision, ...definition };
  await mutate(
    target,
    { method: 'PATCH', path: rulePath(connectionId, ruleId), body },
    (r) => `Updated ${r.rule.id}: ${describeRule(r.rule)}.`,
  );
}

async function deleteCommand(this: Command, ruleId: string): Promise<void> {
  const target = await targetOf(this);
  const { options, connectionId, ctx } = target;
  requireId(ruleId, 'rule_', 'the rule');
  const { revision, rule } = await revisionFor(target, ruleId, options.revision);
  await confirmOrCancel(`Delete ${ruleId}${rule ? ` (${describeRule(rule)})` : ''} from ${connectionId}?`, options.yes);
  ctx.output.progress(`Deleting ${ruleId}…`);
  await mutate(
    target,
    { method: 'DELETE', path: rulePath(connectionId, ruleId), body: { expectedRevision: revision } },
    (r) => `Deleted ${r.rule.id} (${describeRule(r.rule)}).`,
  );
}

export function registerRuleCommands(program: Command): void {
  const rules = program
    .command('rules')
    .description("A connection's reconciliation rules: a source event must be followed by an object of the expected type in time");
  withExample(
    rules,
    'iw rules list --integration int_01jx…',
    'iw rules create --integration int_01jx… --source-event order.created --expected-object invoice --max-delay 15m',
  );
  const integration = ['--integration <int_id>', 'the connection (int_…)'] as const;
  const revision = ['--revision <revision>', 'the connection revision you reviewed (default: the current one, read first)'] as const;
  const definition = (command: Command) =>
    command
      .option('--source-event <type>', 'the event type that starts the wait (letters, digits, . _ : -)')
      .option('--expected-object <type>', 'the business object type expected after it')
      .option('--max-delay <duration>', 'how long to wait: 1s to 1d (e.g. 90s, 15m, 2h, or milliseconds)', duration)
      .option(
        '--file <path>',
        'a JSON file with the body (sourceEventType, expectedObjectType, maxDelayMs, enabled[, expectedRevision]); flags override it',
      );

  withExample(
    rules
      .command('list')
      .description('List the rules of a connection (every page) with its revision')
      .requiredOption(...integration)
      .action(listCommand),
    'iw rules list --integration int_01jx…',
  );

  withExample(
    definition(
      rules
        .command('create')
        .description('Create a rule (disabled unless --enabled)')
        .requiredOption(...integration),
    )
      .option('--enabled', 'enable it at once')
      .option(...revision)
      .action(createCommand),
    'iw rules create --integration int_01jx… --source-event order.created --expected-object invoice --max-delay 15m',
    'iw rules create --integration int_01jx… --file rule.json --json',
  );

  withExample(
    definition(
      rules
        .command('update')
        .argument('<ruleId>', 'the rule (rule_…)')
        .description('Change a rule; fields not given stay as they are')
        .requiredOption(...integration),
    )
      .option('--enable', 'enable the rule')
      .option('--disable', 'disable the rule (how a rule with incident history is retired)')
      .option(...revision)
      .action(updateCommand),
    'iw rules update rule_01jx… --integration int_01jx… --max-delay 30m',
    'iw rules update rule_01jx… --integration int_01jx… --disable --json',
  );

  withExample(
    rules
      .command('delete')
      .argument('<ruleId>', 'the rule (rule_…)')
      .description('Delete a rule after asking (a rule with incident history cannot be deleted: disable it)')
      .requiredOption(...integration)
      .option(...revision)
      .option('--yes', 'delete without asking')
      .action(deleteCommand),
    'iw rules delete rule_01jx… --integration int_01jx…',
    'iw rules delete rule_01jx… --integration int_01jx… --yes --json',
  );
}
