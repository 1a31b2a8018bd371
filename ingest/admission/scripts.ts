import { LuaScript } from './luaScript.js';
import { DEDUP_PERIODS } from './keys.js';

/**
 * The admission scripts: their Lua, the layout of their KEYS and ARGV, and their replies, in
 * one place. Callers go through the typed builders below (admitCall, durableCall, releaseCall),
 * never through positions; every key is passed as KEYS (keys.ts), none is named in Lua.
 */

/** ADMIT's first element: what happened. */
export const AdmitReply = {
  admitted: 1,
  staleCredential: 2,
  rateLimited: 3,
  quotaExhausted: 4,
  inFlight: 5,
  unsettled: 6,
} as const;

/**
 * A sliding window is a hash: one field per `bucketMs` bucket (its count), `s` the sum of the
 * bucket fields present and `o` the oldest bucket still counted. A bucket leaving the window is
 * subtracted from `s` and deleted, so `s` is always the sum of the bucket fields; the common
 * call reads two fields and expires at most a few buckets (O(1), not O(buckets)). Buckets are
 * counted while they are among the last `span` buckets, so a unit of work counts for between
 * 59 and 60 seconds (1-second buckets, 60-second window).
 */
const WINDOW_FUNCTIONS = `
local function window_read(key, oldest, span)
  local head = redis.call('HMGET', key, 's', 'o')
  local sum = tonumber(head[1]) or 0
  local from = tonumber(head[2]) or oldest
  local expired = {}
  if from < oldest - span then
    -- A long gap (the clock moved on by more than a window): read the few fields there are
    -- rather than walking every bucket of the gap.
    sum = 0
    local flat = redis.call('HGETALL', key)
    for j = 1, #flat, 2 do
      local b = tonumber(flat[j])
      if b then
        if b < oldest then expired[#expired + 1] = b else sum = sum + tonumber(flat[j + 1]) end
      end
    end
  elseif from < oldest then
    for b = from, oldest - 1 do
      local count = redis.call('HGET', key, b)
      if count then
        sum = sum - tonumber(count)
        expired[#expired + 1] = b
      end
    end
  end
  -- Also what 'o' holds (nil for a new window), so the caller writes 'o' only when it changes.
  return sum, expired, tonumber(head[2])
end

local function window_wait(key, oldest, span, bucketMs, now, need)
  local flat = redis.call('HGETALL', key)
  local live = {}
  for j = 1, #flat, 2 do
    local b = tonumber(flat[j])
    if b and b >= oldest then live[#live + 1] = {b, tonumber(flat[j + 1])} end
  end
  table.sort(live, function(x, y) return x[1] < y[1] end)
  local freed = 0
  for _, entry in ipairs(live) do
    freed = freed + entry[2]
    if freed >= need then return (entry[1] + span) * bucketMs - now end
  end
  return span * bucketMs
end
`;

/**
 * The admission record of a batch with new eventIds: a field of the account's record hash of its
 * period (`ib:{account}:<period>`, field batch id), everything it takes to undo the admission
 * without the process that made it. Fields joined by `|` (ids, keys and eventIds never hold `|`
 * or `,`): 1 received at (ms), 2 sandbox 1|0, 3 account Sandbox usage key, 4 workspace usage key,
 * 5 window keys (`,`), 6 window costs (`,`), 7 bucket, 8 de-duplication hash, 9 de-duplication
 * value, 10 new eventIds (`,`).
 */
const RECORD_FIELDS = {
  receivedAt: 1, sandbox: 2, accountUsageKey: 3, workspaceUsageKey: 4, windowKeys: 5, windowCosts: 6, bucket: 7, dedupKey: 8, dedupValue: 9, eventIds: 10,
} as const;

export interface AdmitWindow {
  key: string;
  limit: number;
  cost: number;
}

