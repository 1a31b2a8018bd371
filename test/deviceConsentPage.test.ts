import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { CLI_OAUTH_CLIENT_ID, CLI_OAUTH_CLIENT_NAME } from '../management/oauth/rules.js';
import { CONSOLE_CSP } from '../management/console/securityHeaders.js';
import { scopeInWords } from '../management/console/scopeWords.js';
import { launchBrowser, type PageProblem, type TestBrowser } from './helpers/browser.js';
import { createUserWithPassword } from './helpers/consoleUsers.js';
import { advanceClock, createTestContext, resetClockAndHooks, type TestContext } from './helpers/context.js';
import { freePort } from './helpers/ports.js';
import { type SpawnedProcess, spawnProcess } from './helpers/processes.js';

// Issue 28 item 8: the account CLI's sign-in and consent page in a real browser (Debian's
// Chromium through playwright-core), against the compiled management plane over HTTP: the CLI's
// side is plain HTTP (device code, token polls), the person's side is the page at
// `verification_uri_complete` (RFC 8628 §3.3). `npm run build` first.

const PASSWORD = 'correct horse battery staple';
const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';
/** What the CLI asks for, in no particular order (the page lists what the grant records). */
const REQUESTED = ['service:cli:incidents:read', 'offline_access', 'service:cli:integrations:read', 'service:cli:repairs:approve'];

let ctx: TestContext;
let management: SpawnedProcess;
let browser: TestBrowser;

beforeAll(async () => {
  ctx = await createTestContext();
  // The page posts the consent with the session cookie and its own Origin, which must be the
  // console's origin: the management plane serves the page, so it is its own address.
  const port = await freePort();
  management = await spawnProcess('dist/management/main.js', 'MANAGEMENT_PORT', { CONSOLE_ORIGIN: `http://127.0.0.1:${port}` }, port);
  browser = await launchBrowser();
});
afterEach(async () => {
  browser.clearProblems();
  await resetClockAndHooks(ctx);
});
afterAll(async () => {
  await browser?.close();
  await management?.stop();
  await ctx?.close();
});

interface DeviceAuthorization {
  device_code: string;
  user_code: string;
  verification_uri: string;
  verification_uri_complete: string;
  interval: number;
}

/** The CLI's first call, as the CLI makes it: a form post (RFC 8628 §3.1). */
async function requestDeviceCode(scopes: readonly string[] = REQUESTED): Promise<DeviceAuthorization> {
  const response = await fetch(`${management.url}/oauth/device/code`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ client_id: CLI_OAUTH_CLIENT_ID, scope: scopes.join(' ') }),
  });
  const body = await response.json();
  expect(response.status, JSON.stringify(body)).toBe(200);
  return body as DeviceAuthorization;
}

/** One token poll (RFC 8628 §3.4). */
async function pollToken(deviceCode: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${management.url}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: DEVICE_GRANT, device_code: deviceCode, client_id: CLI_OAUTH_CLIENT_ID }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** Opens `url` and checks what every console page answers with: HTML, the CSP and its companions. */
async function open(page: Page, url: string): Promise<void> {
  const response = await page.goto(url);
  expect(response?.status(), url).toBe(200);
  const headers = response!.headers();
  expect(headers['content-type']).toBe('text/html; charset=utf-8');
  expect(headers['content-security-policy']).toBe(CONSOLE_CSP);
  expect(headers['x-content-type-options']).toBe('nosniff');
  expect(headers['referrer-policy']).toBe('no-referrer');
}

/** Signs in on the page with the keyboard alone: the e-mail field has the focus, Tab, Enter. */
async function signInWithKeyboard(page: Page, email: string): Promise<void> {
  await expect.poll(() => page.evaluate(() => document.activeElement?.id)).toBe('email');
  await page.keyboard.type(email);
  await page.keyboard.press('Tab');
  await page.keyboard.type(PASSWORD);
  await Promise.all([page.waitForEvent('load'), page.keyboard.press('Enter')]);
}

/** Tabs from where the focus is to the button named `name` (at most 20 steps), then presses Enter. */
async function pressButtonWithKeyboard(page: Page, name: string): Promise<void> {
  for (let step = 0; step < 20; step++) {
    await page.keyboard.press('Tab');
    const focused = await page.evaluate(() =>
      document.activeElement instanceof HTMLButtonElement ? document.activeElement.textContent : null,
    );
    if (focused === name) return page.keyboard.press('Enter');
  }
  throw new Error(`no button "${name}" within 20 tabs`);
}

