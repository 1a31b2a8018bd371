import { LuaScript } from './luaScript.js';
import { DEDUP_PERIODS } from './keys.js';
import { EVENT_ID_DIGEST_BYTES, eventIdDigests, type EventIdDigests } from '../common/eventIdDigest.js';
import { ScriptLayout, arg, key, keyList, type ScriptCall, type ScriptInput } from './scriptLayout.js';

/**
 * The admission scripts: their Lua, the layout of their KEYS and ARGV, and their replies, in
 * one place. Each script's layout (scriptLayout.ts) is the only record of its positions: the
 * typed builders below (admitCall, durableCall, releaseCall, connectionCheckCall) build the
 * arrays from it, and the Lua reads them through the locals its preamble declares. Every key is
 * passed as KEYS (keys.ts) but a de-duplication set's buckets hash, which the Lua names from the
 * set's meta key (DEDUP_FUNCTIONS).
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
 * memory): linear hashing over the fields of one hash. Its meta (a string `<buckets>:<entries>`
 * under the meta key, `dd:{account}:<connection>:<period>:m`) says how many buckets there are;
 * the buckets are the fields of the hash under the meta key with its `m` made `b` (field the
 * bucket index, value the 10-byte digests of its eventIds back to back, keys.ts). A digest says
 * only that the eventId was admitted: its batch is committed unless an admission record of the
 * period lists it (RELEASE takes out the digests of the batch it undoes). One hash per period,
 * so a lookup is one HMGET per period and a write one HSET, as with the hash of eventIds before;
 * a bucket holds DEDUP_BUCKET_LOAD digests on average, so the per-field cost of Redis's hashtable
 * is shared by that many eventIds. The buckets key is computed here from the meta key, not passed
 * as KEYS: it carries the same hash tag, so on a Redis Cluster it is in the slot of the call's
 * declared keys, which Redis 7 lets a script touch (only keys of another slot need
 * allow-cross-slot-keys).
 */
const DEDUP_FUNCTIONS = `
local DIGEST = ${EVENT_ID_DIGEST_BYTES}
-- Locals rather than a global and a field looked up at each call in the per-digest loops.
local sub, byte, find = string.sub, string.byte, string.find

local function dedup_hash(digest)
  local b1, b2, b3, b4 = byte(digest, 5, 8)
  return ((b1 * 256 + b2) * 256 + b3) * 256 + b4
end

-- A bucket's field name: its index in decimal, the text a number argument would become, made once
-- per call (Lua turns a number passed to redis.call into text with %.14g, slower than %d).
local function dedup_field(index)
  return string.format('%d', index)
end

-- 2^L and L: the largest power of two not above the bucket count (keys.ts dedupBucket), and its
-- exponent (the hash bit a split at this size decides on).
local function dedup_low(buckets)
  local low, L = 1, 0
  while low * 2 <= buckets do
    low = low * 2
    L = L + 1
  end
  return low, L
end

-- A set's bucket and entry counts (1 and 0 before its first write).
local function dedup_meta(text)
  if not text then return 1, 0 end
  local buckets, count = string.match(text, '^(%d+):(%d+)$')
  return tonumber(buckets), tonumber(count)
end

-- The hash of a set's buckets, from its meta key (keys.ts dedupBucketsKey).
local function dedup_buckets_key(metaKey)
  return sub(metaKey, 1, -2) .. 'b'
end

-- The bucket of each position (of \`hashes\`, dedup_hash of each digest, computed once for every
-- period) listed in \`positions\`, in a set of \`buckets\` buckets, and the distinct buckets in
-- first-seen order with, per bucket, its place in that order and its field name (dedup_field).
-- (Plain tables of numbers: a table per bucket would cost the script more than the lookups.)
local function dedup_group(hashes, positions, buckets)
  local low = dedup_low(buckets)
  local split = buckets - low
  local of, order, place, names = {}, {}, {}, {}
  for _, k in ipairs(positions) do
    local h = hashes[k]
    local index = h % low
    if index < split then index = h % (low * 2) end
    of[k] = index
    if not place[index] then
      order[#order + 1] = index
      place[index] = #order
      names[#order] = dedup_field(index)
    end
  end
  return of, order, place, names
end

-- Where \`digest\` starts in a bucket, or nil (a match must start a digest).
local function dedup_find(text, digest)
  local at = 1
  while true do
    local start = find(text, digest, at, true)
    if not start then return nil end
    if (start - 1) % DIGEST == 0 then return start end
    at = start + 1
  end
end

-- Linear hashing's split of a bucket's \`text\` on bit \`L\` of its digests' hashes (dedup_hash): the
-- digests whose bit is 0 (they stay) and those whose bit is 1 (they move), each in stored order.
-- The bit is read from the one byte of the digest that holds it, and runs of digests going the
-- same way are copied as one piece, rather than making a string of every digest.
local function dedup_split(text, L)
  if L >= 32 then return text, '' end
  local byteAt = 7 - math.floor(L / 8)
  -- Bit r of a byte b is set when b mod 2^(r+1) is at least 2^r.
  local unit = 2 ^ (L % 8)
  local cycle = 2 * unit
  local stay, move = {}, {}
  local from, moving = 1, false
  for at = 1, #text, DIGEST do
    local m = byte(text, at + byteAt) % cycle >= unit
    if m ~= moving then
      if at > from then
        if moving then move[#move + 1] = sub(text, from, at - 1) else stay[#stay + 1] = sub(text, from, at - 1) end
      end
      from, moving = at, m
    end
  end
  if from <= #text then
    if from == 1 then
      if moving then return '', text end
      return text, ''
    end
    if moving then move[#move + 1] = sub(text, from) else stay[#stay + 1] = sub(text, from) end
  end
  return table.concat(stay), table.concat(move)
end

local function from_hex(text)
  return (string.gsub(text, '%x%x', function(pair) return string.char(tonumber(pair, 16)) end))
end

-- A record's fields (split at |).
local function record_fields(record)
  local r = {}
  for field in string.gmatch(record .. '|', '([^|]*)|') do r[#r + 1] = field end
  return r
end

-- The digests (hex) the records of a record hash list for the set of \`metaKey\` (records of the
-- bucketed form name the set's meta key in field 8 and list digests in field 9), each with its
-- batch and receipt time; \`except\` a batch to leave out.
local function recorded_digests(recordKey, metaKey, except)
  local owners = {}
  local flat = redis.call('HGETALL', recordKey)
  for j = 1, #flat, 2 do
    if flat[j] ~= except then
      local r = record_fields(flat[j + 1])
      if r[8] == metaKey then
        for digest in string.gmatch(r[9] or '', '[^,]+') do owners[digest] = {flat[j], r[1]} end
      end
    end
  end
  return owners
end
`;