export interface AdmitInput {
  /** cred_epoch, allowance override, account Sandbox usage, workspace usage of the mode. */
  epochKey: string;
  allowanceKey: string;
  accountUsageKey: string;
  workspaceUsageKey: string;
  /** De-duplication hashes, committed-batch hashes and record hashes: current period first, DEDUP_PERIODS each. */
  dedupKeys: readonly string[];
  committedKeys: readonly string[];
  recordKeys: readonly string[];
  windows: readonly AdmitWindow[];
  cachedEpoch: string;
  nowMs: number;
  windowMs: number;
  bucketMs: number;
  sandbox: boolean;
  quotaEnforced: boolean;
  allowanceFallback: number;
  /** When the current period's keys expire (unix seconds). */
  expiresAt: number;
  batchId: string;
  usageTtlSeconds: number;
  admissionDeadlineMs: number;
  /** eventIds of the valid items, in item order. */
  eventIds: readonly string[];
}

/** KEYS of ADMIT: 1 epoch, 2 allowance, 3 account usage, 4 workspace usage, then the period keys, then the windows. */
const DEDUP_KEY = 5;
const COMMITTED_KEY = DEDUP_KEY + DEDUP_PERIODS;
const RECORD_KEY = COMMITTED_KEY + DEDUP_PERIODS;
const WINDOW_KEY = RECORD_KEY + DEDUP_PERIODS;
/**
 * ARGV of ADMIT before the per-window limits and costs, then the eventIds: 1 cached epoch, 2 now
 * ms, 3 window ms, 4 bucket ms, 5 sandbox 1|0, 6 quota enforced 1|0, 7 allowance fallback, 8 the
 * period keys' expiry (unix s), 9 batch id, 10 usage TTL s, 11 W (windows), 12 admission deadline
 * ms, 13 N (eventIds), 14 the admission record's fields 1-6 followed by `|`.
 */
const ADMIT_FIXED_ARGS = 14;

export function admitCall(input: AdmitInput): { keys: string[]; args: (string | number)[] } {
  const keys = [
    input.epochKey, input.allowanceKey, input.accountUsageKey, input.workspaceUsageKey,
    ...input.dedupKeys, ...input.committedKeys, ...input.recordKeys, ...input.windows.map((window) => window.key),
  ];
  const recordHead = `${input.nowMs}|${input.sandbox ? 1 : 0}|${input.accountUsageKey}|${input.workspaceUsageKey}|`
    + `${input.windows.map((window) => window.key).join(',')}|${input.windows.map((window) => window.cost).join(',')}|`;
  const args: (string | number)[] = [
    input.cachedEpoch, input.nowMs, input.windowMs, input.bucketMs, input.sandbox ? 1 : 0, input.quotaEnforced ? 1 : 0,
    input.allowanceFallback, input.expiresAt, input.batchId, input.usageTtlSeconds, input.windows.length, input.admissionDeadlineMs,
    input.eventIds.length, recordHead,
  ];
  for (const window of input.windows) args.push(window.limit, window.cost);
  for (const eventId of input.eventIds) args.push(eventId);
  return { keys, args };
}

export type AdmitOutcome =
  /** duplicate: per eventId, in order. */
  | { kind: 'admitted'; duplicate: boolean[] }
  | { kind: 'stale_credential' }
  /** window: index into AdmitInput.windows. */
  | { kind: 'rate_limited'; window: number; retryMs: number }
  | { kind: 'quota_exhausted' }
  | { kind: 'in_flight' }
  /** An eventId belongs to batch `batchId`, received at `receivedAtMs`, past its deadline and never settled. */
  | { kind: 'unsettled'; batchId: string; receivedAtMs: number };

