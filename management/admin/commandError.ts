import { isAppError } from '../../shared/errors/index.js';
import { isInfrastructureError } from '../../shared/db/sqlstate.js';

/** An operator command failure: printed as `{error: code, message}` with exit status 1. */
export class CommandError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'CommandError';
  }
}

const MESSAGES: Record<string, string> = {
  workspace_not_found: 'no workspace has this slug',
  workspace_unavailable: 'the workspace is archived',
  api_key_not_found: 'no API key has this id',
  account_not_found: 'no account has this id',
  invalid_billing_account_id: 'an account id looks like acct_ followed by 26 characters',
  invalid_api_key_request: 'scopes must be distinct known scopes (or "all"); --expires-in 60 to 31622400 seconds',
  invalid_workspace_name: 'a workspace name is 2 to 80 characters',
  workspace_limit_reached: 'the account already has its maximum of active workspaces',
  account_unavailable: 'the account is suspended',
};

/** The one JSON error shape of the operator CLI, for any thrown value. */
export function commandErrorBody(error: unknown): { error: string; message: string } {
  if (error instanceof CommandError) return { error: error.code, message: error.message };
  if (isAppError(error)) return { error: error.code, message: MESSAGES[error.code] ?? error.code.replace(/_/g, ' ') };
  if (isInfrastructureError(error)) return { error: 'service_unavailable', message: 'a store (PostgreSQL or Redis) cannot be reached' };
  return { error: 'internal_error', message: error instanceof Error ? error.message : String(error) };
}
