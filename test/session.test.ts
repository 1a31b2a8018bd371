import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setWritePause } from '../management/maintenance.js';
import { VERIFICATION_TTL_MS } from '../management/session/sessionService.js';
import { advanceTestClock, resetTestClock } from '../shared/clock.js';
import { sha256Hex } from '../shared/secrets.js';
import { countRows, createTestContext, freshClientIp, uniqueEmail, type TestContext } from './helpers/context.js';

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(async () => {
  await ctx.close();
});

const PASSWORD = 'correct horse battery';

/** Each call from an address of its own: sign-ups and failed logins are limited per client address. */
function post(url: string, body: unknown, headers: Record<string, string> = {}) {
  return ctx.app.inject({ method: 'POST', url, headers, payload: body as object, remoteAddress: freshClientIp() });
}

async function signUp(email = uniqueEmail('signup'), password = PASSWORD) {
  const res = await post('/auth/signup', { email, password, name: 'Ada Lovelace' });
  expect(res.statusCode).toBe(201);
  return { email, user: res.json().user as { id: string } };
}

/** The token in the user's verification mail (what the operator CLI `mail` prints). */
async function mailedToken(userId: string): Promise<string> {
  const { rows } = await ctx.deps.pool.query("SELECT body FROM email_outbox WHERE user_id = $1 AND kind = 'email_verification'", [userId]);
  expect(rows).toHaveLength(1);
  return rows[0].body.token;
}

function sessionCookie(res: { cookies: { name: string; value: string }[] }): string {
  const cookie = res.cookies.find((c) => c.name === 'session');
  if (!cookie) throw new Error('no session cookie');
  return cookie.value;
}

describe('POST /auth/signup', () => {
  it('creates an unverified user, a hashed verification token and the mail holding it', async () => {
    const email = uniqueEmail('Signup');
    const res = await post('/auth/signup', { email, password: PASSWORD, name: '  Ada Lovelace ' });
    expect(res.statusCode).toBe(201);
    expect(res.headers['cache-control']).toBe('no-store');
    const user = res.json().user;
    expect(user).toEqual({ id: expect.stringMatching(/^usr_/), email, name: 'Ada Lovelace', emailVerified: false });

    const stored = await ctx.deps.pool.query('SELECT password_hash, email_verified_at FROM users WHERE id = $1', [user.id]);
    expect(stored.rows[0].password_hash).toMatch(/^scrypt\$/);
    expect(stored.rows[0].password_hash).not.toContain(PASSWORD);
    expect(stored.rows[0].email_verified_at).toBeNull();

    const token = await mailedToken(user.id);
    expect(token).toMatch(/^svc_ver_/);
    const mail = await ctx.deps.pool.query('SELECT to_email, body FROM email_outbox WHERE user_id = $1', [user.id]);
    expect(mail.rows[0].to_email).toBe(email);
    expect(mail.rows[0].body.link).toBe(`${ctx.deps.config.consoleOrigin}/console/verify-email?token=${token}`);
    const verification = await ctx.deps.pool.query('SELECT token_hash, expires_at FROM email_verifications WHERE user_id = $1', [user.id]);
    expect(verification.rows).toHaveLength(1);
    expect(verification.rows[0].token_hash).toBe(sha256Hex(token));
    const ttl = verification.rows[0].expires_at.getTime() - ctx.deps.clock.nowMs();
    expect(ttl).toBeGreaterThan(VERIFICATION_TTL_MS - 60_000);
    expect(ttl).toBeLessThanOrEqual(VERIFICATION_TTL_MS);
  });

  it('accepts passwords of exactly 8 and 256 characters', async () => {
    await signUp(uniqueEmail(), 'x'.repeat(8));
    await signUp(uniqueEmail(), 'é'.repeat(256));
  });

  const invalidBodies: [string, (email: string) => unknown][] = [
    ['malformed e-mail', () => ({ email: 'not-an-email', password: PASSWORD, name: 'A' })],
    ['e-mail with a space', (email) => ({ email: `a ${email}`, password: PASSWORD, name: 'A' })],
    ['password of 7 characters', (email) => ({ email, password: 'x'.repeat(7), name: 'A' })],
    ['password of 257 characters', (email) => ({ email, password: 'x'.repeat(257), name: 'A' })],
    ['empty name', (email) => ({ email, password: PASSWORD, name: '   ' })],
    ['name of 121 characters', (email) => ({ email, password: PASSWORD, name: 'n'.repeat(121) })],
    ['missing name', (email) => ({ email, password: PASSWORD })],
    ['non-string password', (email) => ({ email, password: 12345678, name: 'A' })],
    ['unknown field', (email) => ({ email, password: PASSWORD, name: 'A', role: 'admin' })],
  ];
  for (const [label, body] of invalidBodies) {
    it(`refuses a ${label} with 400 invalid_signup and writes nothing`, async () => {
      const email = uniqueEmail('invalid');
      const res = await post('/auth/signup', body(email));
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({ error: 'invalid_signup' });
      expect(await countRows(ctx, 'users', 'lower(email) = lower($1) OR lower(email) = lower($2)', [email, `a ${email}`])).toBe(0);
    });
  }

  it('refuses a taken e-mail (any case) with 409 email_unavailable and writes nothing', async () => {
    const { email, user } = await signUp();
    const res = await post('/auth/signup', { email: email.toUpperCase(), password: PASSWORD, name: 'Other' });
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual({ error: 'email_unavailable' });
    expect(await countRows(ctx, 'users', 'lower(email) = lower($1)', [email])).toBe(1);
    expect(await countRows(ctx, 'email_outbox', 'lower(to_email) = lower($1)', [email])).toBe(1);
    expect(await countRows(ctx, 'email_verifications', 'user_id = $1', [user.id])).toBe(1);
  });

  it('stays open while authenticated writes are paused', async () => {
    await setWritePause(ctx.deps.redis, true);
    try {
      await signUp();
    } finally {
      await setWritePause(ctx.deps.redis, false);
    }
  });
});

