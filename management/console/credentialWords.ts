import type { ErrorCode } from '../../shared/errors/index.js';
import type { FormError } from './consoleForm.js';

/**
 * The catalogue errors of the console's credential routes (consoleCredentialMutation.ts) in the
 * credential forms' words; the codes without words here read as errorWords.ts says.
 */
const CREDENTIAL_WORDS: Partial<Record<ErrorCode, string>> = {
  credential_already_issued: 'This connection already has an active credential. Reload the page, then rotate it to get a new token.',
  credential_not_issued: 'This connection has no active credential any more. Reload the page, then issue one.',
  connection_configuration_changed: 'This connection changed since the page was loaded. Reload the page, review it and try again.',
  connection_not_found: 'This connection no longer exists. Reload the page.',
  workspace_unavailable: 'This workspace is archived: its credentials cannot change.',
  workspace_modes_unavailable: 'This workspace has no Sandbox and Live environments: its credentials cannot be managed here.',
  forbidden: 'Only an owner or admin of this workspace can change credentials, from this page. Reload and try again.',
  idempotency_conflict: 'This request was already used for another change. Reload the page and try again.',
  idempotency_key_required: 'The page sent an incomplete request. Reload the page and try again.',
  invalid_credential_request: 'The page sent an incomplete request. Reload the page and try again.',
};

/** The codes the credential routes answer, with the forms' words, for `errorTemplate`. */
export const CREDENTIAL_FORM_ERRORS: readonly FormError[] = [
  ...Object.entries(CREDENTIAL_WORDS).map(([code, words]) => ({ code: code as ErrorCode, words })),
  { code: 'workspace_not_found' },
  { code: 'unauthenticated' },
  { code: 'email_verification_required' },
  { code: 'mode_cutover_write_paused' },
  { code: 'service_unavailable' },
];

/** The words of one credential route error (for tests and the page alike). */
export function credentialErrorInWords(code: ErrorCode): string | undefined {
  return CREDENTIAL_WORDS[code];
}
