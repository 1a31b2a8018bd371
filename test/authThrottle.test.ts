import { randomInt } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import { BoundedWork } from '../management/accounts/boundedWork.js';
import { SCRYPT_CONCURRENCY, SCRYPT_QUEUE_LENGTH, scryptRunCount, scryptWork } from '../management/accounts/passwords.js';
import { clientAddressKey, LOGIN_FAILURE_WINDOW_MS, SIGNUP_WINDOW_MS } from '../management/session/authThrottle.js';
import type { AuthLimits } from '../shared/config.js';
import {
  advanceClock,
  countRows,
  createTestContext,
  freshClientIp,
  resetClockAndHooks,
  uniqueEmail,
  type TestContext,
} from './helpers/context.js';

// Issue 25 item 6: login and sign-up throttles, the bounded scrypt queue, and login CSRF.
let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(async () => {
  await ctx.close();
});
afterEach(async () => {
  await resetClockAndHooks(ctx);
});

const PASSWORD = 'correct horse battery';

const freshIp = freshClientIp;

function post(url: string, body: object, options: { ip?: string; origin?: string } = {}): Promise<LightMyRequestResponse> {
  return ctx.app.inject({
    method: 'POST',
    url,
    payload: body,
    remoteAddress: options.ip ?? freshIp(),
    headers: options.origin === undefined ? {} : { origin: options.origin },
  });
}

const login = (email: string, password: string, options: { ip?: string; origin?: string } = {}) =>
  post('/auth/login', { email, password }, options);

/** A verified user signed up through the routes (from an address of its own). */
async function verifiedUser(): Promise<{ email: string; userId: string }> {
  const email = uniqueEmail('throttle');
  const res = await post('/auth/signup', { email, password: PASSWORD, name: 'Throttled' });
  expect(res.statusCode, res.body).toBe(201);
  const userId = res.json().user.id as string;
  const { rows } = await ctx.deps.pool.query("SELECT body FROM email_outbox WHERE user_id = $1 AND kind = 'email_verification'", [userId]);
  expect((await post('/auth/verify-email', { token: rows[0].body.token })).statusCode).toBe(200);
  return { email, userId };
}

/** Runs `test` with some auth limits changed in the app's config (what the environment would set). */
async function withLimits(limits: Partial<AuthLimits>, test: () => Promise<void>): Promise<void> {
  const original = { ...ctx.deps.config.auth };
  Object.assign(ctx.deps.config.auth, limits);
  try {
    await test();
  } finally {
    ctx.deps.config.auth = original;
  }
}

function expectUnauthenticated(res: LightMyRequestResponse): void {
  expect(res.statusCode, res.body).toBe(401);
  expect(res.json()).toEqual({ error: 'unauthenticated' });
  expect(res.headers['set-cookie']).toBeUndefined();
}

function expectRateLimited(res: LightMyRequestResponse, windowMs: number): void {
  expect(res.statusCode, res.body).toBe(429);
  expect(res.json()).toEqual({ error: 'rate_limited' });
  expect(res.headers['set-cookie']).toBeUndefined();
  const retryAfter = Number(res.headers['retry-after']);
  expect(Number.isInteger(retryAfter)).toBe(true);
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(windowMs / 1000);
}

describe('unknown e-mail and wrong password', () => {
  // First in the file (a fresh module): the first unknown e-mail of a process costs no extra run.
  it('cost the same single scrypt run and get the same answer, the first unknown e-mail included', async () => {
    const { email } = await verifiedUser();
    const answers: LightMyRequestResponse[] = [];
    for (const attempt of [
      { email: uniqueEmail('nobody'), password: PASSWORD },
      { email, password: 'wrong password' },
      { email: `${email}\u0001`, password: PASSWORD },
    ]) {
      const before = scryptRunCount();
      answers.push(await login(attempt.email, attempt.password));
      expect(scryptRunCount() - before).toBe(1);
    }
    for (const res of answers) expectUnauthenticated(res);
    expect(new Set(answers.map((res) => res.body)).size).toBe(1);
  });
});

