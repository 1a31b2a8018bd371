import type { Page } from 'playwright-core';
import type { TestBrowser } from './browser.js';

/**
 * A browser page signed in as the holder of `sessionToken` (the session cookie `POST /auth/login`
 * sets) on the management plane at `baseUrl`; at phone width with `phone`; allowed to use the
 * clipboard with `clipboard`.
 */
export async function signedInPage(
  browser: TestBrowser,
  baseUrl: string,
  sessionToken: string,
  options: { phone?: boolean; clipboard?: boolean } = {},
): Promise<Page> {
  const page = await browser.newPage({ phone: options.phone });
  const url = new URL(baseUrl);
  await page
    .context()
    .addCookies([{ name: 'session', value: sessionToken, domain: url.hostname, path: '/', httpOnly: true, sameSite: 'Lax' }]);
  if (options.clipboard) await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: baseUrl });
  return page;
}