/**
 * The admission record of a batch with new eventIds: a field of the account's record hash of its
 * period (`ib:{account}:<period>`, field batch id), everything it takes to undo the admission
 * without the process that made it. Fields joined by `|` (ids, keys and digests never hold `|`
 * or `,`): 1 received at (ms), 2 sandbox 1|0, 3 account Sandbox usage key, 4 workspace usage key,
 * 5 window keys (`,`), 6 window costs (`,`), 7 bucket, 8 the meta key of the connection's
 * de-duplication set, 9 the digests of the new eventIds in hex (`,`, common/eventIdDigest.ts).
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
  digests: 9,
  legacyValue: 9,
  legacyEventIds: 10,
} as const;

/**
 * Digests per bucket, on average, above which a de-duplication set splits a bucket (an unsplit
 * bucket holds up to about twice as many). A bucket field costs Redis about 60 bytes besides its
 * digests (dict entry, field, value header, allocation rounding): about 2 per eventId here. More
 * per bucket would cost less memory and more CPU: a lookup copies every bucket it reads into Lua,
 * and a write builds each bucket it writes anew; fewer, more splits (20/32 per 20-eventId batch here).
 */
export const DEDUP_BUCKET_LOAD = 32;

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
  /** Their digests (common/eventIdDigest.ts), when the caller has them; else made here. */
  digests?: EventIdDigests;
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
    arg.numberText('usageTtlSeconds'),
    arg.number('admissionDeadlineMs'),
    // The admission record's fields 1-6, each followed by `|`.
    arg.string('recordHead'),
    // Per window, in the order of windowKeys: its limit, and this batch's cost in it.
    arg.list('windowLimits', 'number'),
    arg.list('windowCosts', 'number'),
    // The eventIds joined by `,` (for the hashes of the form before buckets only), and their
    // digests (common/eventIdDigest.ts): in hex joined by `,` (the admission record's list as it is
    // stored, so a batch of new eventIds stores it as sent) and as bytes back to back (the
    // buckets). Three arguments rather than three per eventId, which cost the edge's Redis client
    // more than the rest of the call (bench/RESULTS.md, issue 32).
    arg.string('eventIdList'),
    arg.string('hexList'),
    arg.bytes('digestList'),
  ],
  AdmitReply,
);