describe('failed logins per e-mail', () => {
  it('refuse the 11th attempt in 15 minutes with 429 rate_limited, the right password too, from any address', async () => {
    const { email, userId } = await verifiedUser();
    const limit = ctx.deps.config.auth.loginFailuresPerEmail;
    expect(limit).toBe(10);
    for (let i = 0; i < limit; i += 1) expectUnauthenticated(await login(email, `wrong password ${i}`));
    const before = scryptRunCount();
    expectRateLimited(await login(email.toUpperCase(), PASSWORD), LOGIN_FAILURE_WINDOW_MS);
    expect(scryptRunCount()).toBe(before);
    expect(await countRows(ctx, 'sessions', 'user_id = $1', [userId])).toBe(0);

    await advanceClock(ctx, LOGIN_FAILURE_WINDOW_MS + 1000);
    expect((await login(email, PASSWORD)).statusCode).toBe(200);
  });

  it('count an e-mail no user has exactly like a known one', async () => {
    await withLimits({ loginFailuresPerEmail: 3 }, async () => {
      const { email } = await verifiedUser();
      const unknown = uniqueEmail('nobody');
      for (const address of [email, unknown]) {
        for (let i = 0; i < 3; i += 1) expectUnauthenticated(await login(address, 'wrong password'));
        expectRateLimited(await login(address, 'wrong password'), LOGIN_FAILURE_WINDOW_MS);
      }
    });
  });

  it('do not count successful logins', async () => {
    await withLimits({ loginFailuresPerEmail: 2 }, async () => {
      const { email } = await verifiedUser();
      for (let i = 0; i < 3; i += 1) expect((await login(email, PASSWORD)).statusCode).toBe(200);
      for (let i = 0; i < 2; i += 1) expectUnauthenticated(await login(email, 'wrong password'));
      expectRateLimited(await login(email, PASSWORD), LOGIN_FAILURE_WINDOW_MS);
    });
  });
});

