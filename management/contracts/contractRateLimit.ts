import type { ContractCaller } from './contractConnection.js';
import type { AppDeps } from '../deps.js';
import { reserveSlot } from '../operations/rateWindow.js';
import { RedisKeys } from '../../shared/redis.js';

/**
 * Per-workspace budgets of contract writes, each a sliding minute in Redis shared by every
 * management process: registration (an import is CPU work on the shared process) and activation
 * or rollback (each enqueues a reanalysis of 30 days of the connection's observations). Every
 * authenticated, well-formed attempt takes a slot, refused or not: a refused import costs the
 * same work. Past the budget: 429 `rate_limited` with `Retry-After` = seconds until a slot frees,
 * before anything is read or written.
 */
export async function reserveContractWrite(deps: AppDeps, principal: ContractCaller, kind: 'registration' | 'activation'): Promise<void> {
  const { contractRegistrationsPerMin, contractActivationsPerMin } = deps.config.management;
  const window =
    kind === 'registration'
      ? { key: RedisKeys.contractRegistrations(principal.workspaceId), limit: contractRegistrationsPerMin }
      : { key: RedisKeys.contractActivations(principal.workspaceId), limit: contractActivationsPerMin };
  await reserveSlot(deps.redis, { ...window, windowMs: 60_000, code: 'rate_limited' }, deps.clock.nowMs());
}
