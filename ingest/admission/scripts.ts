import { LuaScript } from './luaScript.js';
import { BATCH_ID, DEDUP_ENTRY_BYTES, DEDUP_PERIODS, EVENT_ID_DIGEST_BYTES, batchTag, eventIdDigest } from './keys.js';
import { ScriptLayout, arg, key, keyList, type ScriptCall, type ScriptInput } from './scriptLayout.js';

/**
 * The admission scripts: their Lua, the layout of their KEYS and ARGV, and their replies, in
 * one place. Each script's layout (scriptLayout.ts) is the only record of its positions: the
 * typed builders below (admitCall, durableCall, releaseCall, connectionCheckCall) build the
 * arrays from it, and the Lua reads them through the locals its preamble declares. Every key is
 * passed as KEYS (keys.ts), none is named in Lua.
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

/** CONNECTION_CHECK's first element. */
export const ConnectionCheckReply = {
  ok: 1,
  staleCredential: 2,
  rateLimited: 3,
} as const;

/** RELEASE's reply when it left the batch alone; otherwise the count of eventIds it released. */
export const ReleaseReply = {
  settledMeanwhile: -1,
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

-- Counts \`cost\` in \`bucket\` of a window read by window_read at \`oldest\` (\`gone\` its expired
-- buckets, \`moved\` whether its 'o' differs from \`oldest\`), and deletes the expired buckets.
local function window_add(key, bucket, cost, gone, moved, oldest, windowMs, bucketMs)
  local dropped = 0
  for _, b in ipairs(gone) do dropped = dropped + tonumber(redis.call('HGET', key, b)) end
  if #gone > 0 then redis.call('HDEL', key, unpack(gone)) end
  -- 'o' changes once per bucket, and the expiry is set by a bucket's first write: the key then
  -- lives a window and a bucket past the bucket's start, longer than any count in it is read.
  if cost > 0 and redis.call('HINCRBY', key, bucket, cost) == cost then redis.call('PEXPIRE', key, windowMs + bucketMs) end
  if cost ~= dropped then redis.call('HINCRBY', key, 's', cost - dropped) end
  if moved and (cost > 0 or #gone > 0) then redis.call('HSET', key, 'o', oldest) end
end
`;

/**
 * The de-duplication set of one connection and period (docs/decisions/ingest.md, De-duplication
 * memory): linear hashing over small strings. Its meta (a string `<buckets>:<entries>` under the
 * meta key, `dd:{account}:<connection>:<period>:m`) says how many buckets there are; bucket i is
 * the string under the meta key less its `m`, followed by i: fixed-width entries back to back,
 * each an 8-byte eventId digest then the admitting batch's 11-byte tag (keys.ts). Strings rather
 * than hashes, so that one MGET reads every bucket a batch needs in all four periods (a hash needs
 * an HMGET per bucket and period, about 80 commands for 20 eventIds), and an entry has no
 * per-field header. The bucket keys are computed here, not passed as KEYS: they carry the meta
 * key's hash tag, so on a Redis Cluster they are in the slot of the call's declared keys, which
 * Redis 7 lets a script touch (only keys of another slot need allow-cross-slot-keys).
 */
const DEDUP_FUNCTIONS = `
local ENTRY = ${DEDUP_ENTRY_BYTES}
local DIGEST = ${EVENT_ID_DIGEST_BYTES}

local function dedup_hash(digest)
  local b1, b2, b3, b4 = string.byte(digest, 5, 8)
  return ((b1 * 256 + b2) * 256 + b3) * 256 + b4
end

-- 2^L: the largest power of two not above the bucket count (keys.ts dedupBucket).
local function dedup_low(buckets)
  local low = 1
  while low * 2 <= buckets do low = low * 2 end
  return low
end

-- A set's bucket and entry counts (1 and 0 before its first write).
local function dedup_meta(text)
  if not text then return 1, 0 end
  local buckets, count = string.match(text, '^(%d+):(%d+)$')
  return tonumber(buckets), tonumber(count)
end

-- Per position of \`digests\` listed in \`positions\`, its bucket in a set of \`buckets\` buckets;
-- and the distinct buckets, in first-seen order.
local function dedup_buckets(digests, positions, buckets)
  local low = dedup_low(buckets)
  local split = buckets - low
  local of, order, seen = {}, {}, {}
  for _, k in ipairs(positions) do
    local h = dedup_hash(digests[k])
    local index = h % low
    if index < split then index = h % (low * 2) end
    of[k] = index
    if not seen[index] then
      seen[index] = true
      order[#order + 1] = index
    end
  end
  return of, order
end

-- Where the entry of \`digest\` starts in a bucket's text, or nil (a match must start an entry).
local function dedup_find(text, digest)
  local at = 1
  while true do
    local start = string.find(text, digest, at, true)
    if not start then return nil end
    if (start - 1) % ENTRY == 0 then return start end
    at = start + 1
  end
end

-- The batch id of a tag (keys.ts batchOfTag): 12 hex characters, then the 40-bit counter in base36.
local BASE36 = '0123456789abcdefghijklmnopqrstuvwxyz'
local function batch_of(tag)
  local c1, c2, c3, c4, c5 = string.byte(tag, 7, 11)
  local counter = (((c1 * 256 + c2) * 256 + c3) * 256 + c4) * 256 + c5
  local digits = ''
  repeat
    local digit = counter % 36
    digits = string.sub(BASE36, digit + 1, digit + 1) .. digits
    counter = (counter - digit) / 36
  until counter == 0
  return string.format('%02x%02x%02x%02x%02x%02x', string.byte(tag, 1, 6)) .. digits
end
`;

/**
 * The admission record of a batch with new eventIds: a field of the account's record hash of its
 * period (`ib:{account}:<period>`, field batch id), everything it takes to undo the admission
 * without the process that made it. Fields joined by `|` (ids and keys never hold `|` or `,`):
 * 1 received at (ms), 2 sandbox 1|0, 3 account Sandbox usage key, 4 workspace usage key, 5 window
 * keys (`,`), 6 window costs (`,`), 7 bucket, 8 the meta key of the de-duplication set, then the
 * 8-byte digests of the new eventIds, back to back (binary: the part after the eighth `|`).
 *
 * A record of the edge before the bucketed layout has 8 the de-duplication hash, 9 the
 * de-duplication value and 10 the new eventIds (`,`); its field 8 is told from a meta key by the
 * meta key's final `:m`. RELEASE undoes both kinds (an upgrade finds the old kind in flight).
 */
const RECORD_FIELDS = {
  receivedAt: 1,
  sandbox: 2,
  accountUsageKey: 3,
  workspaceUsageKey: 4,
  windowKeys: 5,
  windowCosts: 6,
  bucket: 7,
  dedupKey: 8,
  legacyValue: 9,
  legacyEventIds: 10,
} as const;

/**
 * Entries per bucket, on average, above which a de-duplication set splits a bucket (an unsplit
 * bucket holds up to about twice the average): a bucket's key costs Redis about 150 bytes, 3 per
 * entry at this load, and a write copies its bucket (about 0.9 KB at this load, 1.8 KB at most).
 */
export const DEDUP_BUCKET_LOAD = 48;

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
  /**
   * Per period, current first, DEDUP_PERIODS each: the meta key of the connection's
   * de-duplication set (keys.ts eventIdMeta), its hash of the form before buckets (eventIds, read
   * until they expire), the account's committed-batch hash and its record hash.
   */
  metaKeys: readonly string[];
  legacyKeys: readonly string[];
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

const ADMIT_LAYOUT = new ScriptLayout(
  [
    key('epochKey'),
    key('allowanceKey'),
    key('accountUsageKey'),
    key('workspaceUsageKey'),
    keyList('metaKeys', DEDUP_PERIODS),
    keyList('legacyKeys', DEDUP_PERIODS),
    keyList('committedKeys', DEDUP_PERIODS),
    keyList('recordKeys', DEDUP_PERIODS),
    keyList('windowKeys'),
  ],
  [
    arg.string('cachedEpoch'),
    arg.numberText('nowMs'),
    arg.number('windowMs'),
    arg.number('bucketMs'),
    arg.flag('sandbox'),
    arg.flag('quotaEnforced'),
    arg.numberText('allowanceFallback'),
    arg.numberText('expiresAt'),
    arg.string('batchId'),
    // The de-duplication value of this batch's eventIds (keys.ts batchTag).
    arg.bytes('tag'),
    arg.numberText('usageTtlSeconds'),
    arg.number('admissionDeadlineMs'),
    // The admission record's fields 1-6, each followed by `|`.
    arg.string('recordHead'),
    // Per window, in the order of windowKeys: its limit, and this batch's cost in it.
    arg.list('windowLimits', 'number'),
    arg.list('windowCosts', 'number'),
    // The eventIds, for the hashes of the form before buckets only, and their digests (keys.ts eventIdDigest).
    arg.list('eventIds', 'string'),
    arg.list('digests', 'bytes'),
  ],
  AdmitReply,
);

export function admitCall(input: AdmitInput): ScriptCall {
  const windowKeys = input.windows.map((window) => window.key);
  const windowCosts = input.windows.map((window) => window.cost);
  const recordHead = `${input.nowMs}|${input.sandbox ? 1 : 0}|${input.accountUsageKey}|${input.workspaceUsageKey}|${windowKeys.join(',')}|${windowCosts.join(',')}|`;
  return ADMIT_LAYOUT.build({
    epochKey: input.epochKey,
    allowanceKey: input.allowanceKey,
    accountUsageKey: input.accountUsageKey,
    workspaceUsageKey: input.workspaceUsageKey,
    metaKeys: input.metaKeys,
    legacyKeys: input.legacyKeys,
    committedKeys: input.committedKeys,
    recordKeys: input.recordKeys,
    windowKeys,
    cachedEpoch: input.cachedEpoch,
    nowMs: input.nowMs,
    windowMs: input.windowMs,
    bucketMs: input.bucketMs,
    sandbox: input.sandbox,
    quotaEnforced: input.quotaEnforced,
    allowanceFallback: input.allowanceFallback,
    expiresAt: input.expiresAt,
    batchId: input.batchId,
    // Only a batch with eventIds writes its tag: a call without (the tests' placeholders) may have any id.
    tag: input.eventIds.length > 0 ? batchTag(input.batchId) : Buffer.alloc(0),
    usageTtlSeconds: input.usageTtlSeconds,
    admissionDeadlineMs: input.admissionDeadlineMs,
    recordHead,
    windowLimits: input.windows.map((window) => window.limit),
    windowCosts,
    eventIds: input.eventIds,
    digests: input.eventIds.map(eventIdDigest),
  });
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
    case AdmitReply.staleCredential:
      return { kind: 'stale_credential' };
    case AdmitReply.rateLimited:
      return { kind: 'rate_limited', window: Number(reply[1]) - 1, retryMs: Number(reply[2]) };
    case AdmitReply.quotaExhausted:
      return { kind: 'quota_exhausted' };
    case AdmitReply.inFlight:
      return { kind: 'in_flight' };
    case AdmitReply.unsettled:
      return { kind: 'unsettled', batchId: String(reply[1]), receivedAtMs: Number(reply[2]) };
    default:
      throw new Error(`unexpected admission reply ${String(reply[0])}`);
  }
}

