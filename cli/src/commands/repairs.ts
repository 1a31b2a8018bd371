// `iw repairs request|show|preview|apply|export`: the reviewed repairs of 03 ("Reviewed repairs",
// "Evidence reads"). A repair is requested for an incident (a receipt at once; --wait follows the
// proposal until the analyzer has generated and validated it), read with its validation and
// replay run, previewed as a decision (the review in words and the fingerprint apply needs),
// applied, and exported as files whose SHA-256 are checked on disk. Request, apply and export are
// keyed writes: the same command run again after a lost answer reuses its Idempotency-Key, so the
// service answers the original receipt (`replayed: true`) instead of acting twice.

import { type Command, InvalidArgumentError, Option } from 'commander';
import { type ApiClient, ApiError, type ApiRequest } from '../api.js';
import { type CommandContext, contextOf } from '../context.js';
import { CliError } from '../errors.js';
import { renderTable } from '../output.js';
import { withExample } from '../program.js';
import { writeBundle } from './repairs/exportFiles.js';
import { decisionInWords, previewInWords, proposalInWords, requestInWords } from './repairs/format.js';
import {
  type DecisionPreview,
  type DecisionReceipt,
  type ExportReceipt,
  IN_PROGRESS,
  type Proposal,
  type ReplayRun,
  type RequestReceipt,
} from './repairs/types.js';

/** How often `--wait` reads the proposal. */
const POLL_INTERVAL_MS = 2_000;
const DEFAULT_WAIT_SECONDS = 900;

interface IntegrationOption {
  integration: string;
}

const segment = encodeURIComponent;

function connectionPath(integration: string): string {
  return `/v1/cli/connections/${segment(integration)}`;
}

/** A keyed write: the request itself is what identifies a retry of the same command. */
async function sendKeyed<T>(ctx: CommandContext, api: ApiClient, request: Omit<ApiRequest, 'idempotencyKey'>): Promise<T> {
  return ctx.keyed({ command: 'repairs', ...request }, (idempotencyKey) => api.request<T>({ ...request, idempotencyKey }));
}

interface ProposalRead {
  schemaVersion: number;
  proposal: Proposal;
}

function readProposal(api: ApiClient, workspace: string, integration: string, proposalId: string): Promise<ProposalRead> {
  return api.request<ProposalRead>({
    method: 'GET',
    path: `${connectionPath(integration)}/repair-proposals/${segment(proposalId)}`,
    workspace,
  });
}

/** The proposal's replay run, or why it is not shown (none yet, or a login without `replays:read`). */
async function readRun(api: ApiClient, workspace: string, proposal: Proposal): Promise<{ run: ReplayRun | null; note?: string }> {
  const runId = proposal.validation?.replayRunId;
  if (!runId) return { run: null, note: 'none yet' };
  try {
    const { run } = await api.request<{ run: ReplayRun }>({
      method: 'GET',
      path: `${connectionPath(proposal.connectionId)}/replay-runs/${segment(runId)}`,
      workspace,
    });
    return { run };
  } catch (error) {
    if (error instanceof ApiError && error.code === 'insufficient_scope') {
      return { run: null, note: `${runId} (not shown: this login lacks the replays:read scope)` };
    }
    throw error;
  }
}

/**
 * After apply answered `review_stale`: the retained `repair.decision` receipt when this preview was
 * applied already (operations are this user's and client's, and `approval_mismatch` comes before
 * `review_stale`, so it was this very apply, settled by an earlier run), else null.
 */
