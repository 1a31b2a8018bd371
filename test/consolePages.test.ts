import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderDevicePage } from '../management/console/deviceView.js';
import { errorInWords } from '../management/console/errorWords.js';
import { SafeHtml, escapeHtml, html } from '../management/console/html.js';
import { CLI_SCOPE_WORDS, scopeInWords } from '../management/console/scopeWords.js';
import { CLI_SCOPES, OFFLINE_ACCESS_SCOPE } from '../management/auth/scopes.js';
import { CONSOLE_CSP } from '../management/console/securityHeaders.js';
import { createConsoleUser } from './helpers/consoleUsers.js';
import { createTestContext, type TestContext } from './helpers/context.js';

// Issue 28 item 8: the device sign-in and consent page and its assets, without a browser (the
// browser test is test/deviceConsentPage.test.ts): the escaping every page relies on, the
// security headers, content types and caching of each answer, and what each step renders.

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(async () => {
  await ctx.close();
});

/** Undoes `escapeHtml` (the five entities it writes). */
const unescapeHtml = (text: string) =>
  text.replace(/&(amp|lt|gt|quot|#39);/g, (_, name: string) => ({ amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'" })[name]!);

describe('escapeHtml', () => {
  it('writes the five markup characters as entities and leaves the rest alone', () => {
    expect(escapeHtml(`<script>alert("x" + 'y') && 1</script>`)).toBe(
      '&lt;script&gt;alert(&quot;x&quot; + &#39;y&#39;) &amp;&amp; 1&lt;/script&gt;',
    );
    expect(escapeHtml('&amp;')).toBe('&amp;amp;');
    expect(escapeHtml('Zoë — 東京 `x` =/\\')).toBe('Zoë — 東京 `x` =/\\');
    expect(escapeHtml('')).toBe('');
  });

  it('leaves no character that can end a text run or a quoted attribute, and loses nothing', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 60 }), fc.string({ unit: 'binary', maxLength: 60 }), (a, b) => {
        for (const text of [a, b, `${a}<"'&>${b}`]) {
          const escaped = escapeHtml(text);
          expect(escaped).not.toMatch(/[<>"']/);
          // Every & starts one of the entities written.
          expect(escaped.replace(/&(amp|lt|gt|quot|#39);/g, '')).not.toContain('&');
          expect(unescapeHtml(escaped)).toBe(text);
        }
      }),
      { numRuns: 500 },
    );
  });
});

describe('html', () => {
  it('escapes interpolated text, keeps nested templates as markup, and drops null, undefined and false', () => {
    const name = '<img src=x onerror=alert(1)>';
    const inner = html`<b>${name}</b>`;
    expect(inner).toBeInstanceOf(SafeHtml);
    const page = html`<p title="${name}">${inner}${null}${undefined}${false}${[html`<i>1</i>`, '<2>']}${3}</p>`;
    expect(page.markup).toBe(
      '<p title="&lt;img src=x onerror=alert(1)&gt;"><b>&lt;img src=x onerror=alert(1)&gt;</b><i>1</i>&lt;2&gt;3</p>',
    );
  });
});

async function getPage(url: string, sessionToken?: string) {
  return ctx.app.inject({ method: 'GET', url, headers: sessionToken ? { cookie: `session=${sessionToken}` } : {} });
}

function expectPageHeaders(res: { headers: Record<string, unknown> }) {
  expect(res.headers['content-security-policy']).toBe(CONSOLE_CSP);
  expect(res.headers['x-content-type-options']).toBe('nosniff');
  expect(res.headers['referrer-policy']).toBe('no-referrer');
}

describe('GET /device', () => {
  it('is an HTML page, never cached, under a strict Content-Security-Policy', async () => {
    const res = await getPage('/device?user_code=BCDF-GHJK');
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.headers['cache-control']).toBe('no-store');
    expectPageHeaders(res);
    for (const directive of [
      "default-src 'none'",
      "script-src 'self'",
      "style-src 'self'",
      "connect-src 'self'",
      "img-src 'self'",
      "form-action 'self'",
      "base-uri 'none'",
      "frame-ancestors 'none'",
    ]) {
      expect(CONSOLE_CSP.split('; ')).toContain(directive);
    }
  });

  it('loads only its own assets: no inline script, style or event handler', async () => {
    const { body } = await getPage('/device?user_code=BCDF-GHJK');
    const scripts = [...body.matchAll(/<script\b[^>]*>/g)].map(([tag]) => tag);
    expect(scripts).toEqual(['<script type="module" src="/assets/device.js">']);
    expect(body).toMatch(/<\/script>/);
    expect(body.replace(/<script[^>]*><\/script>/g, '')).not.toMatch(/<script/);
    expect(body).not.toMatch(/<style|\sstyle=|\son[a-z]+=|javascript:/i);
    const links = [...body.matchAll(/\s(?:href|src)="([^"]*)"/g)].map(([, url]) => url);
    for (const url of links) expect(url, url).toMatch(/^\/(assets\/|device)/);
  });

  it('asks a visitor without a session to sign in, showing the code from the address, escaped', async () => {
    const res = await getPage(`/device?user_code=${encodeURIComponent('<b>"x"</b>')}`);
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('<form id="sign-in"');
    expect(res.body).toContain('action="/auth/login"');
    expect(res.body).toContain('<label for="email">');
    expect(res.body).toContain('<label for="password">');
    expect(res.body).toContain('&lt;b&gt;&quot;x&quot;&lt;/b&gt;');
    expect(res.body).not.toContain('<b>"x"</b>');
    // A session that is not current is no session.
    expect((await getPage('/device', 'svc_sess_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA')).body).toContain('<form id="sign-in"');
  });

  it('tells a signed-in user with an unverified e-mail to verify it first, and shows no request', async () => {
    const user = await createConsoleUser(ctx, { verified: false });
    const res = await getPage('/device?user_code=BCDF-GHJK', user.sessionToken);
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('is not verified yet');
    expect(res.body).not.toContain('<form id="consent"');
    expect(res.body).not.toContain('BCDF-GHJK');
  });

  it('asks a verified user for the code when the address has none, in a labelled, editable field', async () => {
    const user = await createConsoleUser(ctx);
    const res = await getPage('/device', user.sessionToken);
    expect(res.statusCode).toBe(200);
    // In the console's frame: the signed-in user and sign-out in its header.
    expect(res.body).toContain(`<span class="email">${user.email}</span>`);
    expect(res.body).toContain('<form id="sign-out" class="user" data-api="POST /auth/logout"');
    expect(res.body).toContain('<label for="user_code">');
    expect(res.body).toMatch(/<input id="user_code" name="user_code" type="text" value="" required/);
    expect(res.body).not.toMatch(/<input id="user_code"[^>]*readonly/);
    expect(res.body).toContain('<form id="code" class="stack" method="get" action="/device"');
  });

  it('shows an unknown code again with the error in words beside it', async () => {
    const user = await createConsoleUser(ctx);
    const res = await getPage('/device?user_code=ZZZZ-ZZZZ', user.sessionToken);
    expect(res.statusCode).toBe(200);
    expect(res.body).toMatch(/<input id="user_code" name="user_code" type="text" value="ZZZZ-ZZZZ"[^>]*aria-invalid="true"/);
    expect(res.body).toMatch(/<p class="error" id="code-error" role="alert">This code is wrong, has expired or was already used\./);
  });

  it('refuses a malformed address with the catalogue answer, under the same headers', async () => {
    for (const url of ['/device?user_code=a&user_code=b', `/device?user_code=${'A'.repeat(65)}`, '/device?unknown=1']) {
      const res = await getPage(url);
      expect(res.statusCode, url).toBe(400);
      expect(res.json(), url).toEqual({ error: 'invalid_request' });
      expect(res.headers['cache-control'], url).toBe('no-store');
      expectPageHeaders(res);
    }
  });
});

describe('GET /assets/:name', () => {
  it.each([
    ['console.css', 'text/css; charset=utf-8'],
    ['device.js', 'text/javascript; charset=utf-8'],
    ['icon.svg', 'image/svg+xml'],
  ])('serves %s as %s, revalidated by its ETag', async (name, type) => {
    const res = await ctx.app.inject({ method: 'GET', url: `/assets/${name}` });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe(type);
    expect(res.headers['cache-control']).toBe('no-cache');
    expect(res.headers.etag).toMatch(/^"[A-Za-z0-9_-]{22}"$/);
    expectPageHeaders(res);
    expect(res.body.length).toBeGreaterThan(0);
    const again = await ctx.app.inject({
      method: 'GET',
      url: `/assets/${name}`,
      headers: { 'if-none-match': `W/"other", ${res.headers.etag}` },
    });
    expect(again.statusCode).toBe(304);
    expect(again.body).toBe('');
    expect(again.headers.etag).toBe(res.headers.etag);
  });

  it('answers 404 `not_found` for any other name, and 400 for a query, no-store', async () => {
    for (const name of ['other.js', '..%2Fdevice.js', 'constructor', 'toString', 'device.JS']) {
      const res = await ctx.app.inject({ method: 'GET', url: `/assets/${name}` });
      expect(res.statusCode, name).toBe(404);
      expect(res.json(), name).toEqual({ error: 'not_found' });
      expect(res.headers['cache-control'], name).toBe('no-store');
    }
    const res = await ctx.app.inject({ method: 'GET', url: '/assets/device.js?v=2' });
    expect([res.statusCode, res.json()]).toEqual([400, { error: 'invalid_request' }]);
    expect(res.headers['cache-control']).toBe('no-store');
    expectPageHeaders(res);
  });
});

describe('the consent step', () => {
  const request = {
    userCode: 'BCDF-GHJK',
    clientId: 'service-management-cli',
    clientName: 'Integration watch <CLI> & "friends"',
    scopes: ['service:cli:integrations:read', 'service:cli:repairs:approve', 'offline_access', 'service:cli:<new>'],
    expiresAt: '2026-11-29T10:15:00.000Z',
  };
  const page = renderDevicePage({ step: 'consent', email: 'ada@example.test', request });

  it('names the client, escaped, and lists each permission in words beside its literal name', () => {
    expect(page).toContain('<strong class="client-name">Integration watch &lt;CLI&gt; &amp; &quot;friends&quot;</strong>');
    const scopes = page.slice(page.indexOf('<ul class="scopes">'), page.indexOf('</ul>', page.indexOf('<ul class="scopes">')));
    const items = [...scopes.matchAll(/<li>(.*?)<\/li>/g)].map(([, item]) => item);
    expect(items).toEqual([
      '<span class="scope-words">See your Integrations, their connections and modes</span> <code class="scope-name">service:cli:integrations:read</code>',
      '<span class="scope-words">Approve or reject repair proposals</span> <code class="scope-name">service:cli:repairs:approve</code>',
      `<span class="scope-words">${escapeHtml(CLI_SCOPE_WORDS.offline_access)}</span> <code class="scope-name">offline_access</code>`,
      '<code class="scope-name">service:cli:&lt;new&gt;</code>',
    ]);
    expect(page).toContain('<time datetime="2026-11-29T10:15:00.000Z">10:15 UTC</time>');
  });

  it('shows the code read-only, with Approve and Deny posting to the consent route', () => {
    expect(page).toMatch(
      /<label for="user_code">Code<\/label>\n<input id="user_code" name="user_code" type="text" value="BCDF-GHJK" readonly/,
    );
    expect(page).toContain('<form id="consent" class="stack" method="post" action="/oauth/device/consent" data-form="consent">');
    expect(page).toContain('<button type="submit" name="decision" value="approve" class="primary">Approve</button>');
    expect(page).toContain('<button type="submit" name="decision" value="deny">Deny</button>');
  });

  it('carries the words of every error the consent route answers, for its script', () => {
    const words = page.slice(page.indexOf('<template class="error-words" data-form="consent">'));
    for (const code of ['invalid_grant', 'rate_limited', 'email_verification_required', 'unauthenticated', 'network', 'unknown']) {
      expect(words, code).toMatch(new RegExp(`<span data-error="${code}">[^<]+</span>`));
    }
    expect(errorInWords('consent', 'unauthenticated')).toMatch(/Sign in again/);
    expect(errorInWords('sign-in', 'unauthenticated')).toBe('The e-mail address or the password is wrong.');
  });
});

describe('the permissions in words', () => {
  it('has words for every scope a grant can hold, and for no other', () => {
    const grantable = [...CLI_SCOPES, OFFLINE_ACCESS_SCOPE];
    expect(Object.keys(CLI_SCOPE_WORDS).sort()).toEqual([...grantable].sort());
    for (const scope of grantable) expect(scopeInWords(scope), scope).toMatch(/^[A-Z][^<>]+$/);
    expect(scopeInWords('service:cli:nothing')).toBeNull();
    expect(scopeInWords('toString')).toBeNull();
  });
});

describe('the guessing limit on the page', () => {
  it('shows `rate_limited` in words past the limit, as the JSON route counts it', async () => {
    const limited = await createTestContext({ OAUTH_USER_CODE_FAILURES_PER_USER: '2' });
    try {
      const user = await createConsoleUser(limited);
      const page = (url: string) => limited.app.inject({ method: 'GET', url, headers: { cookie: `session=${user.sessionToken}` } });
      // One guess through the JSON route, one through the page: the same budget.
      const json = await limited.app.inject({
        method: 'GET',
        url: '/oauth/device/authorization?user_code=BBBB-BBBB',
        headers: { cookie: `session=${user.sessionToken}` },
      });
      expect(json.json()).toEqual({ error: 'invalid_grant' });
      expect((await page('/device?user_code=CCCC-CCCC')).body).toContain('This code is wrong, has expired or was already used.');
      const refused = await page('/device?user_code=DDDD-DDDD');
      expect(refused.statusCode).toBe(200);
      expect(refused.body).toMatch(
        /<p class="error" id="code-error" role="alert">Too many attempts\. Wait a minute, then try again\.<\/p>/,
      );
    } finally {
      await limited.close();
    }
  });
});