/**
 * ADMIT: the one Redis call of a batch (03 Ingestion, Limits): the credential epoch, the sliding
 * windows, eventId de-duplication and the Sandbox monthly allowance. All checks run before any
 * write, and Redis runs a script atomically, so a refused batch changes nothing.
 *
 * A de-duplication entry names the batch that admitted the eventId (its tag, keys.ts); the
 * batch's field in the committed hash of its period exists once its rows are durable, and its
 * admission record (whose field 1 is its receipt time) until it is committed or released. An
 * eventId of an uncommitted batch is "in flight" until the batch's admission deadline. Past it,
 * its edge is taken to have died or lost its answer, and the batch is settled (released) before
 * the eventId can be admitted again (reply unsettled), so an eventId is counted once whatever
 * happened to the first attempt. An entry whose batch is neither committed nor recorded was
 * released (RELEASE deletes the entries with the record; an entry only outlives its record if
 * another batch took the eventId over): the eventId is new.
 *
 * Lookups: the four periods' metas in one MGET, then every bucket holding a digest of the batch,
 * in all four periods, in a second MGET; then, while any hash of the form before buckets exists
 * (EXISTS over the four), those hashes by eventId, as before. Writes: one SET per bucket written
 * (KEEPTTL, or EXAT when it creates the bucket), then as many splits as bring the load to
 * DEDUP_BUCKET_LOAD (each rewrites one bucket into two: amortised O(1) per entry), then the meta.
 *
 * Replies: {admitted, flags} (one char per eventId, 0 new, 1 duplicate); {staleCredential};
 * {rateLimited, window index (1-based), retry ms}; {quotaExhausted}; {inFlight};
 * {unsettled, batch id, receipt ms}.
 */