export function admitOutcome(reply: unknown[], eventCount: number): AdmitOutcome {
  switch (reply[0]) {
    case AdmitReply.admitted: {
      const flags = String(reply[1]);
      return { kind: 'admitted', duplicate: Array.from({ length: eventCount }, (_, index) => flags.charCodeAt(index) === 49) };
    }
    case AdmitReply.staleCredential: return { kind: 'stale_credential' };
    case AdmitReply.rateLimited: return { kind: 'rate_limited', window: Number(reply[1]) - 1, retryMs: Number(reply[2]) };
    case AdmitReply.quotaExhausted: return { kind: 'quota_exhausted' };
    case AdmitReply.inFlight: return { kind: 'in_flight' };
    case AdmitReply.unsettled: return { kind: 'unsettled', batchId: String(reply[1]), receivedAtMs: Number(reply[2]) };
    default: throw new Error(`unexpected admission reply ${String(reply[0])}`);
  }
}

/**
 * ADMIT: the one Redis call of a batch (03 Ingestion, Limits): the credential epoch, the sliding
 * windows, eventId de-duplication and the Sandbox monthly allowance. All checks run before any
 * write, and Redis runs a script atomically, so a refused batch changes nothing.
 *
 * A de-duplication value names the batch that admitted the eventId and its receipt time; the
 * batch's field in the committed hash of its period exists once its rows are durable. An eventId
 * of an uncommitted batch is "in flight" until the batch's admission deadline. Past it, its edge
 * is taken to have died or lost its answer, and the batch is settled (released) before the
 * eventId can be admitted again (reply unsettled), so an eventId is counted once whatever
 * happened to the first attempt.
 *
 * Replies: {admitted, flags} (one char per eventId, 0 new, 1 duplicate); {staleCredential};
 * {rateLimited, window index (1-based), retry ms}; {quotaExhausted}; {inFlight};
 * {unsettled, batch id, receipt ms}.
 */