export function admitCall(input: AdmitInput): ScriptCall {
  const { hexList, bytes } = input.digests ?? eventIdDigests(input.eventIds);
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
    usageTtlSeconds: input.usageTtlSeconds,
    admissionDeadlineMs: input.admissionDeadlineMs,
    recordHead,
    windowLimits: input.windows.map((window) => window.limit),
    windowCosts,
    eventIdList: input.eventIds.join(','),
    hexList,
    digestList: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength),
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
 * An eventId found in a de-duplication set was admitted by a batch that is committed (its rows
 * are durable) unless an admission record of the period lists it: that batch is in flight until
 * its admission deadline (the record's field 1 is its receipt time). Past it, its edge is taken to
 * have died or lost its answer, and the batch is settled (released) before the eventId can be
 * admitted again (reply unsettled), so an eventId is counted once whatever happened to the first
 * attempt. A released batch's digests are gone from the set. (The hashes of the form before
 * buckets keep, per eventId, `<receipt ms>:<batch id>`, and the committed hash says which batches
 * are committed, as before.)
 *
 * Lookups: the credential epoch and the four periods' metas in one MGET, then per period one
 * HMGET of the buckets holding the batch's digests (the older periods only for digests not found
 * yet); the period's records (HGETALL) only when a digest is found; then, while any hash of the
 * form before buckets exists (EXISTS over the four), those hashes by eventId, as before. Writes:
 * the buckets written and those split in one HSET (EXPIREAT NX when it creates the hash), then
 * the meta. A split (while the load is above DEDUP_BUCKET_LOAD) moves about half a bucket:
 * amortised O(1) per digest.
 *
 * The Lua's cost is mostly per byte and per value it makes: Redis's Lua hashes every byte of each
 * string it creates (a bucket read, a bucket rebuilt, each digest cut from the list), and turns a
 * number passed to redis.call into text with %.14g. So each digest is cut once and its hash
 * computed once for every period, bucket field names are formatted once (%d), a split copies runs
 * of digests rather than each digest, and a record of new eventIds takes the hex list as sent
 * (docs/decisions/ingest.md, De-duplication memory).
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
-- The credential epoch and the de-duplication sets' metas in one read (the metas are used only
-- past the checks).
local heads = redis.call('MGET', epochKey, unpack(metaKeys))
if (heads[1] or '') ~= cachedEpoch then return {REPLY_STALE_CREDENTIAL} end
local metas = {}
for p = 1, #metaKeys do metas[p] = heads[p + 1] end
local now = tonumber(nowMs)
local W = #windowKeys
local N = #digestList / DIGEST
local span = math.floor(windowMs / bucketMs)
local bucket = math.floor(now / bucketMs)
local oldest = bucket - span + 1
-- The current bucket's field name, formatted once for every window and the record.
local bucketField = string.format('%d', bucket)
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
-- Per eventId position: its digest, its hash (dedup_hash), the period it was found in (most
-- recent first), its value when found in a hash of the form before buckets, and its bucket in
-- the current period's set. The hex of a digest (for the records) is cut from hexList only where
-- needed (hex).
local digests, hashes, foundAt, legacy, current = {}, {}, {}, {}, {}
-- Per bucket of the current period's set that the batch falls in: its field name, and its place
-- in \`texts\`, the texts read (false: none yet).
local fieldOf, place, texts = {}, {}, {}
local function hex(k)
  local at = (k - 1) * (2 * DIGEST + 1)
  return sub(hexList, at + 1, at + 2 * DIGEST)
end
if N > 0 then
  -- The current period (read whether or not its set exists: a write needs the buckets): each
  -- digest, its hash and its bucket in one pass (dedup_group's work, without its tables).
  local names = {}
  local buckets = dedup_meta(metas[1])
  local low = dedup_low(buckets)
  local pointer = buckets - low
  for k = 1, N do
    local at = (k - 1) * DIGEST
    digests[k] = sub(digestList, at + 1, at + DIGEST)
    local b1, b2, b3, b4 = byte(digestList, at + 5, at + 8)
    local h = ((b1 * 256 + b2) * 256 + b3) * 256 + b4
    hashes[k] = h
    local index = h % low
    if index < pointer then index = h % (low * 2) end
    current[k] = index
    if not place[index] then
      names[#names + 1] = dedup_field(index)
      place[index] = #names
      fieldOf[index] = names[#names]
    end
  end
  if metas[1] then
    texts = redis.call('HMGET', dedup_buckets_key(metaKeys[1]), unpack(names))
    for k = 1, N do
      local text = texts[place[current[k]]]
      if text and dedup_find(text, digests[k]) then foundAt[k] = 1 end
    end
  end
  -- The older periods, for the digests not found yet.
  for p = 2, #metaKeys do
    if metas[p] then
      local positions = {}
      for k = 1, N do if not foundAt[k] then positions[#positions + 1] = k end end
      if #positions == 0 then break end
      local of, _, at, names = dedup_group(hashes, positions, (dedup_meta(metas[p])))
      local got = redis.call('HMGET', dedup_buckets_key(metaKeys[p]), unpack(names))
      for _, k in ipairs(positions) do
        local text = got[at[of[k]]]
        if text and dedup_find(text, digests[k]) then foundAt[k] = p end
      end
    end
  end
  local missing = false
  for k = 1, N do
    if not foundAt[k] then
      missing = true
      break
    end
  end
  -- The eventIds themselves only while hashes of the form before buckets exist.
  local split
  local function eventIds()
    if not split then
      split = {}
      for id in string.gmatch(eventIdList, '[^,]+') do split[#split + 1] = id end
    end
    return split
  end
  if missing and redis.call('EXISTS', unpack(legacyKeys)) > 0 then
    for p = 1, #legacyKeys do
      local got = redis.call('HMGET', legacyKeys[p], unpack(eventIds()))
      for k = 1, N do
        if not foundAt[k] and got[k] then
          foundAt[k] = p
          legacy[k] = got[k]
        end
      end
    end
  end
  local seen = {}
  local owners = {}
  for k = 1, N do
    local digest = digests[k]
    local p = foundAt[k]
    if seen[digest] then
      flags[k] = '1'
    elseif not p then
      flags[k] = '0'
      fresh = fresh + 1
    elseif not legacy[k] then
      owners[p] = owners[p] or recorded_digests(recordKeys[p], metaKeys[p])
      local owner = owners[p][hex(k)]
      if not owner then
        flags[k] = '1'
      elseif tonumber(owner[2]) + admissionDeadlineMs >= now then
        return {REPLY_IN_FLIGHT}
      else
        return {REPLY_UNSETTLED, owner[1], owner[2]}
      end
    else
      local received, owner = string.match(legacy[k], '^(%d+):(.+)$')
      if not owner or redis.call('HEXISTS', committedKeys[p], owner) == 1 then
        flags[k] = '1'
      elseif tonumber(received) + admissionDeadlineMs >= now then
        return {REPLY_IN_FLIGHT}
      elseif redis.call('HEXISTS', recordKeys[p], owner) == 1 then
        return {REPLY_UNSETTLED, owner, received}
      else
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
for i = 1, W do window_add(windowKeys[i], bucketField, windowCosts[i], expired[i], moved[i], oldest, windowMs, bucketMs) end
if fresh > 0 then
  local metaKey = metaKeys[1]
  local bucketsKey = dedup_buckets_key(metaKey)
  local buckets, count = dedup_meta(metas[1])
  -- The new text of every bucket written, by index.
  local written, order = {}, {}
  for k = 1, N do
    if flags[k] == '0' then
      local index = current[k]
      if not written[index] then order[#order + 1] = index end
      written[index] = (written[index] or texts[place[index]] or '') .. digests[k]
    end
  end
  count = count + fresh
  -- Linear hashing: split the bucket at the split pointer (buckets - 2^L) into itself and bucket
  -- \`buckets\` while the load is above DEDUP_BUCKET_LOAD; its digests with bit L of their hash move.
  while count > ${DEDUP_BUCKET_LOAD} * buckets do
    local low, L = dedup_low(buckets)
    local from = buckets - low
    local text = written[from]
    if not text then
      text = redis.call('HGET', bucketsKey, from) or ''
      order[#order + 1] = from
    end
    written[from], written[buckets] = dedup_split(text, L)
    order[#order + 1] = buckets
    buckets = buckets + 1
  end
  local fields = {}
  for _, index in ipairs(order) do
    fields[#fields + 1] = fieldOf[index] or dedup_field(index)
    fields[#fields + 1] = written[index]
  end
  redis.call('HSET', bucketsKey, unpack(fields))
  -- Every key of a period expires at the same time: set once (NX), by the write that creates it.
  redis.call('EXPIREAT', bucketsKey, expiresAt, 'NX')
  local meta = string.format('%d:%d', buckets, count)
  if metas[1] then
    redis.call('SET', metaKey, meta, 'KEEPTTL')
  else
    redis.call('SET', metaKey, meta, 'EXAT', expiresAt)
  end
  -- A usage counter's expiry is set when the counter is created (its first increment).
  if sandbox and redis.call('INCRBY', accountUsageKey, fresh) == fresh then redis.call('EXPIRE', accountUsageKey, usageTtlSeconds) end
  if redis.call('INCRBY', workspaceUsageKey, fresh) == fresh then redis.call('EXPIRE', workspaceUsageKey, usageTtlSeconds) end
  -- The record lists the new digests in hex (\`,\`): hexList as sent when every eventId is new.
  local admitted = hexList
  if fresh < N then
    local list = {}
    for k = 1, N do
      if flags[k] == '0' then list[#list + 1] = hex(k) end
    end
    admitted = table.concat(list, ',')
  end
  redis.call('HSET', recordKeys[1], batchId, recordHead .. bucketField .. '|' .. metaKey .. '|' .. admitted)
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
  // The record as the caller read it.
  [arg.string('batchId'), arg.string('record')],
  ReleaseReply,
);

/**
 * RELEASE: undoes the admission of a batch that was never made durable (its edge died, lost its
 * answer, or its log write failed): takes its digests out of the de-duplication set (from the
 * buckets they are in now, whatever splits happened since), but not those another record of the
 * period lists (another batch took the eventId over), lowers the set's entry count and the usage
 * counters by that many, takes its costs back out of the window bucket it was counted in (a
 * bucket that already left the window was subtracted when it was deleted), and deletes its
 * record. The caller read the record to name its keys; a record that changed since (settled
 * meanwhile) is left alone. Also undoes a record of the form before buckets (RECORD_FIELDS): its
 * eventIds still holding its value. Replies the eventIds released, or settledMeanwhile.
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
local r = record_fields(record)
local mine = 0
if string.sub(dedupKey, -2) == ':m' then
  local meta = redis.call('GET', dedupKey)
  local taken = recorded_digests(recordKey, dedupKey, batchId)
  local digests, hashes, positions = {}, {}, {}
  for _, digest in ipairs(split(r[${RECORD_FIELDS.digests}])) do
    if not taken[digest] then
      digests[#digests + 1] = from_hex(digest)
      hashes[#digests] = dedup_hash(digests[#digests])
      positions[#digests] = #digests
    end
  end
  if meta and #digests > 0 then
    local buckets, count = dedup_meta(meta)
    local of, order, place, names = dedup_group(hashes, positions, buckets)
    local bucketsKey = dedup_buckets_key(dedupKey)
    local texts = redis.call('HMGET', bucketsKey, unpack(names))
    for k = 1, #digests do
      local i = place[of[k]]
      local text = texts[i]
      local start = text and dedup_find(text, digests[k])
      if start then
        texts[i] = string.sub(text, 1, start - 1) .. string.sub(text, start + DIGEST)
        mine = mine + 1
      end
    end
    local fields = {}
    for i in ipairs(order) do
      if texts[i] then
        fields[#fields + 1] = names[i]
        fields[#fields + 1] = texts[i]
      end
    end
    if mine > 0 then
      redis.call('HSET', bucketsKey, unpack(fields))
      redis.call('SET', dedupKey, buckets .. ':' .. (count - mine), 'KEEPTTL')
    end
  end
else
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

/** RELEASE's KEYS from the record as read: the record hash, then the keys the record names (the same places in both forms). */
export function releaseCall(recordKey: string, batchId: string, record: string): ScriptCall {
  const fields = record.split('|');
  const field = (name: keyof typeof RECORD_FIELDS) => fields[RECORD_FIELDS[name] - 1] ?? '';
  return RELEASE_LAYOUT.build({
    recordKey,
    dedupKey: field('dedupKey'),
    accountUsageKey: field('accountUsageKey'),
    workspaceUsageKey: field('workspaceUsageKey'),
    windowKeys: field('windowKeys') === '' ? [] : field('windowKeys').split(','),
    batchId,
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
