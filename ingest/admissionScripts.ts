import { LuaScript } from './luaScript.js';

/** De-duplication hashes read per lookup: the current period and the three before it. */
export const DEDUP_PERIODS = 4;

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
 * The admission record of a batch with new eventIds, `ib:<batch id>`: everything it takes to
 * undo or to confirm the admission without the process that made it. Fields joined by `|`
 * (ids, keys and eventIds never hold `|` or `,`):
 *   1 connection id, 2 workspace id, 3 mode, 4 received at (ms), 5 sandbox 1|0,
 *   6 account Sandbox usage key, 7 workspace usage key, 8 window keys (`,`), 9 window costs (`,`),
 *   10 bucket, 11 de-duplication hash, 12 de-duplication value, 13 new eventIds (`,`).
 * The batch is also a member of the pending set (KEYS of the scripts below), scored by its
 * deadline, until COMMIT or RESOLVE settles it.
 */
const RECORD_FUNCTIONS = `
local function split(text, sep)
  local out, from = {}, 1
  while true do
    local at = string.find(text, sep, from, true)
    if not at then
      out[#out + 1] = string.sub(text, from)
      return out
    end
    out[#out + 1] = string.sub(text, from, at - 1)
    from = at + 1
  end
end

local function load_record(batch)
  local raw = redis.call('GET', 'ib:' .. batch)
  if not raw then return nil end
  return split(raw, '|')
end

local function forget(pending, batch)
  redis.call('DEL', 'ib:' .. batch)
  redis.call('ZREM', pending, batch)
end

-- Undoes the admission of the record's eventIds that are not in keep: deletes their
-- de-duplication fields still holding the batch's value and lowers the usage counters by that
-- many. When nothing is kept, also takes the batch's costs back out of the bucket it was counted
-- in (a bucket that already left the window was subtracted from the sum when it was deleted).
local function release(r, keep, kept)
  local ids = split(r[13], ',')
  local values = redis.call('HMGET', r[11], unpack(ids))
  local mine = {}
  for k = 1, #ids do
    if not keep[ids[k]] and values[k] == r[12] then mine[#mine + 1] = ids[k] end
  end
  if #mine > 0 then
    redis.call('HDEL', r[11], unpack(mine))
    if r[5] == '1' then redis.call('DECRBY', r[6], #mine) end
    redis.call('DECRBY', r[7], #mine)
  end
  if not kept then
    local keys, costs = split(r[8], ','), split(r[9], ',')
    for i = 1, #keys do
      local cost = tonumber(costs[i])
      if cost > 0 and redis.call('HEXISTS', keys[i], r[10]) == 1 then
        local left = redis.call('HINCRBY', keys[i], r[10], -cost)
        redis.call('HINCRBY', keys[i], 's', -cost)
        if left <= 0 then redis.call('HDEL', keys[i], r[10]) end
      end
    end
  end
  return #mine
end
`;

/**
 * ADMIT: the one Redis call of a batch (03 Ingestion, Limits). All checks run before any write,
 * and Redis runs a script atomically, so a refused batch changes nothing.
 *
 *   KEYS[1]              cred_epoch:<connection>      compared with ARGV[1] (the cached epoch)
 *   KEYS[2]              Sandbox allowance override    (read only for an enforced Sandbox quota)
 *   KEYS[3]              account Sandbox monthly usage
 *   KEYS[4]              workspace monthly usage of the connection's mode
 *   KEYS[5 .. 4+W]       sliding windows (see WINDOW_FUNCTIONS)
 *   KEYS[5+W]            the pending set (see RECORD_FUNCTIONS)
 *   ARGV: 1 cached epoch, 2 now ms, 3 window ms, 4 bucket ms, 5 sandbox 1|0, 6 quota enforced 1|0,
 *         7 allowance fallback, 8 de-duplication window s, 9 dedup value `<deadline ms>:<batch id>`,
 *         10 usage TTL s, 11 W, 12 de-duplication key prefix (`dd:<connection>:`), 13 N, 14 the
 *         record's fields 1-9 followed by `|`, then per window: limit, cost, then the N eventIds
 *         of the valid items, in item order (one argument each: splitting one joined argument in
 *         Lua cost Redis more than the arguments).
 *
 * De-duplication: eventIds are fields of hashes, one hash per connection and period of a third
 * of the window (`dd:<connection>:<period>`); a lookup reads the current and the three previous
 * periods (most recent first), a write is one HSET into the current period, whose hash lives
 * until a whole window after the period ends. So an eventId is remembered for at least the
 * window and at most 4/3 of it, with one call per period instead of one per eventId: per-key
 * SETs cost Redis about 4 µs per envelope, and the keys' own overhead doubled the memory.
 * The hashes are named here from the prefix rather than passed as KEYS, so the ingest keys
 * must live on one Redis (no Cluster; docs/decisions.md).
 *
 * A de-duplication value names the batch that admitted the eventId; `dc:<batch id>` exists once
 * that batch's rows are committed. An eventId of an uncommitted batch is "in flight" until the
 * deadline in its value. Past it, the batch's process is taken to have died or lost its answer:
 * whether its rows were written is then for RESOLVE to settle from ClickHouse (reply 6), never
 * assumed, so an eventId is counted once whatever happened to the first attempt.
 *
 * Replies: {1, flags, bucket, period} admitted (flags: one char per item, 0 new, 1 duplicate;
 * period: the de-duplication period its new eventIds were written to);
 * {2, epoch} credential epoch moved; {3, window index, retry ms} over a window;
 * {4, used, limit} Sandbox monthly allowance would be crossed; {5} an eventId is in flight;
 * {6, batch id, deadline} an eventId belongs to an unsettled batch past its deadline.
 */
