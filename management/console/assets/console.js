// The console's one script (management/console/consoleForm.ts describes the markup it works on).
// It sends `form[data-api]` forms as JSON to their route and shows the answer, copies shown-once
// values, and shows `<time datetime>` in the viewer's time zone. It has no words of its own: the
// error words come from each form's inert `<template class="error-words">`.

/** The template entry of `code` on `form` (or its `unknown` entry). */
function errorEntry(form, code) {
  const template = form.querySelector('template.error-words');
  const entries = template ? [...template.content.querySelectorAll('[data-error]')] : [];
  return entries.find((item) => item.dataset.error === code) ?? entries.find((item) => item.dataset.error === 'unknown') ?? null;
}

/** The form's fields as the JSON body: empty fields left out, integers and lists typed. */
function bodyOf(form) {
  const body = {};
  for (const field of form.elements) {
    if (!field.name || field.disabled || field.type === 'submit' || field.type === 'button') continue;
    if (field.type === 'checkbox' && field.hasAttribute('data-array')) {
      body[field.name] ??= [];
      if (field.checked) body[field.name].push(field.value);
      continue;
    }
    if (field.type === 'checkbox') {
      body[field.name] = field.checked;
      continue;
    }
    if (field.value === '') continue;
    body[field.name] = field.dataset.type === 'integer' ? Number(field.value) : field.value;
  }
  return body;
}

/** Sends `body` as JSON to this origin: `{ok, body}` or `{error: code}` (`network` when unreachable). */
async function send(method, url, body) {
  let response;
  try {
    response = await fetch(url, {
      method,
      credentials: 'same-origin',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify(body),
    });
  } catch {
    return { error: 'network' };
  }
  let answer = null;
  try {
    answer = await response.json();
  } catch {
    answer = null;
  }
  if (response.ok) return { ok: true, body: answer };
  return { error: answer && typeof answer.error === 'string' ? answer.error : 'unknown' };
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

/** Runs `work` with the form's buttons disabled, so that one click sends one request. */
async function busy(form, work) {
  const buttons = [...form.querySelectorAll('button')];
  for (const button of buttons) button.disabled = true;
  form.setAttribute('aria-busy', 'true');
  try {
    return await work();
  } finally {
    form.removeAttribute('aria-busy');
    for (const button of buttons) button.disabled = false;
  }
}

function onSuccess(form, answer) {
  const next = form.dataset.next;
  if (next) return window.location.assign(next);
  const show = form.dataset.show ? document.querySelector(form.dataset.show) : null;
  if (!show) return window.location.reload();
  for (const slot of show.querySelectorAll('[data-result]')) slot.textContent = String(valueAt(answer, slot.dataset.result) ?? '');
  form.reset();
  show.hidden = false;
  show.querySelector('[tabindex="-1"]')?.focus();
}

for (const form of document.querySelectorAll('form[data-api]')) {
  const [method, url] = form.dataset.api.split(' ');
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearErrors(form);
    const result = await busy(form, () => send(method, url, bodyOf(form)));
    // Signing out of a session that has already ended is as good as signing out now.
    if (result.ok || (url === '/auth/logout' && result.error === 'unauthenticated')) return onSuccess(form, result.body);
    showError(form, result.error);
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
for (const time of document.querySelectorAll('time[datetime]')) {
  const date = new Date(time.dateTime);
  if (Number.isNaN(date.getTime())) continue;
  time.title = time.textContent;
  time.textContent = format.format(date);
}
