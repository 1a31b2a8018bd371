import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { sha256Hex } from '../shared/secrets.js';
import { localTime, pager, safeNext } from '../management/console/consoleRoute.js';
import { CONSOLE_ARTIFACTS, openConsolePage, settleConsolePage } from './helpers/consolePages.js';
import { launchBrowser, type PageProblem, type TestBrowser } from './helpers/browser.js';
import { addWorkspaceMember, createConsoleUser, createUserWithPassword } from './helpers/consoleUsers.js';
import { bootstrapWorkspace, createTestContext, resetClockAndHooks, type TestContext, uniqueEmail } from './helpers/context.js';
import { freePort } from './helpers/ports.js';
import { type SpawnedProcess, spawnProcess } from './helpers/processes.js';

// Issue 31: the console's foundation in a real browser (Debian's Chromium through playwright-core)
// against the compiled management plane over HTTP: sign-up, the verification mail's link, sign-in,
// workspaces (create, archive, restore), a workspace's API keys, sign-out; the keyboard, a
// catalogue error in words, the phone width. `npm run build` first. Screenshots of every page go
// to test-artifacts/console/; each page's server time and load time are printed (not asserted).

const PASSWORD = 'correct horse battery staple';
const ARTIFACTS = CONSOLE_ARTIFACTS;

let ctx: TestContext;
let management: SpawnedProcess;
let browser: TestBrowser;

beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  ctx = await createTestContext();
  // The pages post with their own Origin, which must be the console's origin: the plane serves them.
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

const noProblems = (problems: PageProblem[]) => expect(problems, JSON.stringify(problems, null, 2)).toEqual([]);

const measure = settleConsolePage;
const open = openConsolePage;

/**
 * Runs `action`, which makes the page navigate, and waits for the next page's load; an error the
 * page shows instead fails the test with its words.
 */
async function navigates(page: Page, action: () => Promise<unknown>): Promise<void> {
  const shown = page
    .locator('[data-error-for]:not([hidden])')
    .first()
    .waitFor({ timeout: 20_000 })
    .then(async () => {
      throw new Error(`the page shows an error: ${await page.locator('[data-error-for]:not([hidden])').first().textContent()}`);
    });
  shown.catch(() => {});
  await Promise.race([Promise.all([page.waitForEvent('load', { timeout: 20_000 }), action()]), shown]);
}

async function signIn(page: Page, email: string): Promise<void> {
  await page.getByLabel('E-mail address').fill(email);
  await page.getByLabel('Password').fill(PASSWORD);
  await navigates(page, () => page.getByRole('button', { name: 'Sign in' }).click());
}

/** A verified user with a workspace of their own (operator bootstrap), and their password. */
async function userWithWorkspace(): Promise<{ email: string; slug: string }> {
  const user = await createUserWithPassword(ctx, PASSWORD);
  const boot = await bootstrapWorkspace(ctx, { email: user.email });
  return { email: user.email, slug: boot.workspace.slug };
}

/** No horizontal scroll: the page is no wider than the viewport. */
async function fitsWidth(page: Page): Promise<{ scroll: number; client: number }> {
  return page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth }));
}