export const ADMIT = new LuaScript(
  ADMIT_LAYOUT.preamble
    + WINDOW_FUNCTIONS
    + DEDUP_FUNCTIONS
    + `
local epoch = redis.call('GET', epochKey) or ''
if epoch ~= cachedEpoch then return {REPLY_STALE_CREDENTIAL} end
local now = tonumber(nowMs)
local W = #windowKeys
local N = #eventIds
local span = math.floor(windowMs / bucketMs)
local bucket = math.floor(now / bucketMs)
local oldest = bucket - span + 1
local expired = {}
local moved = {}
local failed = 0
local retry = 0
for i = 1, W do
  local key = windowKeys[i]
  local limit = windowLimits[i]
  local cost = windowCosts[i]
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
if failed > 0 then return {REPLY_RATE_LIMITED, failed, retry} end
local flags = {}
local fresh = 0
-- Per eventId position: the tag found and the period it was found in (most recent first), whether
-- it came from a hash of the form before buckets; per bucket of the current period, its text.
local found, foundAt, legacy, current = {}, {}, {}, {}
local metas = {}
local texts = {}
if N > 0 then
  metas = redis.call('MGET', unpack(metaKeys))
  local positions = {}
  for k = 1, N do positions[k] = k end
  local bucketOf, slots, keys = {}, {}, {}
  for p = 1, #metaKeys do
    if p == 1 or metas[p] then
      local of, order = dedup_buckets(digests, positions, (dedup_meta(metas[p])))
      bucketOf[p] = of
      slots[p] = {}
      if metas[p] then
        local prefix = string.sub(metaKeys[p], 1, -2)
        for _, index in ipairs(order) do
          keys[#keys + 1] = prefix .. index
          slots[p][index] = #keys
        end
      end
    end
  end
  if #keys > 0 then texts = redis.call('MGET', unpack(keys)) end
  current = bucketOf[1]
  local missing = false
  for k = 1, N do
    local digest = digests[k]
    for p = 1, #metaKeys do
      local slot = slots[p] and slots[p][bucketOf[p][k]]
      local text = slot and texts[slot]
      local at = text and dedup_find(text, digest)
      if at then
        found[k] = string.sub(text, at + DIGEST, at + ENTRY - 1)
        foundAt[k] = p
        break
      end
    end
    if not found[k] then missing = true end
  end
  if missing and redis.call('EXISTS', unpack(legacyKeys)) > 0 then
    for p = 1, #legacyKeys do
      local got = redis.call('HMGET', legacyKeys[p], unpack(eventIds))
      for k = 1, N do
        if not found[k] and got[k] then
          found[k] = got[k]
          foundAt[k] = p
          legacy[k] = true
        end
      end
    end
  end
  -- The current period's buckets by index (false: the bucket does not exist yet).
  local byIndex = {}
  for index, slot in pairs(slots[1]) do byIndex[index] = texts[slot] end
  texts = byIndex
  local seen = {}
  for k = 1, N do
    local digest = digests[k]
    local value = found[k]
    if seen[digest] then
      flags[k] = '1'
    elseif not value then
      flags[k] = '0'
      fresh = fresh + 1
    else
      local p = foundAt[k]
      local received, owner
      if legacy[k] then
        received, owner = string.match(value, '^(%d+):(.+)$')
      else
        owner = batch_of(value)
      end
      if not owner or redis.call('HEXISTS', committedKeys[p], owner) == 1 then
        flags[k] = '1'
      else
        local recorded
        if legacy[k] then
          if tonumber(received) + admissionDeadlineMs >= now then return {REPLY_IN_FLIGHT} end
          recorded = redis.call('HEXISTS', recordKeys[p], owner) == 1
        else
          local record = redis.call('HGET', recordKeys[p], owner)
          if record then
            received = string.match(record, '^(%d+)|')
            if tonumber(received) + admissionDeadlineMs >= now then return {REPLY_IN_FLIGHT} end
            recorded = true
          end
        end
        if recorded then return {REPLY_UNSETTLED, owner, received} end
        -- Released: its batch was settled as not durable.
        flags[k] = '0'
        fresh = fresh + 1
      end
    end
    seen[digest] = true
  end
end
if sandbox and quotaEnforced and fresh > 0 then
  local limit = tonumber(redis.call('GET', allowanceKey) or allowanceFallback) or tonumber(allowanceFallback)
  local used = tonumber(redis.call('GET', accountUsageKey) or '0') or 0
  if used + fresh > limit then return {REPLY_QUOTA_EXHAUSTED, used, limit} end
end
for i = 1, W do window_add(windowKeys[i], bucket, windowCosts[i], expired[i], moved[i], oldest, windowMs, bucketMs) end
if fresh > 0 then
  local metaKey = metaKeys[1]
  local prefix = string.sub(metaKey, 1, -2)
  local buckets, count = dedup_meta(metas[1])
  local order, groups, admitted = {}, {}, {}
  for k = 1, N do
    if flags[k] == '0' then
      local index = current[k]
      local group = groups[index]
      if not group then
        group = {}
        groups[index] = group
        order[#order + 1] = index
      end
      group[#group + 1] = k
      admitted[#admitted + 1] = digests[k]
    end
  end
  for _, index in ipairs(order) do
    local text = texts[index] or ''
    local added = {}
    for _, k in ipairs(groups[index]) do
      -- A released entry of this period is taken over in place (it is no new entry).
      local at = foundAt[k] == 1 and not legacy[k] and dedup_find(text, digests[k])
      if at then
        text = string.sub(text, 1, at + DIGEST - 1) .. tag .. string.sub(text, at + ENTRY)
      else
        added[#added + 1] = digests[k] .. tag
      end
    end
    count = count + #added
    if texts[index] then
      redis.call('SET', prefix .. index, text .. table.concat(added), 'KEEPTTL')
    else
      -- Every key of a period expires at the same time: set when it is created.
      redis.call('SET', prefix .. index, text .. table.concat(added), 'EXAT', expiresAt)
    end
  end
  -- Linear hashing: split the bucket at the split pointer (buckets - 2^L) into itself and bucket
  -- \`buckets\` while the load is above DEDUP_BUCKET_LOAD; its entries with bit L of their hash move.
  while count > ${DEDUP_BUCKET_LOAD} * buckets do
    local low = dedup_low(buckets)
    local from = prefix .. (buckets - low)
    local text = redis.call('GET', from) or ''
    local stay, move = {}, {}
    for at = 1, #text, ENTRY do
      local entry = string.sub(text, at, at + ENTRY - 1)
      if math.floor(dedup_hash(entry) / low) % 2 == 1 then move[#move + 1] = entry else stay[#stay + 1] = entry end
    end
    if #move > 0 then
      redis.call('SET', prefix .. buckets, table.concat(move), 'EXAT', expiresAt)
      if #stay > 0 then redis.call('SET', from, table.concat(stay), 'KEEPTTL') else redis.call('DEL', from) end
    end
    buckets = buckets + 1
  end
  if metas[1] then
    redis.call('SET', metaKey, buckets .. ':' .. count, 'KEEPTTL')
  else
    redis.call('SET', metaKey, buckets .. ':' .. count, 'EXAT', expiresAt)
  end
  -- A usage counter's expiry is set when the counter is created (its first increment).
  if sandbox and redis.call('INCRBY', accountUsageKey, fresh) == fresh then redis.call('EXPIRE', accountUsageKey, usageTtlSeconds) end
  if redis.call('INCRBY', workspaceUsageKey, fresh) == fresh then redis.call('EXPIRE', workspaceUsageKey, usageTtlSeconds) end
  redis.call('HSET', recordKeys[1], batchId, recordHead .. bucket .. '|' .. metaKey .. '|' .. table.concat(admitted))
  redis.call('EXPIREAT', recordKeys[1], expiresAt, 'NX')
end
return {REPLY_ADMITTED, table.concat(flags)}
`,
);

