// The device page's script (GET /device, management/console/deviceView.ts). It only sends the
// page's forms to the routes their `action` names, as JSON, and shows the answer: the words of
// each error come from the page (rendered server-side), never from here.

/** The words of `code` for `form`, from the page's inert `<template class="error-words">`. */
function wordsFor(form, code) {
  const template = document.querySelector(`template.error-words[data-form="${form.dataset.form}"]`);
  const entries = template ? [...template.content.querySelectorAll('[data-error]')] : [];
  const entry = entries.find((item) => item.dataset.error === code) ?? entries.find((item) => item.dataset.error === 'unknown');
  return entry ? entry.textContent : '';
}

/** POSTs `body` as JSON to a route of this origin: `{ok, body}` or `{error: code}` (`network` when unreachable). */
async function post(url, body) {
  let response;
  try {
    response = await fetch(url, {
      method: 'POST',
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

function showError(form, code, field) {
  const box = document.getElementById(`${form.id}-error`);
  box.textContent = wordsFor(form, code);
  box.hidden = false;
  if (field) {
    field.setAttribute('aria-invalid', 'true');
    field.focus();
  }
}

function clearError(form) {
  const box = document.getElementById(`${form.id}-error`);
  box.hidden = true;
  box.textContent = '';
  for (const field of form.querySelectorAll('[aria-invalid]')) field.removeAttribute('aria-invalid');
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
    clearError(form);
    const email = form.elements.namedItem('email');
    const password = form.elements.namedItem('password');
    const result = await busy(form, () => post(form.action, { email: email.value, password: password.value }));
    // Signed in: the server renders the next step (consent, or the code to enter) for this address.
    if (result.ok) return window.location.reload();
    password.value = '';
    showError(form, result.error, result.error === 'unauthenticated' ? password : email);
  });
}

function onSignOut(form) {
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearError(form);
    const result = await busy(form, () => post(form.action, {}));
    // A session that has already ended is as signed out as one ended now.
    if (result.ok || result.error === 'unauthenticated') return window.location.reload();
    showError(form, result.error, null);
  });
}

function onConsent(form) {
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearError(form);
    const decision = event.submitter?.value === 'deny' ? 'deny' : 'approve';
    const userCode = form.elements.namedItem('user_code');
    const result = await busy(form, () => post(form.action, { user_code: userCode.value, decision }));
    if (result.ok) {
      form.hidden = true;
      document.getElementById('request').hidden = true;
      const outcome = document.getElementById(decision === 'approve' ? 'approved' : 'denied');
      outcome.hidden = false;
      outcome.querySelector('h2').focus();
      return;
    }
    showError(form, result.error, userCode);
    document.getElementById('sign-in-again').hidden = result.error !== 'unauthenticated';
  });
}

const handlers = { 'sign-in': onSignIn, 'sign-out': onSignOut, consent: onConsent };
for (const form of document.querySelectorAll('form[data-form]')) handlers[form.dataset.form]?.(form);