describe('the console: accounts and workspaces', () => {
  it('signs up, verifies from the mail, signs in, creates a workspace and an API key, archives, restores, signs out', async () => {
    const page = await browser.newPage();
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: management.url });
    const email = uniqueEmail('console-signup');

    // Sign-up: the page posts to POST /auth/signup and says where the mail went.
    await open(page, `${management.url}/console/signup`, 'signup');
    await page.getByLabel('Your name').fill('Ada Console');
    await page.getByLabel('E-mail address').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.locator('#signed-up').waitFor();
    expect(await page.locator('#signed-up [data-result="user.email"]').textContent()).toBe(email);
    expect(await page.locator('#sign-up').isHidden()).toBe(false);
    await page.screenshot({ path: `${ARTIFACTS}/signup-done.png`, fullPage: true });

    // The mail in the outbox links to the console's verification page, which posts its token.
    const mail = await ctx.deps.pool.query<{ body: { link: string } }>(
      "SELECT body FROM email_outbox WHERE lower(to_email) = lower($1) AND kind = 'email_verification'",
      [email],
    );
    expect(mail.rows).toHaveLength(1);
    const link = mail.rows[0].body.link;
    expect(link).toMatch(new RegExp(`^${management.url.replace(/[.]/g, '\\.')}/console/verify-email\\?token=svc_ver_`));
    // Opening the link alone verifies nothing (a mail scanner may open it): the button does.
    await open(page, link, 'verify-email');
    const before = await ctx.deps.pool.query('SELECT email_verified_at FROM users WHERE lower(email) = lower($1)', [email]);
    expect(before.rows[0].email_verified_at).toBeNull();
    await page.getByRole('button', { name: 'Verify my e-mail address' }).click();
    await page.locator('#verified').waitFor();
    expect(await page.locator('#verified').textContent()).toContain(email);
    const after = await ctx.deps.pool.query('SELECT email_verified_at FROM users WHERE lower(email) = lower($1)', [email]);
    expect(after.rows[0].email_verified_at).not.toBeNull();

    // Sign-in at `/`, then the (empty) workspace list.
    await open(page, `${management.url}/`, 'sign-in');
    await signIn(page, email);
    expect(page.url()).toBe(`${management.url}/`);
    expect(await page.locator('header .email').textContent()).toBe(email);
    expect(await page.locator('main').textContent()).toContain('You are not a member of any workspace yet');
    await measure(page, 'workspaces-empty');

    // Create a workspace: the page reloads with it listed.
    // Names are the user's, slugs (made from the name) the service's: a run of its own makes it unique.
    const workspaceName = `Acme <Payments> ${randomBytes(4).toString('hex')}`;
    await page.getByLabel('Name', { exact: true }).fill(workspaceName);
    await navigates(page, () => page.getByRole('button', { name: 'Create workspace' }).click());
    const row = page.locator('li.workspace');
    expect(await row.count()).toBe(1);
    const slug = await row.getAttribute('data-slug');
    expect(slug).toMatch(/^acme-payments/);
    expect(await row.locator('.name').textContent()).toBe(workspaceName);
    await open(page, `${management.url}/`, 'workspaces');

    // The workspace's API keys page, through its link; the switcher names the workspace.
    await navigates(page, () => row.locator('a.name').click());
    expect(page.url()).toBe(`${management.url}/console/workspaces/${slug}/api-keys`);
    expect(await page.locator('.switcher summary').textContent()).toBe(workspaceName);
    expect(await page.locator('.workspace-nav a[aria-current="page"]').textContent()).toBe('API keys');
    await open(page, page.url(), 'api-keys-empty');
    await page.getByLabel('Name').fill('CI deploys');
    await page.getByLabel('integrations:read').check();
    await page.getByLabel('contracts:write').check();
    await page.getByLabel('Lifetime').selectOption({ label: '90 days' });
    await page.getByRole('button', { name: 'Create API key' }).click();
    await page.locator('#created-key').waitFor();
    const key = (await page.locator('#new-key').textContent()) ?? '';
    expect(key).toMatch(/^svc_api_/);
    await page.screenshot({ path: `${ARTIFACTS}/api-key-created.png`, fullPage: true });
    const stored = await ctx.deps.pool.query<{ name: string; scopes: string[]; expires_at: Date; created_at: Date }>(
      'SELECT name, scopes, expires_at, created_at FROM api_keys WHERE key_hash = $1',
      [sha256Hex(key)],
    );
    expect(stored.rows).toHaveLength(1);
    expect(stored.rows[0].name).toBe('CI deploys');
    expect([...stored.rows[0].scopes].sort()).toEqual(['contracts:write', 'integrations:read']);
    expect(stored.rows[0].expires_at.getTime() - stored.rows[0].created_at.getTime()).toBe(90 * 24 * 3600 * 1000);
    // The copy button puts the key on the clipboard.
    await page.getByRole('button', { name: 'Copy' }).click();
    await expect.poll(() => page.getByRole('button', { name: 'Copied' }).count()).toBe(1);
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(key);
    // Shown once: the list after a reload names the key but never shows it.
    await navigates(page, () => page.getByRole('link', { name: 'Done' }).click());
    const keyRow = page.locator('li.api-key');
    expect(await keyRow.count()).toBe(1);
    expect(await keyRow.locator('.name').textContent()).toBe('CI deploys');
    expect(await keyRow.locator('.badge').textContent()).toBe('active');
    expect(await page.content()).not.toContain(key);
    // Times are shown in the viewer's time zone, the UTC text kept as the title.
    expect(await keyRow.locator('time').first().getAttribute('title')).toMatch(/ UTC$/);
    await open(page, page.url(), 'api-keys');
    // Revoke.
    await navigates(page, () => keyRow.getByRole('button', { name: 'Revoke' }).click());
    expect(await page.locator('li.api-key .badge').textContent()).toBe('revoked');
    const revoked = await ctx.deps.pool.query('SELECT revoked_at FROM api_keys WHERE key_hash = $1', [sha256Hex(key)]);
    expect(revoked.rows[0].revoked_at).not.toBeNull();

    // Archive and restore, from the workspace list.
    await open(page, `${management.url}/`, 'workspaces-again');
    await navigates(page, () => page.locator(`li.workspace[data-slug="${slug}"]`).getByRole('button', { name: 'Archive' }).click());
    expect(await page.locator(`li.workspace[data-slug="${slug}"] .badge`).textContent()).toBe('archived');
    const archived = await ctx.deps.pool.query('SELECT status FROM workspaces WHERE slug = $1', [slug]);
    expect(archived.rows[0].status).toBe('archived');
    await page.screenshot({ path: `${ARTIFACTS}/workspaces-archived.png`, fullPage: true });
    await navigates(page, () => page.locator(`li.workspace[data-slug="${slug}"]`).getByRole('button', { name: 'Restore' }).click());
    expect(await page.locator(`li.workspace[data-slug="${slug}"] .badge`).textContent()).toBe('owner');
    const restored = await ctx.deps.pool.query('SELECT status FROM workspaces WHERE slug = $1', [slug]);
    expect(restored.rows[0].status).toBe('active');

    // Sign out: back to the sign-in form; the session is revoked.
    await navigates(page, () => page.locator('header').getByRole('button', { name: 'Sign out' }).click());
    expect(page.url()).toBe(`${management.url}/`);
    await page.locator('#sign-in').waitFor();
    const sessions = await ctx.deps.pool.query(
      'SELECT count(*)::int AS n FROM sessions s JOIN users u ON u.id = s.user_id WHERE lower(u.email) = lower($1) AND s.revoked_at IS NULL',
      [email],
    );
    expect(sessions.rows[0].n).toBe(0);
    noProblems(browser.problems());
  });

  it('sends a signed-out visitor of a workspace page to sign-in and back; a stranger gets the 404 page', async () => {
    const owner = await userWithWorkspace();
    const stranger = await createUserWithPassword(ctx, PASSWORD);
    const page = await browser.newPage();
    const target = `/console/workspaces/${owner.slug}/api-keys`;
    const first = await page.goto(`${management.url}${target}`);
    expect(first?.status()).toBe(200);
    expect(page.url()).toBe(`${management.url}/?next=${encodeURIComponent(target)}`);
    await signIn(page, owner.email);
    expect(page.url()).toBe(`${management.url}${target}`);
    expect(await page.locator('h1').textContent()).toBe('API keys');

    // Another signed-in user: the workspace does not exist for them (the same page as a made-up slug).
    const other = await browser.newPage();
    await other.goto(`${management.url}/`);
    await signIn(other, stranger.email);
    for (const slug of [owner.slug, 'no-such-workspace']) {
      const response = await other.goto(`${management.url}/console/workspaces/${slug}/api-keys`);
      expect(response?.status()).toBe(404);
      expect(await other.locator('h1').textContent()).toBe('Not found');
    }
    await other.screenshot({ path: `${ARTIFACTS}/not-found.png`, fullPage: true });
    // Chromium logs the 404 documents as failed resources; nothing else is logged.
    expect(browser.problems()).toEqual([
      expect.objectContaining({ kind: 'console', text: expect.stringMatching(/status of 404 \(Not Found\)/) }),
      expect.objectContaining({ kind: 'console', text: expect.stringMatching(/status of 404 \(Not Found\)/) }),
    ]);
  });

  it('signs in with the keyboard alone', async () => {
    const owner = await userWithWorkspace();
    const page = await browser.newPage();
    await open(page, `${management.url}/`, 'sign-in-keyboard');
    await expect.poll(() => page.evaluate(() => document.activeElement?.id)).toBe('email');
    await page.keyboard.type(owner.email);
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('password');
    await page.keyboard.type(PASSWORD);
    await navigates(page, () => page.keyboard.press('Enter'));
    expect(await page.locator('header .email').textContent()).toBe(owner.email);
    expect(await page.locator(`li.workspace[data-slug="${owner.slug}"]`).count()).toBe(1);
    noProblems(browser.problems());
  });

  it('shows a catalogue error in words beside its field', async () => {
    const owner = await userWithWorkspace();
    const page = await browser.newPage();
    await page.goto(`${management.url}/`);
    await signIn(page, owner.email);
    await page.getByLabel('Name', { exact: true }).fill('Second workspace');
    // The owner's own slug is taken: 409 `workspace_slug_unavailable`, shown beside the address field.
    await page.getByLabel('Address (optional)').fill(owner.slug);
    await page.getByRole('button', { name: 'Create workspace' }).click();
    const box = page.locator('#create-workspace-slug-error');
    await box.waitFor();
    expect(await box.textContent()).toBe('This address is taken. Choose another one.');
    const field = page.getByLabel('Address (optional)');
    expect(await field.getAttribute('aria-invalid')).toBe('true');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('workspace-slug');
    expect(await page.locator('#create-workspace-name-error').isHidden()).toBe(true);
    await page.screenshot({ path: `${ARTIFACTS}/workspace-error.png`, fullPage: true });
    // A malformed address is another code, beside the same field; fixing it clears the mark.
    await field.fill('Not A Slug!');
    await page.getByRole('button', { name: 'Create workspace' }).click();
    await expect.poll(() => box.textContent()).toMatch(/^The address must be up to 48 lower-case letters/);
    // The routes' 409 and 400 are the only things Chromium logs: network lines, not script errors.
    expect(browser.problems()).toEqual([
      expect.objectContaining({ kind: 'console', text: expect.stringMatching(/status of 409 \(Conflict\)/) }),
      expect.objectContaining({ kind: 'console', text: expect.stringMatching(/status of 400 \(Bad Request\)/) }),
    ]);
  });

  it('fits a 375 px phone: no horizontal scroll on any page', async () => {
    const owner = await userWithWorkspace();
    const page = await browser.newPage({ phone: true });
    await page.setViewportSize({ width: 375, height: 740 });
    for (const [path, name] of [
      ['/', 'phone-sign-in'],
      ['/console/signup', 'phone-signup'],
      ['/console/verify-email?token=x', 'phone-verify-email'],
    ] as const) {
      await open(page, `${management.url}${path}`, name);
      const width = await fitsWidth(page);
      expect(width.scroll, path).toBeLessThanOrEqual(width.client);
    }
    await page.goto(`${management.url}/`);
    await signIn(page, owner.email);
    for (const [path, name] of [
      ['/', 'phone-workspaces'],
      [`/console/workspaces/${owner.slug}/api-keys`, 'phone-api-keys'],
    ] as const) {
      await open(page, `${management.url}${path}`, name);
      expect(await page.locator('header .email').isVisible()).toBe(true);
      const width = await fitsWidth(page);
      expect(width.scroll, path).toBeLessThanOrEqual(width.client);
    }
    // The switcher opens within the width too.
    await page.locator('.switcher summary').click();
    const width = await fitsWidth(page);
    expect(width.scroll).toBeLessThanOrEqual(width.client);
    await page.screenshot({ path: `${ARTIFACTS}/phone-switcher.png`, fullPage: true });
    noProblems(browser.problems());
  });
});