const CONNECTION_CHECK_LAYOUT = new ScriptLayout(
  [key('epochKey'), key('windowKey')],
  [arg.string('cachedEpoch'), arg.number('nowMs'), arg.number('windowMs'), arg.number('bucketMs'), arg.number('limit')],
  ConnectionCheckReply,
);

export const connectionCheckCall = (input: ScriptInput<typeof CONNECTION_CHECK_LAYOUT>): ScriptCall => CONNECTION_CHECK_LAYOUT.build(input);

export type ConnectionCheckOutcome = { kind: 'ok' } | { kind: 'stale_credential' } | { kind: 'rate_limited'; retryMs: number };

export function connectionCheckOutcome(reply: unknown[]): ConnectionCheckOutcome {
  switch (reply[0]) {
    case ConnectionCheckReply.ok:
      return { kind: 'ok' };
    case ConnectionCheckReply.staleCredential:
      return { kind: 'stale_credential' };
    case ConnectionCheckReply.rateLimited:
      return { kind: 'rate_limited', retryMs: Number(reply[1]) };
    default:
      throw new Error(`unexpected connection check reply ${String(reply[0])}`);
  }
}

/**
 * CONNECTION_CHECK (GET /v1/collector/connection): the credential epoch, then the client's
 * budget of checks, a window of its own (a check counts 1) counted as ADMIT counts its windows.
 * Replies {ok}; {staleCredential}; {rateLimited, retry ms}. A refused check changes nothing.
 */
