/**
 * Every error code of the specification (documents 01, 02, 03) plus the few that
 * 00-decisions §3 implies, each with its HTTP status, the extra body members it carries
 * and a fixed `Retry-After` where the spec names one. Bodies are `{error: code, ...extra}`.
 */
export interface ErrorSpec {
  status: number;
  /** Extra body members the spec names for this code. */
  extra?: readonly string[];
  /** Retry-After seconds that the spec fixes for this code. */
  retryAfter?: number;
  /**
   * Further statuses the spec lists this code under, each with a meaning of its own; the thrower
   * of that meaning names it (AppError's `status`) and the API reference lists the code there.
   */
  otherStatuses?: readonly number[];
}

const e = (status: number, more: Omit<ErrorSpec, 'status'> = {}): ErrorSpec => ({ status, ...more });

export const ERROR_CATALOGUE = {
  // Conventions (all documents). Node's HTTP layer answers with HTTP's own status where HTTP
  // names one: invalid_request also 408 and 417, request_too_large also 431 (docs/decisions/api-conventions.md).
  invalid_request: e(400),
  request_too_large: e(413),
  service_unavailable: e(503),
  mode_cutover_write_paused: e(503, { retryAfter: 1 }),
  unauthenticated: e(401, { extra: ['reason'] }),
  insufficient_scope: e(403),
  forbidden: e(403),
  email_verification_required: e(403),
  idempotency_key_required: e(400),
  idempotency_conflict: e(409),
  operation_not_found: e(404),
  not_found: e(404),

  // 01 Contract API
  invalid_contract: e(400, { extra: ['pointers', 'reason'] }),
  invalid_contract_query: e(400),
  invalid_contract_cursor: e(400),
  invalid_contract_activation: e(400),
  integration_not_found: e(404),
  contract_not_found: e(404),
  contract_version_already_exists: e(409),
  // 409 for an expectedScope guard; 403 for a setup OAuth token lacking the Integration (Authentication 4).
  integration_scope_mismatch: e(409, { otherStatuses: [403] }),
  active_contract_changed: e(409, { extra: ['activeContractVersionId'] }),
  contract_not_activatable: e(409),
  connection_configuration_changed: e(409),
  canonical_lifecycle_required: e(409),

  // 01 Workspaces
  account_not_found: e(404),
  workspace_not_found: e(404),
  invalid_workspace_name: e(400),
  invalid_workspace_slug: e(400),
  invalid_billing_account_id: e(400),
  account_required: e(400),
  account_unavailable: e(409),
  workspace_limit_reached: e(409),
  workspace_slug_unavailable: e(409),
  workspace_creation_rate_limited: e(429),

  // 01 Inventory, connections, environments
  connection_not_found: e(404),
  invalid_inventory_query: e(400),
  invalid_inventory_cursor: e(400),
  workspace_modes_unavailable: e(409),

  // 01 Credentials
  invalid_credential_request: e(400),
  workspace_unavailable: e(409),
  credential_already_issued: e(409),
  credential_not_issued: e(409),
  credential_verification_failed: e(409),
  canonical_credential_required: e(409),

  // 01 Integration creation
  invalid_integration: e(400),
  workspace_authorization_changed: e(409),

  // 02 Setup, copy, compensation
  invalid_connection_setup: e(400),
  configuration_scope_mismatch: e(400),
  configuration_selection_invalid: e(400),
  configuration_snapshot_too_large: e(409),
  connection_already_configured: e(409),
  approval_mismatch: e(409),
  connection_preview_expired: e(409),
  connection_preview_stale: e(409),
  rate_limited: e(429, { retryAfter: 60 }),
  invalid_configuration_request: e(400),
  configuration_destination_conflict: e(409),
  configuration_preview_stale: e(409),
  configuration_preview_expired: e(409),
  configuration_compensation_unavailable: e(409),

  // 02 Rules
  invalid_rule_request: e(400),
  invalid_rule_cursor: e(400),
  expected_outcome_not_found: e(404),
  rule_cursor_stale: e(409),
  expected_outcome_already_exists: e(409),
  expected_outcome_has_incident_history: e(409),
  // Not in 02: the connection holds its cap of rules (docs/decisions/rules.md).
  expected_outcome_limit_reached: e(409, { extra: ['limit'] }),

  // 03 Ingestion (the malformed-batch 400 carries a literal phrase, see INGEST_BATCH_SHAPE_ERROR)
  integration_not_available: e(409),
  workload_rate_limited: e(429),
  sandbox_observation_rate_limited: e(429),
  sandbox_request_rate_limited: e(429),
  observation_monthly_quota_exhausted: e(403, { extra: ['mode', 'period', 'resetAt', 'retryable', 'batchPersisted'] }),
  sandbox_repair_monthly_limit: e(429, { extra: ['limit', 'resetsAt'] }),
  sandbox_execution_busy: e(429),
  connection_rate_limited: e(429),

  // 03 CLI API
  workspace_required: e(400),
  connection_required: e(400),
  invalid_cli_query: e(400),
  invalid_cli_session_query: e(400),
  invalid_workspace_query: e(400),
  invalid_incident_query: e(400),
  invalid_evidence_query: e(400),
  invalid_evidence_cursor: e(400),
  invalid_incident_cursor: e(400),
  invalid_repair_request: e(400),
  cli_operation_forbidden: e(403),
  authorization_changed: e(403),
  incident_not_found: e(404),
  repair_proposal_not_found: e(404),
  replay_dataset_not_found: e(404),
  replay_run_not_found: e(404),
  cli_session_not_found: e(404),
  review_expired: e(409),
  review_stale: e(409),
  repair_proposal_not_approvable: e(409),
  repair_source_patch_required: e(409),
  repair_export_not_available: e(409),
  repair_export_not_approved: e(409),
  repair_export_not_validated: e(409),
  repair_export_fingerprint_mismatch: e(409),
  repair_export_operation_unsupported: e(409),
  repair_export_sensitive_content: e(409),
  incident_has_no_repair_assertion: e(409),
  repair_evidence_unavailable: e(409),
  replay_evidence_unavailable: e(409),
  replay_evidence_capacity_exceeded: e(409, { extra: ['limit', 'total'] }),
  replay_evidence_snapshot_changed: e(409),
  repair_already_pending: e(409, { extra: ['proposalId'] }),
  repair_proposal_in_progress: e(409, { extra: ['proposalId'] }),
  repair_capacity_exceeded: e(429, { retryAfter: 60 }),
  repair_generator_unavailable: e(503),

  // 03 Retired and interrupted work (the last three are recorded states, reported as 409 when returned)
  custom_replay_retired: e(410),
  execution_interrupted: e(409),
  execution_attempts_exhausted: e(409),
  execution_interrupted_by_rollback: e(409),

  // 03 Console-facing identifiers
  repair_proposal_not_patchable: e(409),
  repair_source_not_found: e(409),
  repair_source_ambiguous: e(409),
  replay_dataset_required: e(409),
  codehost_repository_unavailable: e(409),
  codehost_pull_request_permission_required: e(409),
  codehost_branch_conflict: e(409),
  replay_runner_unavailable: e(503),
  codehost_not_configured: e(503),

  // 03 Integration deletion
  invalid_integration_deletion: e(400),
  confirmation_mismatch: e(400),
  deletion_preview_expired: e(409),
  deletion_preview_stale: e(409),
  operation_mismatch: e(409),

  // 00-decisions §3: OAuth device grant (RFC 8628 / RFC 6749 error names)
  authorization_pending: e(400),
  slow_down: e(400),
  expired_token: e(400),
  access_denied: e(400),
  invalid_grant: e(400),
  invalid_client: e(401),
  invalid_scope: e(400),
  unsupported_grant_type: e(400),

  // 00-decisions §3 console auth and API key management (names recorded in docs/decisions/accounts-and-workspaces.md)
  invalid_signup: e(400),
  email_unavailable: e(409),
  invalid_verification_token: e(400),
  invalid_api_key_request: e(400),
  api_key_not_found: e(404),

  // 00-decisions §5 observation reads: an eventId absent from the selected connection
  // (docs/decisions/analysis.md; `not_found` stays the unknown-route answer)
  observation_not_found: e(404),
} as const satisfies Record<string, ErrorSpec>;

export type ErrorCode = keyof typeof ERROR_CATALOGUE;

/** The literal error text of a malformed ingest batch (document 03, Errors, Ingestion). */
export const INGEST_BATCH_SHAPE_ERROR = 'expected { envelopes: [...] }';
