import type { ErrorCode } from '../../shared/errors/index.js';
import { NETWORK_ERROR_WORDS, UNKNOWN_ERROR_WORDS, consoleErrorWords } from './errorWords.js';
import { html, type SafeHtml } from './html.js';

/**
 * The markup contract of `assets/console.js`, the console's one form script:
 *
 * - `<form id="…" data-api="POST /path">` (any method) posts the form's fields as JSON to the
 *   route, with the session cookie and this origin's `Origin` header (00-decisions §2).
 * - Fields: empty ones are left out, or sent as `null` with `data-empty="null"`;
 *   `data-type="integer"` sends a number (times `data-scale` if given: seconds typed, milliseconds
 *   sent); `data-type="json"` sends the parsed text (text that does not parse is the form's
 *   `invalid_json` error, never sent); checkboxes sharing a name with `data-array` send the list of
 *   their checked values (empty when none), a lone checkbox a boolean, radios the checked value.
 *   `<input type="file" data-file-into="name">` reads the chosen file into that field.
 * - `data-idempotent` sends a fresh `Idempotency-Key` header with each submission (keyed routes).
 * - On success, in order: `data-next="/path/{a.b}"` is followed, each `{a.b}` replaced by the
 *   URL-encoded value at that path of the answer; `data-download="a"` saves the answer's value at
 *   `a` as `<value at data-download-name>.json`; `data-show="#id"` unhides that element and fills
 *   its `[data-result="a.b"]` children from the answer (a key shown once; a `<time>` child shows
 *   the instant in the viewer's time zone), hiding the form if it has `data-hide-on-success` and
 *   the elements `data-hide="selector"` names; otherwise the page reloads.
 * - On a catalogue error: the words of `errorTemplate` (an inert `<template>`: the script has no
 *   text of its own) shown in the field's `fieldError` box, or the form's `formError` box.
 */

/** One catalogue code a form's route can answer: the field it is about, and the page's own words if any. */
export interface FormError {
  /** A catalogue code, or `invalid_json`: a `data-type="json"` field that does not parse (never sent). */
  code: ErrorCode | 'invalid_json';
  /** The `name` of the field the error is about; none: the form's own error box. */
  field?: string;
  words?: string;
}

/**
 * The words of every error `errors` lists, plus `network` and `unknown`, for the script: inside
 * the form, or once per page with `shared` for the forms of a list that have no template of their own.
 */
export function errorTemplate(errors: readonly (ErrorCode | FormError)[], options: { shared?: boolean } = {}): SafeHtml {
  const entries = errors.map((entry) => {
    const { code, field, words } = typeof entry === 'string' ? { code: entry, field: undefined, words: undefined } : entry;
    return html`<span data-error="${code}"${field ? html` data-field="${field}"` : null}>${words ?? consoleErrorWords(code)}</span>`;
  });
  return html`<template class="error-words"${options.shared ? html` data-shared` : null}>${entries}<span data-error="network">${NETWORK_ERROR_WORDS}</span><span data-error="unknown">${UNKNOWN_ERROR_WORDS}</span></template>`;
}

/** The id of the error box of `field` on form `formId` (for the field's `aria-describedby`). */
export function fieldErrorId(formId: string, field: string): string {
  return `${formId}-${field}-error`;
}

/** The error box beside one field: the script fills it and marks the field `aria-invalid`. */
export function fieldError(formId: string, field: string): SafeHtml {
  return html`<p class="error" id="${fieldErrorId(formId, field)}" data-error-for="${field}" role="alert" hidden></p>`;
}

/** The form's own error box, for errors about no single field. */
export function formError(formId: string): SafeHtml {
  return html`<p class="error" id="${formId}-error" data-error-for="" role="alert" hidden></p>`;
}
