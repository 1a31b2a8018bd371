// The console's one script (management/console/consoleForm.ts describes the markup it works on).
// It sends `form[data-api]` forms as JSON to their route and shows the answer, copies shown-once
// values, and shows `<time datetime>` in the viewer's time zone. It has no words of its own: the
// error words come from each form's inert `<template class="error-words">`.

import { busy, send } from './send-json.js';

/** The template entry of `code` on `form` (or its `unknown` entry). */
function errorEntry(form, code) {
  // The form's own words, else the page's shared ones (one template for a list of like forms).
  const template = form.querySelector('template.error-words') ?? document.querySelector('template.error-words[data-shared]');
  const entries = template ? [...template.content.querySelectorAll('[data-error]')] : [];
  return entries.find((item) => item.dataset.error === code) ?? entries.find((item) => item.dataset.error === 'unknown') ?? null;
}

/** A field the browser could not turn into the body; its code has words in the form's template. */
class FormInputError extends Error {
  constructor(code) {
    super(code);
    this.code = code;
  }
}

/** A field's value as the JSON body sends it (`data-type` integer or json; `data-scale` multiplies). */
function fieldValue(field) {
  if (field.dataset.type === 'json') return JSON.parse(field.value);
  if (field.dataset.type === 'integer') return Number(field.value) * Number(field.dataset.scale ?? 1);
  return field.value;
}

/**
 * The form's fields as the JSON body: empty fields left out (or null with `data-empty="null"`),
 * lists and booleans from checkboxes, the checked radio's value. Throws `invalid_json` for a
 * `data-type="json"` field that does not parse.
 */
function bodyOf(form) {
  const body = {};
  for (const field of form.elements) {
    if (!field.name || field.disabled || field.type === 'submit' || field.type === 'button' || field.type === 'file') continue;
    if (field.type === 'checkbox' && field.hasAttribute('data-array')) {
      body[field.name] ??= [];
      if (field.checked) body[field.name].push(field.value);
      continue;
    }
    if (field.type === 'checkbox') {
      body[field.name] = field.checked;
      continue;
    }
    if (field.type === 'radio') {
      if (field.checked) body[field.name] = field.value;
      continue;
    }
    if (field.value === '') {
      if (field.dataset.empty === 'null') body[field.name] = null;
      continue;
    }
    try {
      body[field.name] = fieldValue(field);
    } catch {
      throw new FormInputError('invalid_json');
    }
  }
  return body;
}

function clearErrors(form) {
  for (const box of form.querySelectorAll('[data-error-for]')) {
    box.hidden = true;
    box.textContent = '';
  }
  for (const field of form.querySelectorAll('[aria-invalid]')) field.removeAttribute('aria-invalid');
}

/** Shows the words of `code` beside the field it is about, else in the form's own box. */
function showError(form, code) {
  const entry = errorEntry(form, code);
  const fieldName = entry?.dataset.field ?? '';
  const box = form.querySelector(`[data-error-for="${CSS.escape(fieldName)}"]`) ?? form.querySelector('[data-error-for=""]');
  if (!box) return;
  box.textContent = entry ? entry.textContent : '';
  box.hidden = false;
  const field = fieldName ? form.elements.namedItem(fieldName) : null;
  if (field && 'focus' in field) {
    field.setAttribute('aria-invalid', 'true');
    field.focus();
  }
}

/** The value at `path` ("apiKey.key") of an answer. */
function valueAt(answer, path) {
  return path.split('.').reduce((value, key) => (value && typeof value === 'object' ? value[key] : undefined), answer);
}

/** `data-next` with each `{a.b}` replaced by the URL-encoded value at that path of the answer. */
function nextAddress(template, answer) {
  return template.replace(/\{([\w.]+)\}/g, (_, path) => encodeURIComponent(String(valueAt(answer, path) ?? '')));
}

/** Saves the value at `data-download` of the answer as a JSON file named by the value at `data-download-name`. */
function download(form, answer) {
  const value = valueAt(answer, form.dataset.download);
  const name = String(valueAt(answer, form.dataset.downloadName ?? '') ?? 'download');
  const url = URL.createObjectURL(new Blob([JSON.stringify(value, null, 2)], { type: 'application/json' }));
  const link = document.createElement('a');
  link.href = url;
  link.download = `${name}.json`;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

function onSuccess(form, answer) {
  const next = form.dataset.next;
  if (next) return window.location.assign(nextAddress(next, answer));
  if (form.dataset.download) download(form, answer);
  const show = form.dataset.show ? document.querySelector(form.dataset.show) : null;
  if (!show) return form.dataset.download ? undefined : window.location.reload();
  for (const slot of show.querySelectorAll('[data-result]')) {
    const value = String(valueAt(answer, slot.dataset.result) ?? '');
    slot.textContent = value;
    if (slot instanceof HTMLTimeElement) showLocalTime(slot, value);
  }
  form.reset();
  if (form.hasAttribute('data-hide-on-success')) form.hidden = true;
  // What the answer makes untrue (a "waiting for approval" line), hidden with the form.
  for (const element of form.dataset.hide ? document.querySelectorAll(form.dataset.hide) : []) element.hidden = true;
  show.hidden = false;
  show.querySelector('[tabindex="-1"]')?.focus();
}

for (const form of document.querySelectorAll('form[data-api]')) {
  const [method, url] = form.dataset.api.split(' ');
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearErrors(form);
    let body;
    try {
      body = bodyOf(form);
    } catch (error) {
      return showError(form, error instanceof FormInputError ? error.code : 'unknown');
    }
    const result = await busy(form, () => send(method, url, body, form.hasAttribute('data-idempotent')));
    // Signing out of a session that has already ended is as good as signing out now.
    if (result.ok || (url === '/auth/logout' && result.error === 'unauthenticated')) return onSuccess(form, result.body);
    showError(form, result.error);
  });
}

// File fields: `<input type="file" data-file-into="name">` reads the chosen file into that field
// of its form, so that what is sent is what the page shows.
for (const input of document.querySelectorAll('input[type="file"][data-file-into]')) {
  input.addEventListener('change', async () => {
    const target = input.form?.elements.namedItem(input.dataset.fileInto);
    const chosen = input.files?.[0];
    if (target && chosen) target.value = await chosen.text();
  });
}

// Copy buttons: `<button data-copy="#id" data-copied="Copied">` copies the element's text.
for (const button of document.querySelectorAll('button[data-copy]')) {
  button.addEventListener('click', async () => {
    const source = document.querySelector(button.dataset.copy);
    if (!source) return;
    try {
      await navigator.clipboard.writeText(source.textContent);
      if (button.dataset.copied) button.textContent = button.dataset.copied;
    } catch {
      // No clipboard (permission, insecure origin): select the text so that the user can copy it.
      const range = document.createRange();
      range.selectNodeContents(source);
      window.getSelection()?.removeAllRanges();
      window.getSelection()?.addRange(range);
    }
  });
}

// Instants in the viewer's time zone; the server wrote UTC, kept as the title.
const format = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });

/** Shows `<time>` at `iso` (or its own `datetime`) in the viewer's time zone. */
function showLocalTime(time, iso = time.dateTime) {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return;
  time.dateTime = iso;
  time.title = time.textContent;
  time.textContent = format.format(date);
}

for (const time of document.querySelectorAll('time[datetime]')) showLocalTime(time);
