import type { ErrorCode } from '../../shared/errors/index.js';

/** The forms of the device page; an error reads differently on each (a 401 at sign-in is a wrong password). */
export type DeviceForm = 'sign-in' | 'code' | 'consent' | 'sign-out';

/**
 * The catalogue errors of the routes the device page calls, in words: `POST /auth/login`,
 * the device authorization lookup and `POST /oauth/device/consent` (00-decisions §3). The page
 * renders them once, server-side, and its script shows the one a route answered next to the field.
 */
const COMMON: Partial<Record<ErrorCode, string>> = {
  invalid_grant: 'This code is wrong, has expired or was already used. Check the code in your terminal, or start the sign-in there again.',
  rate_limited: 'Too many attempts. Wait a minute, then try again.',
  email_verification_required:
    'Your e-mail address is not verified yet. Open the link in the verification e-mail we sent you, then reload this page.',
  unauthenticated: 'Your session has ended. Sign in again to continue.',
  forbidden: 'This request did not come from this page. Reload the page and try again.',
  invalid_request: 'That code is not in the right form. Enter the eight letters your terminal shows.',
  mode_cutover_write_paused: 'The service is paused for a moment of maintenance. Try again in a few seconds.',
  service_unavailable: 'The service is unavailable right now. Try again in a moment.',
};

const BY_FORM: Record<DeviceForm, Partial<Record<ErrorCode, string>>> = {
  'sign-in': {
    unauthenticated: 'The e-mail address or the password is wrong.',
    invalid_request: 'Enter your e-mail address and your password.',
    rate_limited: 'Too many sign-in attempts. Wait a minute, then try again.',
  },
  code: {
    forbidden:
      'This is a setup request for an Integration of a workspace you do not administer. Ask an owner or admin of that workspace to approve it.',
  },
  consent: {},
  'sign-out': {},
};

/** The codes each form's route can answer (their error tables), beyond `network` and `unknown`. */
const FORM_CODES: Record<DeviceForm, readonly ErrorCode[]> = {
  // POST /auth/login
  'sign-in': ['unauthenticated', 'rate_limited', 'invalid_request', 'forbidden', 'service_unavailable'],
  // The device authorization lookup, rendered by GET /device.
  code: ['invalid_grant', 'rate_limited', 'invalid_request', 'forbidden', 'email_verification_required', 'service_unavailable'],
  // POST /oauth/device/consent
  consent: [
    'invalid_grant',
    'rate_limited',
    'email_verification_required',
    'unauthenticated',
    'forbidden',
    'invalid_request',
    'mode_cutover_write_paused',
    'service_unavailable',
  ],
  // POST /auth/logout
  'sign-out': ['forbidden', 'mode_cutover_write_paused', 'service_unavailable'],
};

/** When the route could not be reached at all, or answered something the page does not know. */
export const NETWORK_ERROR_WORDS = 'The service could not be reached. Check your connection and try again.';
export const UNKNOWN_ERROR_WORDS = 'Something went wrong. Reload the page and try again.';

/** The words of `code` on `form`. */
export function errorInWords(form: DeviceForm, code: string): string {
  const words = BY_FORM[form][code as ErrorCode] ?? COMMON[code as ErrorCode];
  return words ?? UNKNOWN_ERROR_WORDS;
}

/** The codes the page renders words for on `form`, for its script. */
export function wordedCodes(form: DeviceForm): readonly ErrorCode[] {
  return FORM_CODES[form];
}

/**
 * The console pages' words for the catalogue errors of the JSON routes their forms post to
 * (consoleForm.ts renders them into each form's inert template). A page passes its own words for
 * a code that reads differently on its form; a code without words here reads UNKNOWN_ERROR_WORDS.
 * Add the codes of a new page's routes here.
 */
const CONSOLE_WORDS: Partial<Record<ErrorCode, string>> = {
  ...COMMON,
  invalid_request: 'Some of what you entered is not in the right form. Check the fields and try again.',
  invalid_signup: 'Enter your name, a valid e-mail address and a password of 8 to 256 characters.',
  email_unavailable: 'An account with this e-mail address already exists. Sign in instead.',
  invalid_verification_token: 'This verification link is wrong, has expired or was already used. Sign in to have a new one sent.',
  invalid_workspace_name: 'Enter a workspace name of 2 to 80 characters.',
  invalid_workspace_slug:
    'The address must be up to 48 lower-case letters, digits and hyphens, not starting or ending with a hyphen (or leave it empty).',
  invalid_billing_account_id: 'That billing account id is not in the right form.',
  account_required: 'You administer more than one billing account: choose the one this workspace belongs to.',
  account_not_found: 'There is no billing account with that id that you administer.',
  account_unavailable: 'That billing account cannot take new workspaces.',
  workspace_limit_reached: 'The billing account has reached its number of workspaces. Archive one, or change the plan.',
  workspace_slug_unavailable: 'This address is taken. Choose another one.',
  workspace_creation_rate_limited: 'Too many workspaces created in a short time. Wait a while, then try again.',
  workspace_not_found: 'This workspace does not exist or you are not a member of it.',
  workspace_unavailable: 'This workspace is archived: restore it first.',
  forbidden: 'Your role in this workspace does not allow this, or the request did not come from this page. Reload and try again.',
  invalid_api_key_request: 'Choose at least one permission, a name of up to 120 characters and a valid lifetime.',
  api_key_not_found: 'This API key does not exist any more. Reload the page.',
};

/** The words of `code` on a console form, `own` first (the page's wording for its form). */
export function consoleErrorWords(code: string, own: Partial<Record<ErrorCode, string>> = {}): string {
  return own[code as ErrorCode] ?? CONSOLE_WORDS[code as ErrorCode] ?? UNKNOWN_ERROR_WORDS;
}
