// Exit codes as `gh` uses them, and the spec's error codes with their recovery in words
// (03 "CLI API" error table).

export const EXIT = {
  ok: 0,
  failure: 1,
  /** The user cancelled (Ctrl-C, or declined a confirmation). */
  cancelled: 2,
  /** Not logged in, or the login expired or was revoked: `iw login`. */
  authentication: 4,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** A failure the CLI reports in words and an exit code; `code` is the service's error code when it answered one. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: ExitCode = EXIT.failure,
    readonly code?: string,
    /** The service's whole error body, printed with --json. */
    readonly body?: Record<string, unknown>,
  ) {
    super(message);
  }
}

/** 03's recovery column, per status, for a code the table below does not name. */
const RECOVERY_BY_STATUS: Record<number, string> = {
  400: 'correct the target, the body, the page or the key',
  401: 'log in again (iw login) and review the new consent',
  403: 'check your membership and the scopes of your login; secret operations need the dashboard',
  404: 'check the exact workspace, connection and id',
  409: 'recover the original outcome or review the current evidence',
  413: 'send less at once',
  429: 'wait and retry the same command (it reuses its idempotency key)',
  503: 'wait and retry the same command (it reuses its idempotency key)',
};

/** Recovery words for codes whose own meaning says more than their status. */
const RECOVERY_BY_CODE: Record<string, string> = {
  workspace_required: 'name a workspace: iw use <slug>, --workspace or IW_WORKSPACE',
  workspace_not_found: 'check the workspace slug (iw workspaces list); you may have lost access to it',
  unauthenticated: 'log in again: iw login',
  insufficient_scope: 'log in again with the scopes this command needs: iw login',
  cli_operation_forbidden: 'viewers can only read; ask an owner or admin',
  authorization_changed: 'your membership or role changed since this was prepared: start again',
  review_expired: 'the preview expired: preview the decision again',
  review_stale: 'the proposal changed since the preview: preview the decision again',
  approval_mismatch: 'apply with the approval fingerprint the preview printed',
  repair_already_pending: 'a proposal for this incident is already in progress: iw repairs show',
  mode_cutover_write_paused: 'the service paused writes for maintenance: retry shortly with the same command',
};

export function recoveryOf(code: string | undefined, status: number): string {
  return (code !== undefined ? RECOVERY_BY_CODE[code] : undefined) ?? RECOVERY_BY_STATUS[status] ?? 'retry, or report the error code';
}