const CONNECTION_CHECK = new LuaScript(
  CONNECTION_CHECK_LAYOUT.preamble
    + WINDOW_FUNCTIONS
    + `
local epoch = redis.call('GET', epochKey) or ''
if epoch ~= cachedEpoch then return {REPLY_STALE_CREDENTIAL} end
local span = math.floor(windowMs / bucketMs)
local bucket = math.floor(nowMs / bucketMs)
local oldest = bucket - span + 1
local sum, gone, stored = window_read(windowKey, oldest, span)
if sum + 1 > limit then
  local wait = windowMs
  if 1 <= limit then wait = window_wait(windowKey, oldest, span, bucketMs, nowMs, sum + 1 - limit) end
  return {REPLY_RATE_LIMITED, wait}
end
window_add(windowKey, bucket, 1, gone, stored ~= oldest, oldest, windowMs, bucketMs)
return {REPLY_OK}
`,
);

const DURABLE_LAYOUT = new ScriptLayout(
  [key('recordKey'), key('committedKey')],
  [arg.numberText('expiresAt'), arg.list('batchIds', 'string')],
);

/**
 * DURABLE: batches of one account and period whose rows are durable in an edge's write-ahead log
 * are committed: their eventIds count as stored (committed hash) and their admission records are
 * settled. Asked by the request (to answer it) and again by the shipper before it ships a batch
 * (after a crash the shipper is the first to ask). Replies one character per batch: 1 when the
 * batch is committed (now or before), 0 when it was released meanwhile (its rows must not be
 * shipped, and it was never answered as accepted).
 */
