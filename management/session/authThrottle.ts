import { createHmac } from 'node:crypto';
import { isIPv6 } from 'node:net';
import { RedisKeys } from '../../shared/redis.js';
import type { Deps } from '../deps.js';
import { reserveSlot, type RateSlot } from '../operations/rateWindow.js';

/** Failed logins are counted over a rolling 15 minutes, sign-ups over a rolling hour (docs/decisions/accounts-and-workspaces.md). */
export const LOGIN_FAILURE_WINDOW_MS = 15 * 60 * 1000;
export const SIGNUP_WINDOW_MS = 60 * 60 * 1000;

/**
 * The client address a limit counts: an IPv4 address (IPv4-mapped IPv6 included) as it is, an
 * IPv6 address by its /64, since one subscriber is routinely given a whole /64.
 */
export function clientAddressKey(ip: string): string {
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(ip);
  if (mapped) return mapped[1];
  const address = ip.split('%')[0].toLowerCase();
  if (!isIPv6(address)) return ip;
  const groupsOf = (part: string) => (part === '' ? [] : part.split(':').flatMap((group) => (group.includes('.') ? ['0', '0'] : [group])));
  const [head, tail] = address.split('::');
  const left = groupsOf(head);
  const right = tail === undefined ? [] : groupsOf(tail);
  const groups = tail === undefined ? left : [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right];
  return `${groups
    .slice(0, 4)
    .map((group) => parseInt(group, 16).toString(16))
    .join(':')}::/64`;
}

/** The e-mail in a Redis key: an HMAC under the server's key, so Redis holds no addresses. */
const emailDigest = (deps: Deps, email: string) =>
  createHmac('sha256', deps.config.secretEncryptionKey).update(`login:${email.trim().toLowerCase()}`).digest('base64url');

/**
 * Takes one failed-login slot of the e-mail and one of the client address, or throws 429
 * `rate_limited` with `Retry-After` (either full). Taken before the password is checked, so that
 * concurrent guesses cannot all pass a check-then-count, and so that a full window answers the same
 * for a right password as for a wrong one (no oracle while blocked). The caller gives the slots
 * back unless the attempt failed. An e-mail no user has is counted exactly like a known one.
 */
export async function reserveLoginAttempt(deps: Deps, input: { email: string; ip: string }): Promise<RateSlot> {
  const nowMs = deps.clock.nowMs();
  const { loginFailuresPerEmail, loginFailuresPerAddress } = deps.config.auth;
  const byEmail = await reserveSlot(
    deps.redis,
    {
      key: RedisKeys.loginFailuresByEmail(emailDigest(deps, input.email)),
      windowMs: LOGIN_FAILURE_WINDOW_MS,
      limit: loginFailuresPerEmail,
      code: 'rate_limited',
    },
    nowMs,
  );
  let byAddress: RateSlot;
  try {
    byAddress = await reserveSlot(
      deps.redis,
      {
        key: RedisKeys.loginFailuresByAddress(clientAddressKey(input.ip)),
        windowMs: LOGIN_FAILURE_WINDOW_MS,
        limit: loginFailuresPerAddress,
        code: 'rate_limited',
      },
      nowMs,
    );
  } catch (error) {
    await byEmail.release();
    throw error;
  }
  return {
    release: async () => {
      await Promise.all([byEmail.release(), byAddress.release()]);
    },
  };
}

/** Takes one sign-up slot of the client address, or throws 429 `rate_limited` with `Retry-After`. */
export function reserveSignupAttempt(deps: Deps, ip: string): Promise<RateSlot> {
  return reserveSlot(
    deps.redis,
    {
      key: RedisKeys.signupsByAddress(clientAddressKey(ip)),
      windowMs: SIGNUP_WINDOW_MS,
      limit: deps.config.auth.signupsPerAddressPerHour,
      code: 'rate_limited',
    },
    deps.clock.nowMs(),
  );
}
