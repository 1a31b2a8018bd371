import type { ErrorCode } from '../../shared/errors/index.js';
import type { FormError } from './consoleForm.js';

/**
 * The catalogue errors of the console rule routes (`…/expected-outcomes`, 02), in words, and the
 * field each belongs beside (`null`: the form as a whole).
 */
const WORDS: Partial<Record<ErrorCode, { words: string; field: string | null }>> = {
  invalid_rule_request: {
    words:
      'Check the rule: event and object types are 1 to 120 letters, digits or . _ : -, and the delay is between 1 second and 24 hours.',
    field: null,
  },
  expected_outcome_already_exists: {
    words: 'This connection already expects this object for this event. Change that rule instead.',
    field: 'sourceEventType',
  },
  expected_outcome_has_incident_history: {
    words: 'This rule has incidents on record, so it stays: turn it off instead of removing it.',
    field: null,
  },
  workspace_modes_unavailable: {
    words: 'This workspace has not moved to Sandbox and Live yet; its rules cannot change here.',
    field: null,
  },
  rule_cursor_stale: { words: 'The rules changed while you were paging. Start again from the first page.', field: null },
  expected_outcome_limit_reached: { words: 'This connection has as many rules as it may have. Remove one first.', field: null },
  expected_outcome_not_found: { words: 'This rule no longer exists. Reload the page.', field: null },
  connection_configuration_changed: {
    words: 'The connection changed meanwhile (another rule or setting). Reload the page and try again.',
    field: null,
  },
  connection_not_found: { words: 'This connection no longer exists.', field: null },
  idempotency_conflict: { words: 'This change was already sent with other values. Reload the page and try again.', field: null },
  unauthenticated: { words: 'Your session has ended. Sign in again to continue.', field: null },
  forbidden: { words: 'Only an owner or admin of this workspace can change its rules, from this page.', field: null },
  workspace_not_found: { words: 'This workspace does not exist or you are not a member of it.', field: null },
  workspace_unavailable: { words: 'This workspace is archived: restore it to change its rules.', field: null },
  rate_limited: { words: 'Too many rule changes this minute. Wait a minute, then try again.', field: null },
  mode_cutover_write_paused: { words: 'The service is paused for a moment of maintenance. Try again in a few seconds.', field: null },
  service_unavailable: { words: 'The service is unavailable right now. Try again in a moment.', field: null },
};

/** Every code the rule forms have words for, with the field it belongs beside, for their `errorTemplate`. */
export function ruleFormErrors(): FormError[] {
  return Object.entries(WORDS).map(([code, entry]) => ({ code: code as ErrorCode, words: entry!.words, field: entry!.field ?? undefined }));
}