describe('POST /auth/verify-email', () => {
  it('verifies the user once; the used token then fails', async () => {
    const { email, user } = await signUp();
    const token = await mailedToken(user.id);
    const res = await post('/auth/verify-email', { token });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ user: { id: user.id, email, name: 'Ada Lovelace', emailVerified: true } });
    const stored = await ctx.deps.pool.query('SELECT email_verified_at FROM users WHERE id = $1', [user.id]);
    expect(stored.rows[0].email_verified_at).not.toBeNull();

    const again = await post('/auth/verify-email', { token });
    expect(again.statusCode).toBe(400);
    expect(again.json()).toEqual({ error: 'invalid_verification_token' });
  });

  it('refuses unknown, malformed and badly shaped tokens with 400 invalid_verification_token', async () => {
    for (const body of [{ token: `svc_ver_${'A'.repeat(43)}` }, { token: 'nope' }, { token: 5 }, {}, { token: 'x', extra: 1 }]) {
      const res = await post('/auth/verify-email', body);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({ error: 'invalid_verification_token' });
    }
  });

  it('refuses a token after its 24 hours and leaves the user unverified', async () => {
    const { user } = await signUp();
    const token = await mailedToken(user.id);
    try {
      await advanceTestClock(ctx.deps.redis, VERIFICATION_TTL_MS + 1000);
      const res = await post('/auth/verify-email', { token });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({ error: 'invalid_verification_token' });
    } finally {
      await resetTestClock(ctx.deps.redis);
      await ctx.deps.clock.sync();
    }
    const stored = await ctx.deps.pool.query('SELECT email_verified_at FROM users WHERE id = $1', [user.id]);
    expect(stored.rows[0].email_verified_at).toBeNull();
    expect(await countRows(ctx, 'email_verifications', 'user_id = $1 AND used_at IS NOT NULL', [user.id])).toBe(0);
  });
});