export const ADMIT = new LuaScript(WINDOW_FUNCTIONS + `
local epoch = redis.call('GET', KEYS[1]) or ''
if epoch ~= ARGV[1] then return {2, epoch} end
local now = tonumber(ARGV[2])
local windowMs = tonumber(ARGV[3])
local bucketMs = tonumber(ARGV[4])
local W = tonumber(ARGV[11])
local N = tonumber(ARGV[13])
local first = 15 + 2 * W
local ids = {unpack(ARGV, first, first + N - 1)}
local dedupTtl = tonumber(ARGV[8])
local period = math.ceil(dedupTtl / ${DEDUP_PERIODS - 1})
local nowSeconds = math.floor(now / 1000)
local current = math.floor(nowSeconds / period)
local span = math.floor(windowMs / bucketMs)
local bucket = math.floor(now / bucketMs)
local oldest = bucket - span + 1
local expired = {}
local moved = {}
local failed = 0
local retry = 0
for i = 1, W do
  local limit = tonumber(ARGV[13 + 2 * i])
  local cost = tonumber(ARGV[14 + 2 * i])
  local sum, gone, stored = window_read(KEYS[4 + i], oldest, span)
  expired[i] = gone
  moved[i] = stored ~= oldest
  if cost > 0 and sum + cost > limit then
    local wait = windowMs
    if cost <= limit then wait = window_wait(KEYS[4 + i], oldest, span, bucketMs, now, sum + cost - limit) end
    if failed == 0 then failed = i end
    if wait > retry then retry = wait end
  end
end
if failed > 0 then return {3, failed, retry} end
local flags = {}
local fresh = 0
if N > 0 then
  local values = {}
  for back = 0, ${DEDUP_PERIODS - 1} do
    local found = redis.call('HMGET', ARGV[12] .. (current - back), unpack(ARGV, first, first + N - 1))
    for k = 1, N do
      if not values[k] and found[k] then values[k] = found[k] end
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
      local deadline, owner = string.match(value, '^(%d+):(.+)$')
      if not owner or redis.call('EXISTS', 'dc:' .. owner) == 1 then
        flags[k] = '1'
      elseif tonumber(deadline) >= now then
        return {5}
      elseif redis.call('EXISTS', 'ib:' .. owner) == 1 then
        return {6, owner, deadline}
      else
        -- Settled as not written (or admitted before admission records existed).
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
  if used + fresh > limit then return {4, used, limit} end
end
for i = 1, W do
  local key = KEYS[4 + i]
  local cost = tonumber(ARGV[14 + 2 * i])
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
  local fields = {}
  local admitted = {}
  for k = 1, N do
    if flags[k] == '0' then
      fields[#fields + 1] = ids[k]
      fields[#fields + 1] = ARGV[9]
      admitted[#admitted + 1] = ids[k]
    end
  end
  local key = ARGV[12] .. current
  redis.call('HSET', key, unpack(fields))
  -- The same deadline for every write into the period's hash: set once (NX) when it is created.
  redis.call('EXPIRE', key, (current + 1) * period + dedupTtl - nowSeconds, 'NX')
  -- A usage counter's expiry is set when the counter is created (its first increment).
  if ARGV[5] == '1' and redis.call('INCRBY', KEYS[3], fresh) == fresh then redis.call('EXPIRE', KEYS[3], ARGV[10]) end
  if redis.call('INCRBY', KEYS[4], fresh) == fresh then redis.call('EXPIRE', KEYS[4], ARGV[10]) end
  local deadline, batch = string.match(ARGV[9], '^(%d+):(.+)$')
  redis.call('SET', 'ib:' .. batch, ARGV[14] .. bucket .. '|' .. key .. '|' .. ARGV[9] .. '|' .. table.concat(admitted, ','), 'EX', ARGV[8])
  redis.call('ZADD', KEYS[5 + W], deadline, batch)
end
return {1, table.concat(flags), bucket, current}
`);

