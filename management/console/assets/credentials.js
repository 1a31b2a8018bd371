// The Integrations page's script (GET /console/{slug}/integrations, management/console/integrationsView.ts):
// sends a credential form's action to the session route its `action` names, as JSON with a fresh
// Idempotency-Key, and shows the answer. A new ingest token is shown once, with the collector
// configuration; the words of each error come from the page's template, never from here.

function wordsFor(code) {
  const template = document.querySelector('template.error-words[data-form="credential"]');
  const entries = template ? [...template.content.querySelectorAll('[data-error]')] : [];
  const entry = entries.find((item) => item.dataset.error === code) ?? entries.find((item) => item.dataset.error === 'unknown');
  return entry ? entry.textContent : '';
}

async function post(url, body) {
  let response;
  try {
    response = await fetch(url, {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'content-type': 'application/json', accept: 'application/json', 'idempotency-key': crypto.randomUUID() },
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

/** The words of a credential status, from the page's `<template class="status-words">`. */
function statusWords(status) {
  const entry = document.querySelector('template.status-words')?.content.querySelector(`[data-status="${status}"]`);
  return entry ? entry.textContent : status;
}

function showStatus(form, credential) {
  form.dataset.revision = credential.revision;
  form.querySelector('.credential-status').textContent = statusWords(credential.status);
  const active = credential.status === 'active';
  form.querySelector('button[value="issue"]').hidden = active;
  form.querySelector('button[value="rotate"]').hidden = !active;
  form.querySelector('button[value="revoke"]').hidden = !active;
}

function showToken(form, receipt) {
  const section = form.querySelector('.token');
  const token = section.querySelector('.token-value');
  token.value = receipt.ingestToken;
  section.querySelector('.snippet').value = [
    `INTEGRATION_KEY=${form.dataset.integrationKey}`,
    `CONNECTION_KEY=${receipt.connectionKey}`,
    `INGEST_TOKEN=${receipt.ingestToken}`,
  ].join('\n');
  section.querySelector('.copied').hidden = true;
  section.hidden = false;
  token.focus();
  token.select();
}

function hideToken(form) {
  const section = form.querySelector('.token');
  section.hidden = true;
  section.querySelector('.token-value').value = '';
  section.querySelector('.snippet').value = '';
}

function onCredentialForm(form) {
  const box = document.getElementById(`${form.id}-error`);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const action = event.submitter?.value;
    if (!['issue', 'rotate', 'revoke'].includes(action)) return;
    box.hidden = true;
    box.textContent = '';
    const buttons = [...form.querySelectorAll('.actions button')];
    for (const button of buttons) button.disabled = true;
    form.setAttribute('aria-busy', 'true');
    let result;
    try {
      result = await post(`${form.getAttribute('action')}${action}`, { expectedRevision: form.dataset.revision });
    } finally {
      form.removeAttribute('aria-busy');
      for (const button of buttons) button.disabled = false;
    }
    if (!result.ok) {
      box.textContent = wordsFor(result.error);
      box.hidden = false;
      return;
    }
    showStatus(form, result.body.credential);
    if (typeof result.body.ingestToken === 'string') showToken(form, result.body);
    else hideToken(form);
  });
}

function onCopy(button) {
  button.addEventListener('click', async () => {
    const field = document.getElementById(button.dataset.copy);
    const status = button.closest('.token').querySelector('.copied');
    try {
      await navigator.clipboard.writeText(field.value);
      status.textContent = status.dataset.done;
    } catch {
      // No clipboard permission: leave the value selected for the person to copy.
      field.focus();
      field.select();
      status.textContent = status.dataset.failed;
    }
    status.hidden = false;
  });
}

for (const form of document.querySelectorAll('form[data-form="credential"]')) onCredentialForm(form);
for (const button of document.querySelectorAll('button.copy')) onCopy(button);
