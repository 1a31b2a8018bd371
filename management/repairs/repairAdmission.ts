import { accountTag } from '../../shared/redis.js';
import { AppError } from '../../shared/errors/index.js';
import type { Deps } from '../deps.js';
import type { RateSlot } from '../operations/rateWindow.js';

/** 03 Limits, Repair admission: new operations per UTC minute, for each action on its own. */
export const REPAIR_ADMISSIONS_PER_WORKSPACE = 20;
export const REPAIR_ADMISSIONS_PER_ACTOR = 5;

export type RepairAdmissionAction = 'request' | 'preview' | 'export';

export interface RepairAdmissionInput {
  workspaceId: string;
  accountId: string;
  userId: string;
  /** The CLI client, or null through the console (the actor counter is the user's either way). */
  clientId: string | null;
  action: RepairAdmissionAction;
}

const MINUTE_MS = 60_000;
/** A minute's counters outlive it a little: a release late in the minute still finds them. */
const COUNTER_TTL_MS = 2 * MINUTE_MS;

/**
 * The two counters of one fixed UTC minute: the workspace's and the actor's (the user, across
 * every CLI client of theirs, so a second device login buys no second allowance). Both carry the
 * account's hash tag, so one script takes them in one Redis Cluster slot.
 */
function counterKeys(input: RepairAdmissionInput, minute: number): [workspaceKey: string, actorKey: string] {
  const prefix = `repair_admit:${accountTag(input.accountId)}:${input.action}:${minute}`;
  return [`${prefix}:ws:${input.workspaceId}`, `${prefix}:usr:${input.userId}`];
}

/** ARGV of RESERVE_SCRIPT, by position (KEYS: the workspace counter, then the actor counter). */
const ARG = { workspaceLimit: 1, actorLimit: 2, ttlMs: 3 } as const;
const ADMITTED = 1;

const RESERVE_SCRIPT = `
local workspace = tonumber(redis.call('GET', KEYS[1]) or '0')
local actor = tonumber(redis.call('GET', KEYS[2]) or '0')
if workspace >= tonumber(ARGV[${ARG.workspaceLimit}]) or actor >= tonumber(ARGV[${ARG.actorLimit}]) then
  return 0
end
redis.call('INCR', KEYS[1])
redis.call('INCR', KEYS[2])
redis.call('PEXPIRE', KEYS[1], ARGV[${ARG.ttlMs}])
redis.call('PEXPIRE', KEYS[2], ARGV[${ARG.ttlMs}])
return ${ADMITTED}`;

/** Gives a slot back to both counters; a counter that has already expired stays gone. */
const RELEASE_SCRIPT = `
for i = 1, 2 do
  if tonumber(redis.call('GET', KEYS[i]) or '0') > 0 then redis.call('DECR', KEYS[i]) end
end
return 1`;

function reserveArgs(): (string | number)[] {
  const args: (string | number)[] = [];
  args[ARG.workspaceLimit - 1] = REPAIR_ADMISSIONS_PER_WORKSPACE;
  args[ARG.actorLimit - 1] = REPAIR_ADMISSIONS_PER_ACTOR;
  args[ARG.ttlMs - 1] = COUNTER_TTL_MS;
  return args;
}

/**
 * Takes one repair admission of `input.action` (03 Limits: 20 new operations per workspace and 5
 * per actor per UTC minute, for request, decision preview and export each), or throws 429
 * `workload_rate_limited` with `Retry-After` = the seconds to the next UTC minute. The windows are
 * fixed UTC minutes of the service clock (not sliding), and both counters move in one script, so
 * concurrent requests cannot both take the last slot of either. `release()` gives the slot back
 * when the operation does not happen (a refusal, a rollback, a replay).
 */
export async function reserveRepairAdmission(deps: Deps, input: RepairAdmissionInput): Promise<RateSlot> {
  const nowMs = deps.clock.nowMs();
  const minute = Math.floor(nowMs / MINUTE_MS);
  const keys = counterKeys(input, minute);
  const admitted = await deps.redis.eval(RESERVE_SCRIPT, keys.length, ...keys, ...reserveArgs());
  if (admitted !== ADMITTED) {
    const retryAfterSeconds = Math.max(1, Math.ceil(((minute + 1) * MINUTE_MS - nowMs) / 1000));
    throw new AppError('workload_rate_limited', { retryAfterSeconds });
  }
  let released = false;
  return {
    release: async () => {
      if (released) return;
      released = true;
      await deps.redis.eval(RELEASE_SCRIPT, keys.length, ...keys);
    },
  };
}
