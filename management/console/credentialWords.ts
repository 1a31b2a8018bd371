import type { ErrorCode } from '../../shared/errors/index.js';
import { html, type SafeHtml } from './html.js';
import { NETWORK_ERROR_WORDS, UNKNOWN_ERROR_WORDS } from './errorWords.js';

/**
 * The catalogue errors of the console's credential routes (consoleCredentialMutation.ts) in
 * words, rendered once per page in an inert template for the credentials script.
 */
const CREDENTIAL_WORDS: Partial<Record<ErrorCode, string>> = {
  credential_already_issued: 'This connection already has an active credential. Rotate it to get a new token.',
  credential_not_issued: 'This connection has no active credential to rotate. Issue one instead.',
  connection_configuration_changed: 'This connection changed since the page was loaded. Reload the page, review it and try again.',
  connection_not_found: 'This connection no longer exists. Reload the page.',
  workspace_unavailable: 'This workspace is archived: its credentials cannot change.',
  workspace_modes_unavailable: 'This workspace has no Sandbox and Live environments, so its credentials are managed elsewhere.',
  workspace_not_found: 'This workspace no longer exists, or you are no longer a member of it.',
  forbidden: 'Only an owner or admin of this workspace can change credentials. Reload the page if you just signed in.',
  unauthenticated: 'Your session has ended. Sign in again to continue.',
  email_verification_required: 'Verify your e-mail address first, then reload this page.',
  idempotency_conflict: 'This request was already used for another change. Reload the page and try again.',
  idempotency_key_required: 'The page sent an incomplete request. Reload the page and try again.',
  invalid_credential_request: 'The page sent an incomplete request. Reload the page and try again.',
  mode_cutover_write_paused: 'The service is paused for a moment of maintenance. Try again in a few seconds.',
  service_unavailable: 'The service is unavailable right now. Try again in a moment.',
};

/** The words of one credential route error. */
export function credentialErrorInWords(code: string): string {
  return CREDENTIAL_WORDS[code as ErrorCode] ?? UNKNOWN_ERROR_WORDS;
}

/** The template the credentials script reads the words from. */
export function credentialErrorTemplate(): SafeHtml {
  const entries = Object.entries(CREDENTIAL_WORDS).map(([code, words]) => html`<span data-error="${code}">${words}</span>`);
  return html`<template class="error-words" data-form="credential">${entries}<span data-error="network">${NETWORK_ERROR_WORDS}</span><span data-error="unknown">${UNKNOWN_ERROR_WORDS}</span></template>`;
}