/**
 * COMMIT: after batches' rows are in ClickHouse, marks each batch's eventIds committed
 * (`dc:<batch id>`) and enqueues its analysis job, then settles its admission record: one call
 * for all the batches whose commits were asked for together (those of one insert, see
 * Admission.commit). A batch whose job could not be added keeps its record, so that a retried
 * COMMIT, or RESOLVE once the process is gone, still adds it; a batch already settled (no record,
 * marker set) is left alone. Replies one character per batch: 1, or 0 when its XADD failed.
 *
 *   KEYS[1] the analysis stream, KEYS[2] the pending set
 *   ARGV: 1 marker TTL s (the de-duplication window), 2 stream MAXLEN (approximate), 3 F (values
 *         per job), then per batch its job's F values: field, value pairs, the batch id 4th.
 */
export const COMMIT = new LuaScript(`
local F = tonumber(ARGV[3])
local added = {}
for from = 4, #ARGV, F do
  local batch = ARGV[from + 7]
  local reply = true
  if redis.call('EXISTS', 'ib:' .. batch) == 1 or redis.call('EXISTS', 'dc:' .. batch) == 0 then
    redis.call('SET', 'dc:' .. batch, '1', 'EX', ARGV[1])
    reply = redis.pcall('XADD', KEYS[1], 'MAXLEN', '~', ARGV[2], '*', unpack(ARGV, from, from + F - 1))
    if not (type(reply) == 'table' and reply.err) then
      redis.call('DEL', 'ib:' .. batch)
      redis.call('ZREM', KEYS[2], batch)
    end
  end
  if type(reply) == 'table' and reply.err then added[#added + 1] = '0' else added[#added + 1] = '1' end
end
return table.concat(added)
`);

/**
 * DURABLE (write-ahead log, issue 17): batches whose rows are durable in an edge's log are
 * committed: the eventIds count as stored (`dc:<batch id>`), the admission record is settled,
 * and the batch moves from the pending set to the unshipped set (scored by its receipt time)
 * until its rows are in ClickHouse and its analysis job added (the log's shipper removes it).
 * Asked by the request (to answer it) and again by the shipper before it ships a batch (after a
 * crash the shipper is the first to ask): one character per batch, 1 when the batch is
 * committed (now or before), 0 when it was released meanwhile (its rows must not be shipped).
 *
 *   KEYS[1] the pending set, KEYS[2] the unshipped set
 *   ARGV: 1 marker TTL s, then per batch its id and its receipt time (ms)
 */
export const DURABLE = new LuaScript(`
local out = {}
for i = 2, #ARGV, 2 do
  local batch = ARGV[i]
  if redis.call('EXISTS', 'ib:' .. batch) == 1 then
    redis.call('SET', 'dc:' .. batch, '1', 'EX', ARGV[1])
    redis.call('DEL', 'ib:' .. batch)
    redis.call('ZREM', KEYS[1], batch)
    redis.call('ZADD', KEYS[2], ARGV[i + 1], batch)
    out[#out + 1] = '1'
  elseif redis.call('EXISTS', 'dc:' .. batch) == 1 then
    out[#out + 1] = '1'
  else
    out[#out + 1] = '0'
  end
end
return table.concat(out)
`);

/**
 * RESOLVE: settles a batch whose outcome its process never reported (it died, lost Redis's
 * answer, or its insert timed out), from what ClickHouse holds of it. The eventIds found there
 * stay counted and are marked committed, with an analysis job for them; the others are
 * released. When none was found the batch is released whole: its window costs too, so that is
 * also how a batch whose rows were certainly not written is undone (Admission.release). A batch marked
 * committed whose job was never added (its COMMIT's XADD failed and its process died) gets
 * the job. A batch already settled is left alone.
 *
 *   KEYS[1] the pending set, KEYS[2] the analysis stream
 *   ARGV: 1 batch id, 2 marker TTL s, 3 stream MAXLEN, 4.. the batch's eventIds found in ClickHouse
 *   Replies {kept, released}.
 */
export const RESOLVE = new LuaScript(RECORD_FUNCTIONS + `
local batch = ARGV[1]
local r = load_record(batch)
if not r then
  redis.call('ZREM', KEYS[1], batch)
  return {0, 0}
end
local stored = {unpack(ARGV, 4)}
local released = 0
if redis.call('EXISTS', 'dc:' .. batch) == 1 then
  stored = split(r[13], ',')
else
  local keep = {}
  for _, id in ipairs(stored) do keep[id] = true end
  released = release(r, keep, #stored > 0)
  if #stored > 0 then redis.call('SET', 'dc:' .. batch, '1', 'EX', ARGV[2]) end
end
if #stored > 0 then
  redis.pcall('XADD', KEYS[2], 'MAXLEN', '~', ARGV[3], '*', 'connectionId', r[1], 'workspaceId', r[2], 'mode', r[3],
    'batchId', batch, 'receivedAtMs', r[4], 'eventIds', table.concat(stored, ','))
end
forget(KEYS[1], batch)
return {#stored, released}
`);