const DURABLE = new LuaScript(
  DURABLE_LAYOUT.preamble
    + `
local out = {}
for i = 1, #batchIds do
  local batch = batchIds[i]
  if redis.call('HDEL', recordKey, batch) == 1 then
    redis.call('HSET', committedKey, batch, '1')
    redis.call('EXPIREAT', committedKey, expiresAt, 'NX')
    out[#out + 1] = '1'
  elseif redis.call('HEXISTS', committedKey, batch) == 1 then
    out[#out + 1] = '1'
  else
    out[#out + 1] = '0'
  end
end
return table.concat(out)
`,
);

export function durableCall(input: {
  recordKey: string;
  committedKey: string;
  expiresAt: number;
  batchIds: readonly string[];
}): ScriptCall {
  return DURABLE_LAYOUT.build(input);
}

/** DURABLE's reply: per batch, whether it is committed. */
export const durableOutcome = (reply: unknown, count: number): boolean[] =>
  Array.from({ length: count }, (_, index) => String(reply).charCodeAt(index) === 49);

const RELEASE_LAYOUT = new ScriptLayout(
  // The record hash, then the keys the record names (the de-duplication set's meta key, or the
  // hash of the form before buckets).
  [key('recordKey'), key('dedupKey'), key('accountUsageKey'), key('workspaceUsageKey'), keyList('windowKeys')],
  // The record as the caller read it, and the batch's de-duplication value (keys.ts batchTag).
  [arg.string('batchId'), arg.bytes('tag'), arg.bytes('record')],
  ReleaseReply,
);