describe('the API keys page for those who cannot manage keys', () => {
  const page = (slug: string, sessionToken: string) =>
    ctx.app.inject({ method: 'GET', url: `/console/workspaces/${slug}/api-keys`, headers: { cookie: `session=${sessionToken}` } });

  it('tells a viewer that owners and admins manage keys, with no form', async () => {
    const owner = await bootstrapWorkspace(ctx);
    const viewer = await createConsoleUser(ctx);
    await addWorkspaceMember(ctx, owner.workspace.id, viewer.userId, 'viewer');
    const res = await page(owner.workspace.slug, viewer.sessionToken);
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('Only owners and admins of this workspace manage its API keys.');
    expect(res.body).not.toContain('id="create-api-key"');
    expect(res.body).not.toContain(owner.apiKey.id);
  });

  it('tells the owner of an archived workspace to restore it first', async () => {
    const owner = await bootstrapWorkspace(ctx);
    await ctx.deps.pool.query("UPDATE workspaces SET status = 'archived' WHERE id = $1", [owner.workspace.id]);
    const res = await page(owner.workspace.slug, owner.sessionToken);
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('This workspace is archived. Restore it to manage its API keys.');
    expect(res.body).not.toContain('id="create-api-key"');
  });

  it('asks an unverified user to verify the e-mail address first', async () => {
    const user = await createConsoleUser(ctx, { verified: false });
    const res = await page('any-workspace', user.sessionToken);
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('Open the link in the verification e-mail we sent you');
    expect(res.body).not.toContain('any-workspace');
  });
});

