// The console pages' form script (management/console/contractsView.ts): it sends each form to the
// route its `action` names, as JSON, and shows the answer. The words of each error, and the field
// it belongs beside, come from the page's inert <template class="error-words">, never from here.

/** The entry for `code` in the form's template (`unknown` when the page has no words for it). */
function entryFor(form, code) {
  const template = document.querySelector(`template.error-words[data-form="${form.dataset.form}"]`);
  const entries = template ? [...template.content.querySelectorAll('[data-error]')] : [];
  return entries.find((item) => item.dataset.error === code) ?? entries.find((item) => item.dataset.error === 'unknown') ?? null;
}

/** A fresh Idempotency-Key for one change (a retry of the same click is not sent: buttons are disabled meanwhile). */
const newIdempotencyKey = () => `console-${crypto.randomUUID()}`;

/**
 * Sends `body` as JSON to a route of this origin (POST unless told), with an Idempotency-Key when
 * given: `{ok, body}` or `{error: code}` (`network` when unreachable).
 */
async function post(url, body, options = {}) {
  let response;
  const headers = { 'content-type': 'application/json', accept: 'application/json' };
  if (options.idempotencyKey) headers['idempotency-key'] = options.idempotencyKey;
  try {
    response = await fetch(url, { method: options.method ?? 'POST', credentials: 'same-origin', headers, body: JSON.stringify(body) });
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
  for (const box of document.querySelectorAll('p.error[id$="-error"]')) {
    if (form.contains(box)) {
      box.hidden = true;
      box.textContent = '';
    }
  }
  for (const field of form.querySelectorAll('[aria-invalid]')) field.removeAttribute('aria-invalid');
}

/** Shows the words of `code` beside the field they belong to, or at the form's foot. */
function showError(form, code) {
  const entry = entryFor(form, code);
  const fieldId = entry?.dataset.field;
  const field = fieldId ? document.getElementById(fieldId) : null;
  const box = document.getElementById(`${field ? fieldId : form.id}-error`);
  box.textContent = entry ? entry.textContent : '';
  box.hidden = false;
  if (field) {
    field.setAttribute('aria-invalid', 'true');
    field.focus();
  } else {
    box.scrollIntoView({ block: 'nearest' });
  }
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

function onSignIn(form) {
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearErrors(form);
    const email = form.elements.namedItem('email');
    const password = form.elements.namedItem('password');
    const result = await busy(form, () => post(form.action, { email: email.value, password: password.value }));
    if (result.ok) return window.location.reload();
    password.value = '';
    showError(form, result.error);
  });
}

function onImport(form) {
  const file = document.getElementById('document-file');
  const documentField = form.elements.namedItem('document');
  // An uploaded file is read into the text area: what is sent is what the page shows.
  file?.addEventListener('change', async () => {
    const chosen = file.files?.[0];
    if (chosen) documentField.value = await chosen.text();
  });
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearErrors(form);
    let document;
    try {
      document = JSON.parse(documentField.value);
    } catch {
      document = null;
    }
    if (document === null || typeof document !== 'object' || Array.isArray(document)) return showError(form, 'invalid_json');
    const declaredVersion = form.elements.namedItem('declaredVersion').value.trim();
    const result = await busy(form, () => post(form.action, { declaredVersion, format: 'openapi', document }));
    // The new draft's review page: its impact and breaking changes before any activation.
    if (result.ok) return window.location.assign(form.dataset.next + encodeURIComponent(result.body.contract.id));
    showError(form, result.error);
  });
}

function onActivate(form) {
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearErrors(form);
    const expected = form.elements.namedItem('expectedActiveContractVersionId').value;
    const reason = form.elements.namedItem('reason').value;
    const result = await busy(form, () => post(form.action, { expectedActiveContractVersionId: expected || null, reason }));
    if (!result.ok) return showError(form, result.error);
    form.hidden = true;
    const outcome = document.getElementById('activated');
    outcome.hidden = false;
    outcome.querySelector('h2').focus();
  });
}

function onRuleCreate(form) {
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearErrors(form);
    const value = (name) => form.elements.namedItem(name).value.trim();
    const body = {
      expectedRevision: value('expectedRevision'),
      sourceEventType: value('sourceEventType'),
      expectedObjectType: value('expectedObjectType'),
      maxDelayMs: Number(value('maxDelaySeconds')) * 1000,
      enabled: form.elements.namedItem('enabled').checked,
    };
    const result = await busy(form, () => post(form.action, body, { idempotencyKey: newIdempotencyKey() }));
    // The page is rendered again at the connection's new revision.
    if (result.ok) return window.location.reload();
    showError(form, result.error);
  });
}

function onRuleDelete(form) {
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearErrors(form);
    const body = { expectedRevision: form.elements.namedItem('expectedRevision').value };
    const result = await busy(form, () => post(form.action, body, { method: 'DELETE', idempotencyKey: newIdempotencyKey() }));
    if (result.ok) return window.location.reload();
    showError(form, result.error);
  });
}

/** Times are rendered in UTC; the viewer reads them in their own time zone. */
for (const element of document.querySelectorAll('time[datetime]')) {
  const date = new Date(element.getAttribute('datetime'));
  if (!Number.isNaN(date.getTime())) element.textContent = date.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}

const handlers = { 'sign-in': onSignIn, import: onImport, activate: onActivate, 'rule-create': onRuleCreate, 'rule-delete': onRuleDelete };
for (const form of document.querySelectorAll('form[data-form]')) handlers[form.dataset.form]?.(form);
