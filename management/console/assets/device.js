// The device page's script (GET /device, management/console/deviceView.ts). It only sends the
// page's forms to the routes their `action` names, as JSON, and shows the answer: the words of
// each error come from the page (rendered server-side), never from here.

import { busy, send } from './send-json.js';

/** The words of `code` for `form`, from the page's inert `<template class="error-words">`. */
function wordsFor(form, code) {
  const template = document.querySelector(`template.error-words[data-form="${form.dataset.form}"]`);
  const entries = template ? [...template.content.querySelectorAll('[data-error]')] : [];
  const entry = entries.find((item) => item.dataset.error === code) ?? entries.find((item) => item.dataset.error === 'unknown');
  return entry ? entry.textContent : '';
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

function onSignIn(form) {
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearError(form);
    const email = form.elements.namedItem('email');
    const password = form.elements.namedItem('password');
    const result = await busy(form, () => send('POST', form.action, { email: email.value, password: password.value }));
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
    const result = await busy(form, () => send('POST', form.action, {}));
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
    const result = await busy(form, () => send('POST', form.action, { user_code: userCode.value, decision }));
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