describe('POST /auth/login and /auth/logout', () => {
  it('logs in with an HttpOnly session cookie and a CSRF token, then logs out', async () => {
    const { email, user } = await signUp();
    await post('/auth/verify-email', { token: await mailedToken(user.id) });

    const res = await post('/auth/login', { email: email.toUpperCase(), password: PASSWORD });
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    const body = res.json();
    expect(body).toEqual({ user: { id: user.id, email, name: 'Ada Lovelace', emailVerified: true }, csrfToken: expect.any(String) });
    const setCookie = String(res.headers['set-cookie']);
    expect(setCookie).toMatch(/^session=svc_sess_[A-Za-z0-9_-]{43};/);
    expect(setCookie).toContain('HttpOnly');
    expect(setCookie).toContain('SameSite=Lax');
    expect(setCookie).toContain('Path=/');
    expect(setCookie).not.toContain('Secure');
    expect(JSON.stringify(body)).not.toContain(sessionCookie(res));
    const token = sessionCookie(res);
    expect(await countRows(ctx, 'sessions', 'token_hash = $1 AND user_id = $2', [sha256Hex(token), user.id])).toBe(1);

    // The cookie authenticates console reads.
    const list = await ctx.app.inject({ method: 'GET', url: '/workspaces', headers: { cookie: `session=${token}` } });
    expect(list.statusCode).toBe(200);

    // Writes need the same-origin Origin or the CSRF token.
    const noCsrf = await ctx.app.inject({ method: 'POST', url: '/auth/logout', headers: { cookie: `session=${token}` } });
    expect(noCsrf.statusCode).toBe(403);
    expect(noCsrf.json()).toEqual({ error: 'forbidden' });
    const wrongCsrf = await ctx.app.inject({
      method: 'POST',
      url: '/auth/logout',
      headers: { cookie: `session=${token}`, 'x-csrf-token': 'nope' },
    });
    expect(wrongCsrf.statusCode).toBe(403);

    const out = await ctx.app.inject({
      method: 'POST',
      url: '/auth/logout',
      headers: { cookie: `session=${token}`, 'x-csrf-token': body.csrfToken },
    });
    expect(out.statusCode).toBe(200);
    expect(out.json()).toEqual({ loggedOut: true });
    expect(String(out.headers['set-cookie'])).toMatch(/^session=;/);
    expect(await countRows(ctx, 'sessions', 'token_hash = $1 AND revoked_at IS NOT NULL', [sha256Hex(token)])).toBe(1);

    const after = await ctx.app.inject({ method: 'GET', url: '/workspaces', headers: { cookie: `session=${token}` } });
    expect(after.statusCode).toBe(401);
    expect(after.json()).toEqual({ error: 'unauthenticated' });
  });

  it('marks the cookie Secure when the console origin is https', async () => {
    const { email } = await signUp();
    const original = ctx.deps.config.consoleOrigin;
    ctx.deps.config.consoleOrigin = 'https://console.example.test';
    try {
      const res = await post('/auth/login', { email, password: PASSWORD });
      expect(res.statusCode).toBe(200);
      expect(String(res.headers['set-cookie'])).toContain('Secure');
    } finally {
      ctx.deps.config.consoleOrigin = original;
    }
  });

  it('answers a wrong password and an unknown e-mail alike with 401 and creates no session', async () => {
    const { email, user } = await signUp();
    for (const body of [
      { email, password: 'wrong password' },
      { email: uniqueEmail('nobody'), password: PASSWORD },
      { email: `${email}\u0001`, password: PASSWORD },
    ]) {
      const res = await post('/auth/login', body);
      expect(res.statusCode).toBe(401);
      expect(res.json()).toEqual({ error: 'unauthenticated' });
      expect(res.headers['set-cookie']).toBeUndefined();
    }
    expect(await countRows(ctx, 'sessions', 'user_id = $1', [user.id])).toBe(0);
  });

  it('refuses a malformed login body with 400 invalid_request', async () => {
    for (const body of [
      { email: 'a@b.test' },
      { email: 'a@b.test', password: PASSWORD, remember: true },
      { email: 1, password: PASSWORD },
      { email: 'a@b.test\u0000', password: PASSWORD },
    ]) {
      const res = await post('/auth/login', body);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({ error: 'invalid_request' });
    }
  });

  it('lets an unverified user log in and out, but not use verified-only routes', async () => {
    const { email } = await signUp();
    const res = await post('/auth/login', { email, password: PASSWORD });
    expect(res.statusCode).toBe(200);
    expect(res.json().user.emailVerified).toBe(false);
    const cookie = `session=${sessionCookie(res)}`;
    const list = await ctx.app.inject({ method: 'GET', url: '/workspaces', headers: { cookie } });
    expect(list.statusCode).toBe(403);
    expect(list.json()).toEqual({ error: 'email_verification_required' });
    const out = await ctx.app.inject({ method: 'POST', url: '/auth/logout', headers: { cookie, origin: ctx.deps.config.consoleOrigin } });
    expect(out.statusCode).toBe(200);
  });

  it('logs in while writes are paused, but logout (an authenticated write) is paused', async () => {
    const { email } = await signUp();
    await setWritePause(ctx.deps.redis, true);
    try {
      const res = await post('/auth/login', { email, password: PASSWORD });
      expect(res.statusCode).toBe(200);
      const out = await ctx.app.inject({
        method: 'POST',
        url: '/auth/logout',
        headers: { cookie: `session=${sessionCookie(res)}`, origin: ctx.deps.config.consoleOrigin },
      });
      expect(out.statusCode).toBe(503);
      expect(out.headers['retry-after']).toBe('1');
      expect(out.json()).toEqual({ error: 'mode_cutover_write_paused' });
      expect(await countRows(ctx, 'sessions', 'token_hash = $1 AND revoked_at IS NULL', [sha256Hex(sessionCookie(res))])).toBe(1);
    } finally {
      await setWritePause(ctx.deps.redis, false);
    }
  });

  it('refuses logout without a session, and a logout body with fields', async () => {
    const res = await ctx.app.inject({ method: 'POST', url: '/auth/logout', headers: { origin: ctx.deps.config.consoleOrigin } });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual({ error: 'unauthenticated' });
    const { email } = await signUp();
    const login = await post('/auth/login', { email, password: PASSWORD });
    const withBody = await ctx.app.inject({
      method: 'POST',
      url: '/auth/logout',
      payload: { everywhere: true },
      headers: { cookie: `session=${sessionCookie(login)}`, origin: ctx.deps.config.consoleOrigin },
    });
    expect(withBody.statusCode).toBe(400);
    expect(withBody.json()).toEqual({ error: 'invalid_request' });
  });
});