export const ADMIT = new LuaScript(WINDOW_FUNCTIONS + `
local epoch = redis.call('GET', KEYS[1]) or ''
if epoch ~= ARGV[1] then return {${AdmitReply.staleCredential}} end
local now = tonumber(ARGV[2])
local windowMs = tonumber(ARGV[3])
local bucketMs = tonumber(ARGV[4])
local W = tonumber(ARGV[11])
local deadlineMs = tonumber(ARGV[12])
local N = tonumber(ARGV[13])
local first = ${ADMIT_FIXED_ARGS} + 1 + 2 * W
local ids = {unpack(ARGV, first, first + N - 1)}
local span = math.floor(windowMs / bucketMs)
local bucket = math.floor(now / bucketMs)
local oldest = bucket - span + 1
local expired = {}
local moved = {}
local failed = 0
local retry = 0
for i = 1, W do
  local key = KEYS[${WINDOW_KEY} - 1 + i]
  local limit = tonumber(ARGV[${ADMIT_FIXED_ARGS} - 1 + 2 * i])
  local cost = tonumber(ARGV[${ADMIT_FIXED_ARGS} + 2 * i])
  local sum, gone, stored = window_read(key, oldest, span)
  expired[i] = gone
  moved[i] = stored ~= oldest
  if cost > 0 and sum + cost > limit then
    local wait = windowMs
    if cost <= limit then wait = window_wait(key, oldest, span, bucketMs, now, sum + cost - limit) end
    if failed == 0 then failed = i end
    if wait > retry then retry = wait end
  end
end
if failed > 0 then return {${AdmitReply.rateLimited}, failed, retry} end
local flags = {}
local fresh = 0
if N > 0 then
  local values = {}
  local periods = {}
  for back = 0, ${DEDUP_PERIODS - 1} do
    local found = redis.call('HMGET', KEYS[${DEDUP_KEY} + back], unpack(ids))
    for k = 1, N do
      if not values[k] and found[k] then
        values[k] = found[k]
        periods[k] = back
      end
    end
  end
  local seen = {}
  for k = 1, N do
    local key = ids[k]
    local value = values[k]
    if seen[key] then
      flags[k] = '1'
    elseif not value then
      flags[k] = '0'
      fresh = fresh + 1
    else
      local received, owner = string.match(value, '^(%d+):(.+)$')
      if not owner or redis.call('HEXISTS', KEYS[${COMMITTED_KEY} + periods[k]], owner) == 1 then
        flags[k] = '1'
      elseif tonumber(received) + deadlineMs >= now then
        return {${AdmitReply.inFlight}}
      elseif redis.call('HEXISTS', KEYS[${RECORD_KEY} + periods[k]], owner) == 1 then
        return {${AdmitReply.unsettled}, owner, received}
      else
        -- Released: its batch was settled as not durable.
        flags[k] = '0'
        fresh = fresh + 1
      end
    end
    seen[key] = true
  end
end
if ARGV[5] == '1' and ARGV[6] == '1' and fresh > 0 then
  local limit = tonumber(redis.call('GET', KEYS[2]) or ARGV[7]) or tonumber(ARGV[7])
  local used = tonumber(redis.call('GET', KEYS[3]) or '0') or 0
  if used + fresh > limit then return {${AdmitReply.quotaExhausted}, used, limit} end
end
for i = 1, W do
  local key = KEYS[${WINDOW_KEY} - 1 + i]
  local cost = tonumber(ARGV[${ADMIT_FIXED_ARGS} + 2 * i])
  local gone = expired[i]
  local dropped = 0
  for _, b in ipairs(gone) do dropped = dropped + tonumber(redis.call('HGET', key, b)) end
  if #gone > 0 then redis.call('HDEL', key, unpack(gone)) end
  -- 'o' changes once per bucket, and the expiry is set by a bucket's first write: the key then
  -- lives a window and a bucket past the bucket's start, longer than any count in it is read.
  if cost > 0 and redis.call('HINCRBY', key, bucket, cost) == cost then redis.call('PEXPIRE', key, windowMs + bucketMs) end
  if cost ~= dropped then redis.call('HINCRBY', key, 's', cost - dropped) end
  if moved[i] and (cost > 0 or #gone > 0) then redis.call('HSET', key, 'o', oldest) end
end
if fresh > 0 then
  local value = ARGV[2] .. ':' .. ARGV[9]
  local fields = {}
  local admitted = {}
  for k = 1, N do
    if flags[k] == '0' then
      fields[#fields + 1] = ids[k]
      fields[#fields + 1] = value
      admitted[#admitted + 1] = ids[k]
    end
  end
  local dedup = KEYS[${DEDUP_KEY}]
  redis.call('HSET', dedup, unpack(fields))
  -- Every key of a period expires at the same time: set once (NX) when it is created.
  redis.call('EXPIREAT', dedup, ARGV[8], 'NX')
  -- A usage counter's expiry is set when the counter is created (its first increment).
  if ARGV[5] == '1' and redis.call('INCRBY', KEYS[3], fresh) == fresh then redis.call('EXPIRE', KEYS[3], ARGV[10]) end
  if redis.call('INCRBY', KEYS[4], fresh) == fresh then redis.call('EXPIRE', KEYS[4], ARGV[10]) end
  redis.call('HSET', KEYS[${RECORD_KEY}], ARGV[9], ARGV[${ADMIT_FIXED_ARGS}] .. bucket .. '|' .. dedup .. '|' .. value .. '|' .. table.concat(admitted, ','))
  redis.call('EXPIREAT', KEYS[${RECORD_KEY}], ARGV[8], 'NX')
end
return {${AdmitReply.admitted}, table.concat(flags)}
`);

/**
 * DURABLE: batches of one account and period whose rows are durable in an edge's write-ahead log
 * are committed: their eventIds count as stored (committed hash) and their admission records are
 * settled. Asked by the request (to answer it) and again by the shipper before it ships a batch
 * (after a crash the shipper is the first to ask). Replies one character per batch: 1 when the
 * batch is committed (now or before), 0 when it was released meanwhile (its rows must not be
 * shipped, and it was never answered as accepted).
 */
