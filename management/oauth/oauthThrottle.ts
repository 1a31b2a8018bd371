import { AppError } from '../../shared/errors/index.js';
import { RedisKeys } from '../../shared/redis.js';
import type { Deps } from '../deps.js';
import { reserveSlot, type RateSlot } from '../operations/rateWindow.js';
import { clientAddressKey } from '../session/authThrottle.js';

/** Failed user-code lookups are counted over a rolling 15 minutes, as failed logins are. */
export const USER_CODE_FAILURE_WINDOW_MS = 15 * 60 * 1000;
/** Device authorization requests are counted over a rolling hour, as sign-ups are. */
export const DEVICE_CODE_WINDOW_MS = 60 * 60 * 1000;

/**
 * Takes one device-authorization slot of the client address, or throws 429 `rate_limited` with
 * `Retry-After`: the device code endpoint writes a row for anyone who asks, so an address may
 * open only so many requests an hour (the caller gives the slot back when nothing was stored).
 */
export function reserveDeviceCodeRequest(deps: Deps, ip: string): Promise<RateSlot> {
  return reserveSlot(
    deps.redis,
    {
      key: RedisKeys.deviceCodesByAddress(clientAddressKey(ip)),
      windowMs: DEVICE_CODE_WINDOW_MS,
      limit: deps.config.oauth.deviceCodesPerAddressPerHour,
      code: 'rate_limited',
    },
    deps.clock.nowMs(),
  );
}

/**
 * Takes one failed-lookup slot of the user and one of the client address, or throws 429
 * `rate_limited` with `Retry-After` (either full): the mechanism of failed logins
 * (session/authThrottle.ts). Taken before the code is looked up, so that concurrent guesses cannot
 * all pass a check-then-count, and a full window answers 429 for a right code too (no oracle).
 */
async function reserveUserCodeAttempt(deps: Deps, input: { userId: string; ip: string }): Promise<RateSlot> {
  const nowMs = deps.clock.nowMs();
  const { userCodeFailuresPerUser, userCodeFailuresPerAddress } = deps.config.oauth;
  const window = (key: string, limit: number) => ({ key, windowMs: USER_CODE_FAILURE_WINDOW_MS, limit, code: 'rate_limited' as const });
  const byUser = await reserveSlot(deps.redis, window(RedisKeys.userCodeFailuresByUser(input.userId), userCodeFailuresPerUser), nowMs);
  try {
    const byAddress = await reserveSlot(
      deps.redis,
      window(RedisKeys.userCodeFailuresByAddress(clientAddressKey(input.ip)), userCodeFailuresPerAddress),
      nowMs,
    );
    return {
      release: async () => {
        await Promise.all([byUser.release(), byAddress.release()]);
      },
    };
  } catch (error) {
    await byUser.release();
    throw error;
  }
}

/**
 * Runs a lookup by user code under the guessing limit (RFC 8628 §5.1): `lookup` returns null when
 * the code names no pending request (unknown, malformed, expired, decided), which answers 400
 * `invalid_grant` and keeps both slots; any other outcome gives them back.
 */
export async function withUserCodeGuard<T>(deps: Deps, input: { userId: string; ip: string }, lookup: () => Promise<T | null>): Promise<T> {
  const attempt = await reserveUserCodeAttempt(deps, input);
  let result: T | null = null;
  try {
    result = await lookup();
  } catch (error) {
    await attempt.release().catch(() => undefined);
    throw error;
  }
  if (result === null) throw new AppError('invalid_grant');
  await attempt.release();
  return result;
}
