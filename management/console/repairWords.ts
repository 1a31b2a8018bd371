import type { ErrorCode } from '../../shared/errors/index.js';
import type { RepairChangeKind } from '../../shared/repairs/types.js';
import type { ProposalStatus } from '../repairs/repairStore.js';
import type { FormError } from './consoleForm.js';

/** A proposal's status in words (03 Repair proposal; docs/decisions/repairs.md "Proposal states"). */
export const PROPOSAL_STATUS_WORDS: Record<ProposalStatus, string> = {
  queued: 'Queued: waiting for the repair worker',
  generating: 'Being generated and validated',
  validating: 'Being validated',
  awaiting_approval: 'Awaiting approval',
  approved: 'Approved',
  rejected: 'Rejected',
  failed: 'Failed',
};

/** What a candidate's change does, in words (shared/repairs/types.ts RepairChangeKind). */
export const CHANGE_KIND_WORDS: Record<RepairChangeKind, string> = {
  property_added: 'Property added',
  type_widened: 'Type widened',
  required_relaxed: 'No longer required',
  enum_widened: 'Allowed values widened',
};

/** Why a proposal failed (its sanitised `errorCode`), in words; another code reads FAILED_UNKNOWN_WORDS. */
const FAILURE_WORDS: Partial<Record<ErrorCode, string>> = {
  execution_attempts_exhausted: 'The repair worker stopped three times before finishing. Request a new repair.',
  repair_evidence_unavailable: 'The observations of this incident already conform to the contract: there is nothing to change.',
  repair_proposal_not_patchable: 'No change within the contract subset makes every observation conform. Review the contract by hand.',
  execution_interrupted_by_rollback: 'A release rollback stopped the generation. Request a new repair.',
  replay_runner_unavailable: 'The replay could not run. Request a new repair later.',
};
export const FAILED_UNKNOWN_WORDS = 'The generation failed. Request a new repair.';

export function failureInWords(code: string | null): string {
  return (code !== null && FAILURE_WORDS[code as ErrorCode]) || FAILED_UNKNOWN_WORDS;
}

/** The codes every console form can meet beyond its route's own table (session, pause, outage). */
const SESSION_CODES: readonly FormError[] = [
  { code: 'unauthenticated' },
  { code: 'email_verification_required' },
  { code: 'mode_cutover_write_paused' },
  { code: 'service_unavailable' },
  { code: 'workspace_not_found' },
];

const RELOAD = 'Reload the page and try again.';

/** Words the four repair forms share. */
const COMMON: readonly FormError[] = [
  ...SESSION_CODES,
  { code: 'forbidden', words: `Only an owner or admin of this workspace can do this, from this page. ${RELOAD}` },
  { code: 'workspace_unavailable', words: 'This workspace is archived: restore it before deciding on repairs.' },
  { code: 'idempotency_key_required', words: `The page sent an incomplete request. ${RELOAD}` },
  { code: 'idempotency_conflict', words: `This request was already used for another change. ${RELOAD}` },
  { code: 'authorization_changed', words: 'Your role or the workspace changed since this review. Reload the page and review it again.' },
  { code: 'workload_rate_limited', words: 'Too many repair actions in this minute. Wait a minute, then try again.' },
  { code: 'connection_required', words: `The page sent an incomplete request. ${RELOAD}` },
  { code: 'connection_not_found', words: 'This connection no longer exists. Open it again from the Integrations page.' },
];

/** The repair request form of the incident page (POST …/incidents/{incidentId}/repair-proposals). */
export const REQUEST_FORM_ERRORS: readonly FormError[] = [
  ...COMMON,
  { code: 'invalid_repair_request', words: `The page sent an incomplete request. ${RELOAD}` },
  { code: 'repair_generator_unavailable', words: 'Repair generation is not enabled on this service.' },
  { code: 'incident_not_found', words: 'This incident no longer exists. Reload the page.' },
  { code: 'incident_has_no_repair_assertion', words: 'Only a schema-drift incident can be repaired by a contract change.' },
  { code: 'repair_already_pending', words: 'A repair of this incident is already in progress. Reload the page to open it.' },
  { code: 'sandbox_execution_busy', words: 'Another Sandbox repair of this account is running. Try again in half a minute.' },
  { code: 'sandbox_repair_monthly_limit', words: 'This account has used its 3 Sandbox repair validations of the month.' },
  { code: 'repair_capacity_exceeded', words: 'This workspace has 10 repairs in progress. Try again in a minute.' },
  { code: 'replay_evidence_capacity_exceeded', words: 'This incident has more than 1,000 observations: too many to replay.' },
  { code: 'repair_evidence_unavailable', words: 'The observations of this incident are no longer available, or no longer drift.' },
  { code: 'replay_evidence_unavailable', words: 'No observation of this incident had its body inspected: there is nothing to replay.' },
  { code: 'replay_dataset_not_found', words: `The evidence of this incident changed. ${RELOAD}` },
  { code: 'replay_evidence_snapshot_changed', words: `The evidence of this incident changed. ${RELOAD}` },
];

/** The decision form of the proposal page (POST …/repair-proposals/{proposalId}/decision-preview). */
export const DECISION_FORM_ERRORS: readonly FormError[] = [
  ...COMMON,
  // The radios always send a valid decision: a refused body is the rationale.
  { code: 'invalid_repair_request', field: 'rationale', words: 'Write a rationale of 10 to 1000 characters.' },
  { code: 'repair_proposal_not_found', words: 'This repair no longer exists. Reload the page.' },
  { code: 'repair_proposal_not_approvable', words: `This repair is no longer awaiting a decision. ${RELOAD}` },
];

/** The apply form of the review page (POST /workspaces/{slug}/repair-operations/{operationId}/apply). */
export const APPLY_FORM_ERRORS: readonly FormError[] = [
  ...COMMON,
  { code: 'invalid_repair_request', words: `The page sent an incomplete request. ${RELOAD}` },
  { code: 'operation_not_found', words: 'This review does not exist any more. Open the repair and review it again.' },
  { code: 'review_expired', words: 'This review is more than ten minutes old. Open the repair and review it again.' },
  { code: 'approval_mismatch', words: `This is not the review that was shown. ${RELOAD}` },
  { code: 'review_stale', words: 'The repair changed, or was decided, since this review. Open the repair and review it again.' },
];

/** The export form of the proposal page (POST …/repair-proposals/{proposalId}/export). */
export const EXPORT_FORM_ERRORS: readonly FormError[] = [
  ...COMMON,
  { code: 'invalid_repair_request', words: `The page sent an incomplete request. ${RELOAD}` },
  { code: 'repair_proposal_not_found', words: 'This repair no longer exists. Reload the page.' },
  { code: 'repair_export_not_validated', words: 'This repair has no passed validation: it cannot be downloaded.' },
  { code: 'repair_export_not_approved', words: 'Only an approved repair can be downloaded.' },
  {
    code: 'repair_export_not_available',
    words: 'The operation this repair changes is not in the connection’s active contract any more.',
  },
  {
    code: 'repair_export_fingerprint_mismatch',
    words: 'The active contract or the repair changed since the approval: request and approve a new repair.',
  },
  {
    code: 'repair_export_operation_unsupported',
    words: 'A change has no exact place in the registered document (composition or a shared definition): apply it by hand.',
  },
  {
    code: 'repair_export_sensitive_content',
    words: 'A file of the bundle would contain something shaped like a credential or an e-mail address, so it is not exported.',
  },
  { code: 'codehost_not_configured', words: 'Pull requests are not configured on this service.' },
];