/**
 * RELEASE: undoes the admission of a batch that was never made durable (its edge died, lost its
 * answer, or its log write failed): deletes its de-duplication entries still holding its tag
 * (found from the record's digests in the buckets they are in now, whatever splits happened
 * since), lowers the set's entry count, the usage counters by that many, takes its costs back out
 * of the window bucket it was counted in (a bucket that already left the window was subtracted
 * when it was deleted), and deletes its record. The caller read the record to name its keys; a
 * record that changed since (settled meanwhile) is left alone. Also undoes a record of the form
 * before buckets (RECORD_FIELDS). Replies the eventIds released, or settledMeanwhile.
 */
const RELEASE = new LuaScript(
  RELEASE_LAYOUT.preamble
    + DEDUP_FUNCTIONS
    + `
if redis.call('HGET', recordKey, batchId) ~= record then return REPLY_SETTLED_MEANWHILE end
local function split(text)
  local out = {}
  for part in string.gmatch(text, '[^,]+') do out[#out + 1] = part end
  return out
end
local r = {}
local mine = 0
if string.sub(dedupKey, -2) == ':m' then
  local at = 1
  for i = 1, ${RECORD_FIELDS.dedupKey} do
    local bar = string.find(record, '|', at, true)
    r[i] = string.sub(record, at, bar - 1)
    at = bar + 1
  end
  local digests, positions = {}, {}
  for j = at, #record, DIGEST do
    digests[#digests + 1] = string.sub(record, j, j + DIGEST - 1)
    positions[#digests] = #digests
  end
  local meta = redis.call('GET', dedupKey)
  if meta and #digests > 0 then
    local buckets, count = dedup_meta(meta)
    local of, order = dedup_buckets(digests, positions, buckets)
    local prefix = string.sub(dedupKey, 1, -2)
    local keys = {}
    for i, index in ipairs(order) do keys[i] = prefix .. index end
    local texts = redis.call('MGET', unpack(keys))
    for i, index in ipairs(order) do
      local text = texts[i]
      if text then
        local before = #text
        for k = 1, #digests do
          if of[k] == index then
            local start = dedup_find(text, digests[k])
            if start and string.sub(text, start + DIGEST, start + ENTRY - 1) == tag then
              text = string.sub(text, 1, start - 1) .. string.sub(text, start + ENTRY)
              mine = mine + 1
            end
          end
        end
        if #text == 0 then
          redis.call('DEL', keys[i])
        elseif #text ~= before then
          redis.call('SET', keys[i], text, 'KEEPTTL')
        end
      end
    end
    if mine > 0 then redis.call('SET', dedupKey, buckets .. ':' .. (count - mine), 'KEEPTTL') end
  end
else
  for field in string.gmatch(record .. '|', '([^|]*)|') do r[#r + 1] = field end
  local ids = split(r[${RECORD_FIELDS.legacyEventIds}])
  local values = redis.call('HMGET', dedupKey, unpack(ids))
  local gone = {}
  for k = 1, #ids do
    if values[k] == r[${RECORD_FIELDS.legacyValue}] then gone[#gone + 1] = ids[k] end
  end
  if #gone > 0 then redis.call('HDEL', dedupKey, unpack(gone)) end
  mine = #gone
end
if mine > 0 then
  if r[${RECORD_FIELDS.sandbox}] == '1' then redis.call('DECRBY', accountUsageKey, mine) end
  redis.call('DECRBY', workspaceUsageKey, mine)
end
local costs = split(r[${RECORD_FIELDS.windowCosts}])
for i = 1, #costs do
  local key = windowKeys[i]
  local cost = tonumber(costs[i])
  if cost > 0 and redis.call('HEXISTS', key, r[${RECORD_FIELDS.bucket}]) == 1 then
    local left = redis.call('HINCRBY', key, r[${RECORD_FIELDS.bucket}], -cost)
    redis.call('HINCRBY', key, 's', -cost)
    if left <= 0 then redis.call('HDEL', key, r[${RECORD_FIELDS.bucket}]) end
  end
end
redis.call('HDEL', recordKey, batchId)
return mine
`,
);

