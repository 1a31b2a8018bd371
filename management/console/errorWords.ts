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