describe('failed logins per client address', () => {
  it('refuse an address past its limit over any e-mails; another address still logs in', async () => {
    await withLimits({ loginFailuresPerAddress: 3 }, async () => {
      const { email } = await verifiedUser();
      const ip = freshIp();
      for (let i = 0; i < 3; i += 1) expectUnauthenticated(await login(uniqueEmail('spray'), PASSWORD, { ip }));
      expectRateLimited(await login(email, PASSWORD, { ip }), LOGIN_FAILURE_WINDOW_MS);
      expect((await login(email, PASSWORD, { ip: freshIp() })).statusCode).toBe(200);
    });
  });

  it('count an IPv6 client by its /64', async () => {
    await withLimits({ loginFailuresPerAddress: 2 }, async () => {
      const prefix = `2001:db8:${randomInt(0xffff).toString(16)}:${randomInt(0xffff).toString(16)}`;
      expectUnauthenticated(await login(uniqueEmail('v6'), PASSWORD, { ip: `${prefix}::1` }));
      expectUnauthenticated(await login(uniqueEmail('v6'), PASSWORD, { ip: `${prefix}:0:0:0:2` }));
      expectRateLimited(await login(uniqueEmail('v6'), PASSWORD, { ip: `${prefix}:ffff:1:2:3` }), LOGIN_FAILURE_WINDOW_MS);
    });
  });

  it('key IPv4, IPv4-mapped and IPv6 addresses', () => {
    expect(clientAddressKey('203.0.113.7')).toBe('203.0.113.7');
    expect(clientAddressKey('::ffff:203.0.113.7')).toBe('203.0.113.7');
    expect(clientAddressKey('2001:db8:a:b:c:d:e:f')).toBe('2001:db8:a:b::/64');
    expect(clientAddressKey('2001:0db8:000a:000b::1')).toBe('2001:db8:a:b::/64');
    expect(clientAddressKey('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(clientAddressKey('::1')).toBe('0:0:0:0::/64');
    expect(clientAddressKey('fe80::1%eth0')).toBe('fe80:0:0:0::/64');
    expect(clientAddressKey('64:ff9b::192.0.2.1')).toBe('64:ff9b:0:0::/64');
  });
});

describe('sign-ups per client address', () => {
  it('refuse an address past its limit in an hour (a taken e-mail counts), writing nothing', async () => {
    await withLimits({ signupsPerAddressPerHour: 2 }, async () => {
      const ip = freshIp();
      const taken = uniqueEmail('taken');
      expect((await post('/auth/signup', { email: taken, password: PASSWORD, name: 'First' }, { ip })).statusCode).toBe(201);
      expect((await post('/auth/signup', { email: taken, password: PASSWORD, name: 'Again' }, { ip })).statusCode).toBe(409);
      const refused = uniqueEmail('refused');
      expectRateLimited(await post('/auth/signup', { email: refused, password: PASSWORD, name: 'Third' }, { ip }), SIGNUP_WINDOW_MS);
      expect(await countRows(ctx, 'users', 'lower(email) = lower($1)', [refused])).toBe(0);
      // A malformed sign-up costs nothing and counts nothing: still 400, not 429.
      expect((await post('/auth/signup', { email: 'not-an-email', password: PASSWORD, name: 'X' }, { ip })).json()).toEqual({
        error: 'invalid_signup',
      });
      expect((await post('/auth/signup', { email: refused, password: PASSWORD, name: 'Elsewhere' })).statusCode).toBe(201);
    });
  });
});

describe('Origin of login and sign-up (login CSRF)', () => {
  it('refuses another origin with 403 forbidden before any work; the console origin and no Origin are accepted', async () => {
    const { email, userId } = await verifiedUser();
    const before = scryptRunCount();
    for (const origin of ['https://attacker.example', 'null', `${ctx.deps.config.consoleOrigin}.attacker.example`]) {
      const res = await login(email, PASSWORD, { origin });
      expect(res.statusCode).toBe(403);
      expect(res.json()).toEqual({ error: 'forbidden' });
      expect(res.headers['set-cookie']).toBeUndefined();
      const signupEmail = uniqueEmail('csrf');
      const signup = await post('/auth/signup', { email: signupEmail, password: PASSWORD, name: 'Cross Site' }, { origin });
      expect(signup.statusCode).toBe(403);
      expect(signup.json()).toEqual({ error: 'forbidden' });
      expect(await countRows(ctx, 'users', 'lower(email) = lower($1)', [signupEmail])).toBe(0);
    }
    expect(scryptRunCount()).toBe(before);
    expect(await countRows(ctx, 'sessions', 'user_id = $1', [userId])).toBe(0);

    expect((await login(email, PASSWORD, { origin: ctx.deps.config.consoleOrigin })).statusCode).toBe(200);
    expect((await login(email, PASSWORD)).statusCode).toBe(200);
    expect(
      (
        await post(
          '/auth/signup',
          { email: uniqueEmail('same'), password: PASSWORD, name: 'Same Site' },
          { origin: ctx.deps.config.consoleOrigin },
        )
      ).statusCode,
    ).toBe(201);
  });
});

describe('bounded scrypt work', () => {
  it('runs at most SCRYPT_CONCURRENCY at once, queues SCRYPT_QUEUE_LENGTH, refuses the next at once', async () => {
    const work = new BoundedWork(2, 3);
    let running = 0;
    let most = 0;
    const gates: (() => void)[] = [];
    const task = () =>
      new Promise<void>((done) => {
        running += 1;
        most = Math.max(most, running);
        gates.push(() => {
          running -= 1;
          done();
        });
      });
    const accepted = Array.from({ length: 5 }, () => work.run(task, () => new Error('full')));
    await expect(work.run(task, () => new Error('full'))).rejects.toThrow('full');
    expect([work.active, work.queued]).toEqual([2, 3]);
    while (gates.length > 0 || work.queued > 0) {
      gates.shift()?.();
      await new Promise((next) => setImmediate(next));
    }
    await Promise.all(accepted);
    expect(most).toBe(2);
    expect([work.active, work.queued]).toEqual([0, 0]);
  });

  it('answers login and sign-up with 503 service_unavailable and Retry-After: 1 while the queue is full, counting no failure', async () => {
    const { email, userId } = await verifiedUser();
    let open!: () => void;
    const gate = new Promise<void>((done) => {
      open = done;
    });
    // The process's own scrypt slots and queue, taken by tasks this test holds.
    const held = Array.from({ length: SCRYPT_CONCURRENCY + SCRYPT_QUEUE_LENGTH }, () =>
      scryptWork.run(
        () => gate,
        () => new Error('full'),
      ),
    );
    try {
      expect([scryptWork.active, scryptWork.queued]).toEqual([SCRYPT_CONCURRENCY, SCRYPT_QUEUE_LENGTH]);
      const ip = freshIp();
      await withLimits({ loginFailuresPerEmail: 1, loginFailuresPerAddress: 1, signupsPerAddressPerHour: 1 }, async () => {
        const refusedEmail = uniqueEmail('busy');
        for (const res of [
          await login(email, PASSWORD, { ip }),
          await post('/auth/signup', { email: refusedEmail, password: PASSWORD, name: 'Busy' }, { ip }),
        ]) {
          expect(res.statusCode, res.body).toBe(503);
          expect(res.json()).toEqual({ error: 'service_unavailable' });
          expect(res.headers['retry-after']).toBe('1');
        }
        expect(await countRows(ctx, 'users', 'lower(email) = lower($1)', [refusedEmail])).toBe(0);
        open();
        await Promise.all(held);
        // Neither refusal took a slot: with limits of 1, both still go through from that address.
        expect((await login(email, PASSWORD, { ip })).statusCode).toBe(200);
        expect((await post('/auth/signup', { email: refusedEmail, password: PASSWORD, name: 'Busy' }, { ip })).statusCode).toBe(201);
      });
    } finally {
      open();
      await Promise.all(held);
    }
    expect(await countRows(ctx, 'sessions', 'user_id = $1', [userId])).toBe(1);
  });
});