/**
 * RELEASE's KEYS from the record as read (binary: read it with hgetBuffer): the record hash, then
 * the keys the record names in its text fields 1 to 8, the same places in both forms.
 */
export function releaseCall(recordKey: string, batchId: string, record: Buffer): ScriptCall {
  let end = -1;
  for (let field = 0; field < RECORD_FIELDS.dedupKey && end < record.length; field += 1) {
    const bar = record.indexOf(0x7c, end + 1);
    end = bar < 0 ? record.length : bar;
  }
  const fields = record.subarray(0, end).toString('utf8').split('|');
  const field = (name: keyof typeof RECORD_FIELDS) => fields[RECORD_FIELDS[name] - 1] ?? '';
  return RELEASE_LAYOUT.build({
    recordKey,
    dedupKey: field('dedupKey'),
    accountUsageKey: field('accountUsageKey'),
    workspaceUsageKey: field('workspaceUsageKey'),
    windowKeys: field('windowKeys') === '' ? [] : field('windowKeys').split(','),
    batchId,
    tag: BATCH_ID.test(batchId) ? batchTag(batchId) : Buffer.alloc(0),
    record,
  });
}

/** RELEASE's reply: the eventIds it released, 0 when it left the batch alone. */
export const releaseOutcome = (reply: unknown): number => (reply === ReleaseReply.settledMeanwhile ? 0 : Number(reply));

export const SCRIPTS = { ADMIT, CONNECTION_CHECK, DURABLE, RELEASE } as const;
/** Each script's layout, under the script's name in SCRIPTS. */
export const LAYOUTS = {
  ADMIT: ADMIT_LAYOUT,
  CONNECTION_CHECK: CONNECTION_CHECK_LAYOUT,
  DURABLE: DURABLE_LAYOUT,
  RELEASE: RELEASE_LAYOUT,
} as const;