const DURABLE = new LuaScript(`
local out = {}
for i = 2, #ARGV do
  local batch = ARGV[i]
  if redis.call('HDEL', KEYS[1], batch) == 1 then
    redis.call('HSET', KEYS[2], batch, '1')
    redis.call('EXPIREAT', KEYS[2], ARGV[1], 'NX')
    out[#out + 1] = '1'
  elseif redis.call('HEXISTS', KEYS[2], batch) == 1 then
    out[#out + 1] = '1'
  else
    out[#out + 1] = '0'
  end
end
return table.concat(out)
`);

export function durableCall(input: { recordKey: string; committedKey: string; expiresAt: number; batchIds: readonly string[] }): { keys: string[]; args: (string | number)[] } {
  return { keys: [input.recordKey, input.committedKey], args: [input.expiresAt, ...input.batchIds] };
}

/** DURABLE's reply: per batch, whether it is committed. */
export const durableOutcome = (reply: unknown, count: number): boolean[] =>
  Array.from({ length: count }, (_, index) => String(reply).charCodeAt(index) === 49);

/**
 * RELEASE: undoes the admission of a batch that was never made durable (its edge died, lost its
 * answer, or its log write failed): deletes its de-duplication fields still holding its value,
 * lowers the usage counters by that many, takes its costs back out of the window bucket it was
 * counted in (a bucket that already left the window was subtracted when it was deleted), and
 * deletes its record. The caller read the record to name its keys; a record that changed since
 * (settled meanwhile) is left alone. Replies the eventIds released, or -1 when left alone.
 */
const RELEASE = new LuaScript(`
if redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[2] then return -1 end
local function split(text)
  local out = {}
  for part in string.gmatch(text, '[^,]+') do out[#out + 1] = part end
  return out
end
local r = {}
for field in string.gmatch(ARGV[2] .. '|', '([^|]*)|') do r[#r + 1] = field end
local ids = split(r[${RECORD_FIELDS.eventIds}])
local values = redis.call('HMGET', KEYS[2], unpack(ids))
local mine = {}
for k = 1, #ids do
  if values[k] == r[${RECORD_FIELDS.dedupValue}] then mine[#mine + 1] = ids[k] end
end
if #mine > 0 then
  redis.call('HDEL', KEYS[2], unpack(mine))
  if r[${RECORD_FIELDS.sandbox}] == '1' then redis.call('DECRBY', KEYS[3], #mine) end
  redis.call('DECRBY', KEYS[4], #mine)
end
local costs = split(r[${RECORD_FIELDS.windowCosts}])
for i = 1, #costs do
  local key = KEYS[4 + i]
  local cost = tonumber(costs[i])
  if cost > 0 and redis.call('HEXISTS', key, r[${RECORD_FIELDS.bucket}]) == 1 then
    local left = redis.call('HINCRBY', key, r[${RECORD_FIELDS.bucket}], -cost)
    redis.call('HINCRBY', key, 's', -cost)
    if left <= 0 then redis.call('HDEL', key, r[${RECORD_FIELDS.bucket}]) end
  end
end
redis.call('HDEL', KEYS[1], ARGV[1])
return #mine
`);

/** RELEASE's KEYS from the record as read: the record hash, then the keys the record names. */
export function releaseCall(recordKey: string, batchId: string, record: string): { keys: string[]; args: string[] } {
  const fields = record.split('|');
  const field = (name: keyof typeof RECORD_FIELDS) => fields[RECORD_FIELDS[name] - 1];
  const windowKeys = field('windowKeys') === '' ? [] : field('windowKeys').split(',');
  return { keys: [recordKey, field('dedupKey'), field('accountUsageKey'), field('workspaceUsageKey'), ...windowKeys], args: [batchId, record] };
}

export const SCRIPTS = { ADMIT, DURABLE, RELEASE } as const;