/** The permissions the consent step lists: each literal name and its words. */
async function listedScopes(page: Page): Promise<{ name: string; words: string | null }[]> {
  return page.locator('ul.scopes li').evaluateAll((items) =>
    items.map((item) => ({
      name: item.querySelector('.scope-name')?.textContent ?? '',
      words: item.querySelector('.scope-words')?.textContent ?? null,
    })),
  );
}

const noProblems = (problems: PageProblem[]) => expect(problems, JSON.stringify(problems, null, 2)).toEqual([]);

describe('the device page in a browser', () => {
  it('signs a verified user in, shows the exact permissions, approves, and the polling CLI gets its token', async () => {
    const user = await createUserWithPassword(ctx, PASSWORD);
    const device = await requestDeviceCode();
    expect(device.verification_uri).toBe(`${management.url}/device`);
    expect(device.verification_uri_complete).toBe(`${management.url}/device?user_code=${device.user_code}`);
    expect(await pollToken(device.device_code)).toEqual({ status: 400, body: { error: 'authorization_pending' } });

    const page = await browser.newPage();
    await open(page, device.verification_uri_complete);
    await expect.poll(() => page.locator('.user-code').textContent()).toBe(device.user_code);
    await signInWithKeyboard(page, user.email);

    // The consent step, rendered for the signed-in user.
    await page.locator('#consent').waitFor();
    expect(await page.locator('.client-name').textContent()).toBe(CLI_OAUTH_CLIENT_NAME);
    expect(await page.getByLabel('Code').inputValue()).toBe(device.user_code);
    const listed = await listedScopes(page);
    expect(listed.map((scope) => scope.name).sort()).toEqual([...REQUESTED].sort());
    for (const scope of listed) expect(scope.words, scope.name).toBe(scopeInWords(scope.name));
    expect(await page.locator('header .email').textContent()).toBe(user.email);

    await pressButtonWithKeyboard(page, 'Approve');
    await page.locator('#approved').waitFor();
    expect(await page.locator('#approved').textContent()).toContain('You can return to your terminal');
    expect(await page.locator('#consent').isHidden()).toBe(true);
    // The focus moves to the outcome, for a screen reader and the keyboard.
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Approved');

    // The CLI polls again after its interval (the test clock stands in for the wait).
    await advanceClock(ctx, device.interval * 1000);
    const token = await pollToken(device.device_code);
    expect(token.status, JSON.stringify(token.body)).toBe(200);
    expect(token.body).toMatchObject({ access_token: expect.any(String), token_type: 'Bearer', expires_in: 900 });
    expect(String(token.body.scope).split(' ').sort()).toEqual([...REQUESTED].sort());
    noProblems(browser.problems());
  });

  it('denies: the page says so and the polling CLI gets `access_denied`', async () => {
    const user = await createUserWithPassword(ctx, PASSWORD);
    const device = await requestDeviceCode();
    const page = await browser.newPage();
    await open(page, device.verification_uri_complete);
    await page.getByLabel('E-mail address').fill(user.email);
    await page.getByLabel('Password').fill(PASSWORD);
    await Promise.all([page.waitForEvent('load'), page.getByRole('button', { name: 'Sign in' }).click()]);
    await page.getByRole('button', { name: 'Deny' }).click();
    await page.locator('#denied').waitFor();
    expect(await page.locator('#denied').textContent()).toContain('The CLI gets no access to your account');
    expect(await pollToken(device.device_code)).toEqual({ status: 400, body: { error: 'access_denied' } });
    // The decision is made once: the same page cannot turn it into an approval.
    await open(page, device.verification_uri_complete);
    expect(await page.locator('#code-error').textContent()).toMatch(/^This code is wrong, has expired or was already used\./);
    noProblems(browser.problems());
  });

  it('shows a wrong code, and a wrong password, in words beside the field', async () => {
    const user = await createUserWithPassword(ctx, PASSWORD);
    const page = await browser.newPage();
    await open(page, `${management.url}/device`);
    await page.getByLabel('E-mail address').fill(user.email);
    await page.getByLabel('Password').fill('not the password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.locator('#sign-in-error').waitFor();
    expect(await page.locator('#sign-in-error').textContent()).toBe('The e-mail address or the password is wrong.');
    expect(await page.getByLabel('Password').getAttribute('aria-invalid')).toBe('true');
    // The route's 401 is the one thing Chromium logs: a network line, not a script error.
    expect(browser.problems()).toEqual([
      expect.objectContaining({ kind: 'console', text: expect.stringMatching(/status of 401 \(Unauthorized\)/) }),
    ]);
    browser.clearProblems();

    await page.getByLabel('Password').fill(PASSWORD);
    await Promise.all([page.waitForEvent('load'), page.getByRole('button', { name: 'Sign in' }).click()]);
    // No code in the address: an empty, editable field. A wrong code comes back with its error.
    const field = page.getByLabel('Code shown in your terminal');
    expect(await field.inputValue()).toBe('');
    await field.fill('BBBB-BBBB');
    await Promise.all([page.waitForEvent('load'), field.press('Enter')]);
    expect(await page.locator('#code-error').textContent()).toMatch(/^This code is wrong, has expired or was already used\./);
    expect(await field.getAttribute('aria-invalid')).toBe('true');
    expect(await field.inputValue()).toBe('BBBB-BBBB');

    // The right code, typed as people type it, leads to the consent step.
    const device = await requestDeviceCode(['service:cli:contracts:read']);
    await field.fill(device.user_code.toLowerCase().replace('-', ' '));
    await Promise.all([page.waitForEvent('load'), field.press('Enter')]);
    expect(await page.getByLabel('Code').inputValue()).toBe(device.user_code);
    expect((await listedScopes(page)).map((scope) => scope.name)).toEqual(['service:cli:contracts:read']);
    noProblems(browser.problems());
  });

  it('asks to sign in again when the session ends before the decision', async () => {
    const user = await createUserWithPassword(ctx, PASSWORD);
    const device = await requestDeviceCode();
    const page = await browser.newPage();
    await open(page, device.verification_uri_complete);
    await page.getByLabel('E-mail address').fill(user.email);
    await page.getByLabel('Password').fill(PASSWORD);
    await Promise.all([page.waitForEvent('load'), page.getByRole('button', { name: 'Sign in' }).click()]);
    await page.locator('#consent').waitFor();
    await ctx.deps.pool.query('UPDATE sessions SET revoked_at = now() WHERE user_id = $1', [user.userId]);
    await page.getByRole('button', { name: 'Approve' }).click();
    await page.locator('#consent-error').waitFor();
    expect(await page.locator('#consent-error').textContent()).toBe('Your session has ended. Sign in again to continue.');
    expect(browser.problems()).toEqual([
      expect.objectContaining({ kind: 'console', text: expect.stringMatching(/status of 401 \(Unauthorized\)/) }),
    ]);
    browser.clearProblems();
    await Promise.all([page.waitForEvent('load'), page.getByRole('link', { name: 'Sign in again' }).click()]);
    await page.locator('#sign-in').waitFor();
    expect(await page.locator('.user-code').textContent()).toBe(device.user_code);
    expect(await pollToken(device.device_code)).toEqual({ status: 400, body: { error: 'authorization_pending' } });
    noProblems(browser.problems());
  });

  it('works at phone width: nothing wider than the screen, buttons in reach', async () => {
    const user = await createUserWithPassword(ctx, PASSWORD);
    const device = await requestDeviceCode();
    const page = await browser.newPage({ phone: true });
    await open(page, device.verification_uri_complete);
    const overflow = () => page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(await overflow()).toBeLessThanOrEqual(0);
    await page.getByLabel('E-mail address').fill(user.email);
    await page.getByLabel('Password').fill(PASSWORD);
    await Promise.all([page.waitForEvent('load'), page.getByRole('button', { name: 'Sign in' }).tap()]);
    await page.locator('#consent').waitFor();
    expect(await overflow()).toBeLessThanOrEqual(0);
    for (const name of ['Approve', 'Deny']) {
      const box = await page.getByRole('button', { name }).boundingBox();
      expect(box!.x).toBeGreaterThanOrEqual(0);
      expect(box!.x + box!.width).toBeLessThanOrEqual(360);
      expect(box!.height).toBeGreaterThanOrEqual(44);
    }
    await page.getByRole('button', { name: 'Approve' }).tap();
    await page.locator('#approved').waitFor();
    noProblems(browser.problems());
  });

  it('asks for the e-mail to be verified before showing any request', async () => {
    const user = await createUserWithPassword(ctx, PASSWORD, { verified: false });
    const device = await requestDeviceCode();
    const page = await browser.newPage();
    await open(page, device.verification_uri_complete);
    await page.getByLabel('E-mail address').fill(user.email);
    await page.getByLabel('Password').fill(PASSWORD);
    await Promise.all([page.waitForEvent('load'), page.getByRole('button', { name: 'Sign in' }).click()]);
    expect(await page.locator('main').textContent()).toContain('Your e-mail address is not verified yet');
    expect(await page.locator('#consent').count()).toBe(0);
    // Signing out leads back to the sign-in form.
    await Promise.all([page.waitForEvent('load'), page.getByRole('button', { name: 'Sign out' }).click()]);
    await page.locator('#sign-in').waitFor();
    expect(await pollToken(device.device_code)).toEqual({ status: 400, body: { error: 'authorization_pending' } });
    noProblems(browser.problems());
  });
});
