import type { ErrorCode } from '../../shared/errors/index.js';
import type { FormError } from './consoleForm.js';

/**
 * The catalogue errors of the second-mode setup, configuration copy and compensation session
 * routes (02 "Errors": Setup; Configuration copy and compensation), in the words of the console's
 * forms over them, and the field each belongs beside: selection errors beside the selections
 * (`SELECTION_FIELD`), fingerprint, expiry and staleness beside the Apply button (the apply form's
 * own error box, which sits right after the button).
 */
export type SetupCopyForm = 'setup-preview' | 'setup-apply' | 'copy-preview' | 'copy-apply' | 'compensation-preview';

/** The error box of the selection tables (both fieldsets point to it with `aria-describedby`). */
export const SELECTION_FIELD = 'selection';

/** What every form of these pages can meet: the session, the workspace, the write pause. */
const COMMON: Partial<Record<ErrorCode, string>> = {
  unauthenticated: 'Your session has ended. Sign in again to continue.',
  email_verification_required: 'Your e-mail address is not verified yet. Open the link in the verification e-mail, then reload this page.',
  forbidden: 'Only an owner or admin of this workspace can do this, from this page. Reload the page and try again.',
  insufficient_scope: 'Only an owner or admin of this workspace can do this, from this page. Reload the page and try again.',
  workspace_not_found: 'This workspace does not exist or you are not a member of it.',
  workspace_unavailable: 'This workspace is archived: nothing can be set up, copied or reversed in it. Restore it first.',
  workspace_modes_unavailable: 'This workspace has not moved to Sandbox and Live yet: connections cannot be set up or copied here.',
  mode_cutover_write_paused: 'The service is paused for a moment of maintenance. Try again in a few seconds.',
  service_unavailable: 'The service is unavailable right now. Try again in a moment.',
};

const PREVIEW_RATE =
  'Too many previews in this workspace this minute (setup, copy and reversal share 30 a minute). Wait a minute, then try again.';

const REQUEST_INCOMPLETE = 'The page sent an incomplete request. Reload the page and try again.';

