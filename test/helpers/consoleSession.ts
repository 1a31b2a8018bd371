import type { Page } from 'playwright-core';
import type { TestBrowser } from './browser.js';

/**
 * A browser page signed in as the holder of `sessionToken` (the HttpOnly cookie `POST /auth/login`
 * sets) on the management plane at `baseUrl`, at phone width when `phone`; the page may read and
 * write the clipboard, for the pages' Copy buttons.
 */
export async function signedInPage(
  browser: TestBrowser,
  baseUrl: string,
  sessionToken: string,
  options: { phone?: boolean } = {},
): Promise<Page> {
  const page = await browser.newPage(options);
  await page.context().addCookies([{ name: 'session', value: sessionToken, url: baseUrl, httpOnly: true, sameSite: 'Lax' }]);
  await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: baseUrl });
  return page;
}