describe('console page helpers', () => {
  it('pager: "Next page" carries the cursor and the other parameters, "First page" drops the cursor', () => {
    expect(pager('/console/workspaces/w/incidents', {}, null)).toBeNull();
    expect(pager('/console/workspaces/w/incidents', { mode: 'live' }, 'c1.x')?.markup).toBe(
      '<nav class="pager" aria-label="Pages"><a href="/console/workspaces/w/incidents?mode=live&amp;cursor=c1.x" rel="next">Next page</a></nav>',
    );
    expect(pager('/p', { cursor: 'c1', mode: 'live' }, null)?.markup).toBe(
      '<nav class="pager" aria-label="Pages"><a href="/p?mode=live">First page</a></nav>',
    );
    expect(pager('/p', { cursor: 'c1', x: '"<&>' }, 'c2')?.markup).toBe(
      '<nav class="pager" aria-label="Pages"><a href="/p?x=%22%3C%26%3E">First page</a><a href="/p?x=%22%3C%26%3E&amp;cursor=c2" rel="next">Next page</a></nav>',
    );
  });

  it('localTime: a <time> with the instant, UTC text until the script runs', () => {
    expect(localTime('2026-11-29T09:05:07.123Z').markup).toBe('<time datetime="2026-11-29T09:05:07.123Z">2026-11-29 09:05 UTC</time>');
    expect(localTime(null).markup).toBe('—');
    expect(localTime('"><b>').markup).toBe('<time datetime="&quot;&gt;&lt;b&gt;">&quot;&gt;&lt;b&gt;</time>');
  });

  it('safeNext: only a console path of this origin', () => {
    expect(safeNext('/console/workspaces/a/api-keys?x=1')).toBe('/console/workspaces/a/api-keys?x=1');
    for (const bad of [undefined, '', '/', '//evil.test/console/', 'https://evil.test/console/', '/console\\evil', '/device']) {
      expect(safeNext(bad), String(bad)).toBeNull();
    }
  });
});