async function appliedDecision(api: ApiClient, workspace: string, operationId: string): Promise<DecisionReceipt | null> {
  try {
    const operation = await api.request<Partial<DecisionReceipt>>({
      method: 'GET',
      path: `/v1/cli/operations/${segment(operationId)}`,
      workspace,
    });
    return operation.action === 'repair.decision' && operation.status === 'completed' ? (operation as DecisionReceipt) : null;
  } catch {
    return null;
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Reads the proposal until it leaves queued/generating/validating, reporting each status on stderr. */
async function waitForProposal(
  ctx: CommandContext,
  api: ApiClient,
  workspace: string,
  integration: string,
  proposalId: string,
  timeoutSeconds: number,
): Promise<ProposalRead> {
  const deadline = Date.now() + timeoutSeconds * 1000;
  let last: string | undefined;
  for (;;) {
    const read = await readProposal(api, workspace, integration, proposalId);
    const { status } = read.proposal;
    if (!IN_PROGRESS.includes(status)) return read;
    if (status !== last) ctx.output.progress(`proposal ${proposalId} is ${status}…`);
    last = status;
    if (Date.now() >= deadline) {
      throw new CliError(
        `proposal ${proposalId} is still ${status} after ${timeoutSeconds} s: follow it with iw repairs show ${proposalId} --integration ${integration}`,
      );
    }
    await sleep(Math.min(POLL_INTERVAL_MS, Math.max(0, deadline - Date.now())));
  }
}

function positiveSeconds(value: string): number {
  const seconds = Number(value);
  if (!Number.isInteger(seconds) || seconds <= 0) throw new InvalidArgumentError('a whole number of seconds is expected.');
  return seconds;
}

function integrationOption(): Option {
  return new Option('--integration <int_id>', 'the connection (int_…) of the incident or proposal').makeOptionMandatory();
}

export function registerRepairCommands(program: Command): void {
  const repairs = program
    .command('repairs')
    .description('Reviewed repairs: request a repair of an incident, review it, decide and export it as files');
  withExample(
    repairs,
    'iw repairs request inc_01jx… --integration int_01jx… --wait',
    'iw repairs preview rp_01jx… --integration int_01jx… --decision approved --rationale "The vendor now sends these shapes."',
  );

  withExample(
    repairs
      .command('request')
      .description(
        'Request a repair proposal for an incident: the service freezes its evidence and queues the proposal for generation and validation (202 receipt)',
      )
      .argument('<incidentId>', 'the incident to repair (inc_…)')
      .addOption(integrationOption())
      .option('--dataset <datasetId>', 'an existing replay dataset (rds_…) of this incident to validate against')
      .option('--wait', 'follow the proposal until it is generated and validated (or failed), then print its final state')
      .option('--timeout <seconds>', `with --wait: give up after this many seconds (default ${DEFAULT_WAIT_SECONDS})`, positiveSeconds)
      .action(async function (
        this: Command,
        incidentId: string,
        options: IntegrationOption & { dataset?: string; wait?: boolean; timeout?: number },
      ) {
        const ctx = contextOf(this);
        const workspace = await ctx.workspace();
        const api = await ctx.api();
        const receipt = await sendKeyed<RequestReceipt>(ctx, api, {
          method: 'POST',
          path: `${connectionPath(options.integration)}/incidents/${segment(incidentId)}/repair-proposals`,
          body: options.dataset === undefined ? {} : { datasetId: options.dataset },
          workspace,
        });
        if (!options.wait) {
          ctx.output.result(receipt, () => requestInWords(receipt));
          return;
        }
        const { proposalId } = receipt.data;
        ctx.output.progress(
          `Repair proposal ${proposalId} is ${receipt.data.status}${receipt.replayed ? ' (replayed receipt)' : ''} (operation ${receipt.operationId}); waiting for it…`,
        );
        const read = await waitForProposal(ctx, api, workspace, receipt.connectionId, proposalId, options.timeout ?? DEFAULT_WAIT_SECONDS);
        const { run, note } = await readRun(api, workspace, read.proposal);
        ctx.output.result({ ...read, run }, () => proposalInWords(read.proposal, run, note));
        if (read.proposal.status === 'failed') {
          throw new CliError(`repair proposal ${proposalId} failed${read.proposal.errorCode ? `: ${read.proposal.errorCode}` : ''}`);
        }
      }),
    'iw repairs request inc_01jx… --integration int_01jx…',
    'iw repairs request inc_01jx… --integration int_01jx… --dataset rds_01jx… --wait --json',
  );

  withExample(
    repairs
      .command('show')
      .description("Show a repair proposal: its status, validation, decision and (when it has one) its validation's replay run")
      .argument('<proposalId>', 'the repair proposal (rp_…)')
      .addOption(integrationOption())
      .action(async function (this: Command, proposalId: string, options: IntegrationOption) {
        const ctx = contextOf(this);
        const workspace = await ctx.workspace();
        const api = await ctx.api();
        const read = await readProposal(api, workspace, options.integration, proposalId);
        const { run, note } = await readRun(api, workspace, read.proposal);
        ctx.output.result({ ...read, run }, () => proposalInWords(read.proposal, run, note));
      }),
    'iw repairs show rp_01jx… --integration int_01jx…',
    'iw repairs show rp_01jx… --integration int_01jx… --json | jq .proposal.status',
  );

  withExample(
    repairs
      .command('preview')
      .description(
        'Preview a decision on a proposal awaiting approval: nothing is decided yet; prints the review, its expiry, and the operation id and approval fingerprint `iw repairs apply` needs',
      )
      .argument('<proposalId>', 'the repair proposal (rp_…)')
      .addOption(integrationOption())
      .addOption(
        new Option('--decision <decision>', 'approve or reject the proposal').choices(['approved', 'rejected']).makeOptionMandatory(),
      )
      .requiredOption('--rationale <text>', 'why (10 to 1000 characters, kept with the decision)')
      .action(async function (this: Command, proposalId: string, options: IntegrationOption & { decision: string; rationale: string }) {
        const ctx = contextOf(this);
        const workspace = await ctx.workspace();
        const api = await ctx.api();
        const preview = await api.request<DecisionPreview>({
          method: 'POST',
          path: `${connectionPath(options.integration)}/repair-proposals/${segment(proposalId)}/decision-preview`,
          body: { decision: options.decision, rationale: options.rationale },
          workspace,
        });
        const workspaceFlag = ctx.options.workspace === undefined ? '' : ` --workspace ${ctx.options.workspace}`;
        ctx.output.result(preview, () => previewInWords(preview, workspaceFlag, Date.now()));
      }),
    'iw repairs preview rp_01jx… --integration int_01jx… --decision approved --rationale "The vendor now sends a string total."',
  );

  withExample(
    repairs
      .command('apply')
      .description(
        'Apply a previewed decision before it expires. Safe to repeat after a lost answer: the same command reuses its idempotency key and gets the original receipt back',
      )
      .argument('<operationId>', 'the operation id the preview printed (cliop_…)')
      .requiredOption('--fingerprint <approvalFingerprint>', 'the approval fingerprint the preview printed (sha256:…)')
      .action(async function (this: Command, operationId: string, options: { fingerprint: string }) {
        const ctx = contextOf(this);
        const workspace = await ctx.workspace();
        const api = await ctx.api();
        let receipt: DecisionReceipt;
        try {
          receipt = await sendKeyed<DecisionReceipt>(ctx, api, {
            method: 'POST',
            path: `/v1/cli/operations/${segment(operationId)}/apply`,
            body: { approvalFingerprint: options.fingerprint },
            workspace,
          });
        } catch (error) {
          const applied =
            error instanceof ApiError && error.code === 'review_stale' ? await appliedDecision(api, workspace, operationId) : null;
          if (!applied) throw error;
          ctx.output.progress(`Operation ${operationId} was applied already (by an earlier run of this command); its receipt:`);
          receipt = applied;
        }
        ctx.output.result(receipt, () => decisionInWords(receipt));
      }),
    'iw repairs apply cliop_01jx… --fingerprint sha256:4f2a...',
  );

  withExample(
    repairs
      .command('export')
      .description(
        "Export an approved, validated repair as files into <dir> (created if missing) and check each file's SHA-256 on disk. Never edits your project, opens a pull request or deploys",
      )
      .argument('<proposalId>', 'the approved repair proposal (rp_…)')
      .argument('<dir>', 'the directory to write the files into')
      .addOption(integrationOption())
      .option('--force', 'replace existing files in <dir> whose content differs')
      .action(async function (this: Command, proposalId: string, dir: string, options: IntegrationOption & { force?: boolean }) {
        const ctx = contextOf(this);
        const workspace = await ctx.workspace();
        const api = await ctx.api();
        const request = {
          method: 'POST',
          path: `${connectionPath(options.integration)}/repair-proposals/${segment(proposalId)}/export`,
          body: {},
          workspace,
        } as const;
        // The export counts as done once its files are on disk: a refused overwrite or a failed
        // write leaves the key pending, so the command run again (with --force, or elsewhere)
        // gets the same receipt back instead of exporting again.
        const { receipt, written } = await ctx.keyed({ command: 'repairs', ...request }, async (idempotencyKey) => {
          const answer = await api.request<ExportReceipt>({ ...request, idempotencyKey });
          return { receipt: answer, written: await writeBundle(dir, answer.data, { force: options.force === true }) };
        });
        ctx.output.result(receipt, () =>
          [
            `Exported repair proposal ${receipt.targetId} into ${dir} (bundle ${receipt.data.filename}, ${receipt.data.fingerprint}${receipt.replayed ? ', replayed receipt' : ''}); every file's SHA-256 matches the bundle:`,
            renderTable(
              written,
              [
                { header: 'FILE', value: (file) => file.name },
                { header: 'STATE', value: (file) => file.state },
                { header: 'SHA-256', value: (file) => file.sha256 },
              ],
              ctx.output.columns,
              ctx.output.color,
            ),
          ].join('\n'),
        );
      }),
    'iw repairs export rp_01jx… --integration int_01jx… ./repair',
    'iw repairs export rp_01jx… --integration int_01jx… ./repair --force --json',
  );
}
