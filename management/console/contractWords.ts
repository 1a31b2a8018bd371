import type { ErrorCode } from '../../shared/errors/index.js';
import type { FormError } from './consoleForm.js';

/** The contract page's forms. */
export type ContractForm = 'import' | 'activate';

/**
 * The catalogue errors of the console's contract routes (management/contracts/console/), in
 * words, and the field each belongs beside (`null`: the form as a whole). `invalid_json` is the
 * page's own: a pasted or uploaded document that is not JSON never leaves the browser.
 */
const WORDS: Record<ContractForm, Partial<Record<ErrorCode | 'invalid_json', { words: string; field: string | null }>>> = {
  import: {
    invalid_json: { words: 'This document is not JSON. Paste or upload the OpenAPI or JSON Schema document as JSON.', field: 'document' },
    invalid_contract: {
      words:
        'This document cannot be imported: check that it is an OpenAPI 3 or Swagger 2.0 document (or a JSON Schema with its operation), with at least one operation and no remote reference.',
      field: 'document',
    },
    contract_version_already_exists: {
      words: 'This version label is already used by another document on this connection. Choose another label.',
      field: 'declaredVersion',
    },
    integration_scope_mismatch: { words: 'This document is for another direction or protocol than this connection.', field: 'document' },
    connection_configuration_changed: { words: 'The connection changed meanwhile. Reload the page and import again.', field: null },
    integration_not_found: { words: 'This connection no longer exists.', field: null },
  },
  activate: {
    active_contract_changed: {
      words: 'Another version was activated meanwhile. Reload the page to review the activation against it.',
      field: null,
    },
    contract_not_activatable: { words: 'This version cannot be activated this way any more. Reload the page.', field: null },
    contract_not_found: { words: 'This version no longer exists.', field: null },
    integration_not_found: { words: 'This connection no longer exists.', field: null },
    connection_configuration_changed: { words: 'The connection changed meanwhile. Reload the page and review again.', field: null },
  },
};

/** Errors every write of the page can meet. */
const COMMON: Partial<Record<ErrorCode, string>> = {
  unauthenticated: 'Your session has ended. Sign in again to continue.',
  forbidden: 'Only an owner or admin of this workspace can do this, from this page. Reload the page and try again.',
  email_verification_required: 'Your e-mail address is not verified yet.',
  workspace_not_found: 'This workspace does not exist or you are not a member of it.',
  workspace_unavailable: 'This workspace is archived: restore it to change its contracts.',
  workspace_modes_unavailable: 'This workspace has not moved to Sandbox and Live yet; its contracts cannot change here.',
  rate_limited: 'Too many contract changes in this workspace this minute. Wait a minute, then try again.',
  mode_cutover_write_paused: 'The service is paused for a moment of maintenance. Try again in a few seconds.',
  service_unavailable: 'The service is unavailable right now. Try again in a moment.',
};

/** Every code `form` has words for, with its field, for the form's `errorTemplate`. */
export function contractFormErrors(form: ContractForm): FormError[] {
  const own = Object.entries(WORDS[form]).map(([code, entry]) => ({
    code: code as FormError['code'],
    words: entry!.words,
    field: entry!.field ?? undefined,
  }));
  const common = Object.entries(COMMON)
    .filter(([code]) => !Object.hasOwn(WORDS[form], code))
    .map(([code, words]) => ({ code: code as ErrorCode, words: words! }));
  return [...own, ...common];
}