/** Each form's own codes: [code, words, beside the selection?]. */
const OWN: Record<SetupCopyForm, readonly [ErrorCode, string, boolean?][]> = {
  'setup-preview': [
    [
      'configuration_selection_invalid',
      'Choose each contract version and rule at most once, from the lists above. One may have been removed meanwhile: reload the page and choose again.',
      true,
    ],
    [
      'configuration_scope_mismatch',
      "The versions and rules must come from this Integration's other connection. Reload the page and choose again.",
      true,
    ],
    [
      'configuration_snapshot_too_large',
      'Together the chosen versions and rules are larger than 1 MiB. Choose fewer, then preview again.',
      true,
    ],
    [
      'connection_already_configured',
      'This Integration already has a connection in this mode. Copy configuration into it instead, from the Integrations page.',
    ],
    ['integration_not_found', 'This Integration no longer exists. Go back to the Integrations page.'],
    ['invalid_connection_setup', REQUEST_INCOMPLETE],
    ['rate_limited', PREVIEW_RATE],
  ],
  'setup-apply': [
    ['connection_preview_expired', 'This review has expired: nothing was created. Preview again for a new review.'],
    [
      'connection_preview_stale',
      'Something this review covers changed since it was made (the Integration, the source connection or your access), or the review was already applied. Reload the page; preview again if it is still needed.',
    ],
    ['approval_mismatch', 'The fingerprint sent is not the one of this review. Reload the page and apply the review it shows.'],
    [
      'connection_already_configured',
      'This Integration got a connection in this mode meanwhile (another review was applied). Copy configuration into it instead.',
    ],
    ['operation_not_found', 'This review does not exist, or it is not yours to apply.'],
    ['integration_not_found', 'This Integration no longer exists. Nothing was created.'],
    ['idempotency_conflict', 'This request was already used for another change. Reload the page and try again.'],
    ['idempotency_key_required', REQUEST_INCOMPLETE],
    ['invalid_connection_setup', REQUEST_INCOMPLETE],
  ],
  'copy-preview': [
    [
      'configuration_selection_invalid',
      'Choose at least one contract version or rule, each at most once, from the lists above. One may have been removed meanwhile: reload the page.',
      true,
    ],
    [
      'configuration_destination_conflict',
      'The destination already has a contract version with one of these declared versions, or a rule for one of these event and object pairs (or as many rules as it may have). Leave those out and preview again.',
      true,
    ],
    ['configuration_scope_mismatch', "The versions and rules must come from the other connection of this connection's Integration.", true],
    [
      'configuration_snapshot_too_large',
      'Together the chosen versions and rules are larger than 1 MiB. Choose fewer, then preview again.',
      true,
    ],
    ['connection_not_found', 'One of the two connections no longer exists. Go back to the Integrations page.'],
    ['integration_not_found', 'This Integration no longer exists. Go back to the Integrations page.'],
    ['invalid_configuration_request', REQUEST_INCOMPLETE],
    ['rate_limited', PREVIEW_RATE],
  ],
  'copy-apply': [
    ['configuration_preview_expired', 'This review has expired: nothing was changed. Preview again for a new review.'],
    [
      'configuration_preview_stale',
      'Something this review covers changed since it was made (either connection, the Integration or your access), or the review was already applied. Reload the page; preview again if it is still needed.',
    ],
    ['approval_mismatch', 'The fingerprint sent is not the one of this review. Reload the page and apply the review it shows.'],
    [
      'configuration_destination_conflict',
      'The destination got a contract version with one of these declared versions, or a rule for one of these pairs, since the review. Nothing was copied: preview again without them.',
    ],
    [
      'configuration_compensation_unavailable',
      'This copy can no longer be reversed: the destination changed after it, a copied contract was activated, or findings refer to it. Nothing was removed.',
    ],
    ['operation_not_found', 'This review does not exist, or it is not yours to apply.'],
    ['connection_not_found', 'The destination connection no longer exists. Nothing was changed.'],
    ['integration_not_found', 'This Integration no longer exists. Nothing was changed.'],
    ['idempotency_conflict', 'This request was already used for another change. Reload the page and try again.'],
    ['idempotency_key_required', REQUEST_INCOMPLETE],
    ['invalid_configuration_request', REQUEST_INCOMPLETE],
  ],
  'compensation-preview': [
    [
      'configuration_compensation_unavailable',
      'This copy can no longer be reversed: the destination changed after it (another change, a rotated credential, a rule turned on), a copied contract was activated, findings refer to it, or it was already reversed.',
    ],
    ['operation_not_found', 'This copy does not exist, or it is not yours to reverse.'],
    ['connection_not_found', 'The destination connection no longer exists.'],
    ['integration_not_found', 'This Integration no longer exists.'],
    ['invalid_configuration_request', REQUEST_INCOMPLETE],
    ['rate_limited', PREVIEW_RATE],
  ],
};

/** The codes `form`'s route can answer, with the form's words and field, for `errorTemplate`. */
export function setupCopyFormErrors(form: SetupCopyForm): FormError[] {
  const own = OWN[form].map(([code, words, selection]) => ({ code, words, ...(selection ? { field: SELECTION_FIELD } : {}) }));
  const mine = new Set(own.map((entry) => entry.code));
  const common = Object.entries(COMMON)
    .filter(([code]) => !mine.has(code as ErrorCode))
    .map(([code, words]) => ({ code: code as ErrorCode, words }));
  return [...own, ...common];
}

/** The words `form` shows for `code` (for tests and the pages alike); undefined when it has none. */
export function setupCopyErrorInWords(form: SetupCopyForm, code: ErrorCode): string | undefined {
  return setupCopyFormErrors(form).find((entry) => entry.code === code)?.words;
}
