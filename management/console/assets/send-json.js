// What the console's two scripts share (console.js for every form, device.js for the device page's
// consent): a JSON request to this origin and a form's busy state. An ES module of the same
// origin, so the pages' Content-Security-Policy (script-src 'self') admits it.

/**
 * Sends `body` as JSON to a route of this origin, with a fresh `Idempotency-Key` when `idempotent`:
 * `{ok, body}` or `{error: code}` (`network` when unreachable, `unknown` without a catalogue code).
 */
export async function send(method, url, body, idempotent = false) {
  const headers = { 'content-type': 'application/json', accept: 'application/json' };
  // A keyed route: a fresh key for each submission (the form's buttons are disabled meanwhile).
  if (idempotent) headers['idempotency-key'] = crypto.randomUUID();
  let response;
  try {
    response = await fetch(url, {
      method,
      credentials: 'same-origin',
      headers,
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

/** Runs `work` with the form's buttons disabled, so that one click sends one request. */
export async function busy(form, work) {
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
