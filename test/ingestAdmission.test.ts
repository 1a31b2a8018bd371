import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadConfig, type Config } from '../shared/config.js';
import { connectRedis, masterNodes, RedisKeys, type Redis } from '../shared/redis.js';
import { usagePeriodOf } from '../shared/usagePeriod.js';
import { Admission, type AdmissionResult, type AdmissionTicket } from '../ingest/admission/admission.js';
import { LuaScript } from '../ingest/admission/luaScript.js';
import { SCRIPTS } from '../ingest/admission/scripts.js';
import type { IngestCredential } from '../ingest/common/credential.js';
import { IngestKeys, dedupBucket } from '../ingest/admission/keys.js';
import { EVENT_ID_DIGEST_BYTES, eventIdDigest } from '../ingest/common/eventIdDigest.js';
import { dedupEntry, dedupPeriod, dedupSet } from './helpers/ingest.js';

// The admission scripts against the real test Redis, with a credential record of fresh ids: the
// in-flight / durable / overdue states of an eventId, DURABLE and RELEASE, the pending and
// unanalysed sets the analyzer reads, the epoch check, the hash tag of every key and the script
// cache fallback.

let redis: Redis;
let config: Config;

beforeAll(async () => {
  config = loadConfig();
  redis = await connectRedis(config.redisUrl);
});
afterAll(() => {
  redis.disconnect();
});
afterEach(() => {
  vi.restoreAllMocks();
});

const unique = () => randomBytes(8).toString('hex');
const now = () => Date.now();

function credential(mode: 'sandbox' | 'live' = 'sandbox'): IngestCredential {
  const id = unique();
  return {
    connectionId: `int_${id}`,
    connectionKey: `svc_conn_v1.${id}`,
    workspaceId: `ws_${id}`,
    accountId: `acct_${id}`,
    tenantId: `ten_${id}`,
    environmentId: `env_${id}`,
    mode,
    integrationId: `wint_${id}`,
    integrationKey: `svc_int_${id}`,
    direction: 'outbound',
    protocol: 'http-api',
    usable: true,
    tokenHash: null,
    hmacKey: null,
    sandboxAllowance: null,
    epoch: '',
    loadedAt: Date.now(),
  };
}

const withIngest = (ingest: Partial<Config['ingest']>): Config => ({ ...config, ingest: { ...config.ingest, ...ingest } });
const withLimits = (limits: Partial<Config['limits']>): Config => ({ ...config, limits: { ...config.limits, ...limits } });

function admit(
  admission: Admission,
  cred: IngestCredential,
  eventIds: string[],
  nowMs = now(),
  itemCount = eventIds.length,
): Promise<AdmissionResult> {
  return admission.admit(cred, { nowMs, itemCount, eventIds, batchId: admission.newBatchId() });
}

async function admitted(
  admission: Admission,
  cred: IngestCredential,
  eventIds: string[],
  nowMs = now(),
): Promise<AdmissionTicket & { duplicate: boolean[] }> {
  const result = await admit(admission, cred, eventIds, nowMs);
  if (result.kind !== 'admitted') throw new Error(`not admitted: ${result.kind}`);
  return { ...result.ticket, duplicate: result.duplicate };
}

const member = (ticket: Pick<AdmissionTicket, 'accountId' | 'batchId'>) => `${ticket.accountId}/${ticket.batchId}`;
const pendingScore = (ticket: Pick<AdmissionTicket, 'accountId' | 'batchId'>) => redis.zscore(RedisKeys.pendingAdmissions, member(ticket));
const unanalysedScore = (batchId: string) => redis.zscore(RedisKeys.unanalysedBatches, batchId);
const entry = (cred: IngestCredential, eventId: string, windowSeconds = config.ingest.dedupWindowSeconds, nowMs = now()) =>
  dedupEntry(redis, cred, eventId, windowSeconds, nowMs);
/** The period keys ADMIT writes at `nowMs`, named here from the key layout rather than from Admission. */
function periodKeys(cred: IngestCredential, windowSeconds = config.ingest.dedupWindowSeconds, nowMs = now()) {
  const period = dedupPeriod(nowMs, windowSeconds);
  return {
    /** The meta key of the connection's de-duplication set (its buckets: dedupSet). */
    dedup: IngestKeys.eventIdMeta(cred.accountId, cred.connectionId, period),
    committed: IngestKeys.committedBatches(cred.accountId, period),
    records: IngestKeys.admissionRecords(cred.accountId, period),
    /** A whole window after the period (a third of the window) ends. */
    expiresAt: (period + 1) * Math.ceil(windowSeconds / 3) + windowSeconds,
  };
}
const usageKeys = (cred: IngestCredential, nowMs = now()) => {
  const { period } = usagePeriodOf(new Date(nowMs));
  return {
    account: RedisKeys.sandboxMonthlyUsage(cred.accountId, period),
    workspace: RedisKeys.workspaceMonthlyUsage(cred.accountId, cred.workspaceId, period, cred.mode),
  };
};
const windowKeys = (cred: IngestCredential) => [
  ...(cred.mode === 'sandbox'
    ? [IngestKeys.sandboxAccountRequests(cred.accountId), IngestKeys.sandboxAccountEnvelopes(cred.accountId)]
    : []),
  IngestKeys.integrationRequests(cred.accountId, cred.connectionId),
  IngestKeys.integrationObservations(cred.accountId, cred.connectionId),
  IngestKeys.workspaceObservations(cred.accountId, cred.workspaceId),
];

/**
 * Records the KEYS of each call of `script` and runs `before` ahead of it; the real script still
 * runs on the real Redis (the spy only watches).
 */
function watch(script: LuaScript, before: (keys: readonly string[]) => Promise<void> = async () => undefined): string[][] {
  const run = script.run.bind(script);
  const calls: string[][] = [];
  vi.spyOn(script, 'run').mockImplementation(async (client, keys, args) => {
    calls.push([...keys]);
    await before(keys);
    return run(client, keys, args);
  });
  return calls;
}

describe('eventId states', () => {
  it('admits new eventIds, reports them in flight until their batch is durable, then as duplicates', async () => {
    const admission = new Admission(redis, config);
    const cred = credential();
    const first = await admitted(admission, cred, ['evt_a', 'evt_b']);
    expect(first).toMatchObject({ duplicate: [false, false], newEventIds: ['evt_a', 'evt_b'], accountId: cred.accountId });
    expect(await admit(admission, cred, ['evt_b'])).toEqual({ kind: 'in_flight' });
    expect(await admission.durable(first)).toBe(true);
    const again = await admitted(admission, cred, ['evt_b', 'evt_c', 'evt_a', 'evt_c']);
    expect(again).toMatchObject({ duplicate: [true, false, true, true], newEventIds: ['evt_c'] });
    expect(await redis.get(usageKeys(cred).account)).toBe('3');
    expect(await redis.get(usageKeys(cred).workspace)).toBe('3');
  });

  it('is in flight until the deadline, then unsettled until release(), then admitted again and counted once', async () => {
    const admission = new Admission(redis, config);
    const cred = credential();
    const start = now();
    const deadline = start + config.ingest.admissionDeadlineMs;
    const ticket = await admitted(admission, cred, ['evt_u1', 'evt_u2'], start);
    expect(await admit(admission, cred, ['evt_u2'], deadline)).toEqual({ kind: 'in_flight' });
    expect(await admit(admission, cred, ['evt_new', 'evt_u2'], deadline + 1)).toEqual({
      kind: 'unsettled',
      accountId: cred.accountId,
      batchId: ticket.batchId,
      receivedAtMs: start,
    });
    // Neither refusal counted anything.
    expect(await redis.get(usageKeys(cred).account)).toBe('2');
    expect(await entry(cred, 'evt_new')).toBeNull();
    expect(await admission.release(cred.accountId, ticket.batchId, start)).toBe(2);
    expect(await redis.get(usageKeys(cred).account)).toBe('0');
    expect(await pendingScore(ticket)).toBeNull();
    const retry = await admitted(admission, cred, ['evt_u1', 'evt_u2'], deadline + 1);
    expect(retry.duplicate).toEqual([false, false]);
    expect(await redis.get(usageKeys(cred).account)).toBe('2');
    // A released batch is never committed, and is released once.
    expect(await admission.settleDurable([ticket])).toEqual([false]);
    expect(await unanalysedScore(ticket.batchId)).toBeNull();
    expect(await admission.release(cred.accountId, ticket.batchId, start)).toBe(0);
    expect(await redis.get(usageKeys(cred).account)).toBe('2');
  });

  it('finds eventIds in older periods: a value without record past its deadline is free, a committed owner makes a duplicate', async () => {
    const admission = new Admission(redis, config);
    const cred = credential('live');
    const current = dedupPeriod(now(), config.ingest.dedupWindowSeconds);
    const older = (back: number) => IngestKeys.eventIds(cred.accountId, cred.connectionId, current - back);
    await redis.hset(older(2), 'evt_lost', `${now() - config.ingest.admissionDeadlineMs - 1}:deadbatch`);
    await redis.hset(older(3), 'evt_pending', `${now()}:otherbatch`);
    expect((await admitted(admission, cred, ['evt_lost'])).duplicate).toEqual([false]);
    expect(await admit(admission, cred, ['evt_pending'])).toEqual({ kind: 'in_flight' });
    // The owner's commit is looked up in the period the eventId was found in.
    await redis.hset(IngestKeys.committedBatches(cred.accountId, current - 3), 'otherbatch', '1');
    expect((await admitted(admission, cred, ['evt_pending'])).duplicate).toEqual([true]);
    await redis.del(older(2), older(3), IngestKeys.committedBatches(cred.accountId, current - 3));
  });
});

describe('de-duplication window', () => {
  it('keeps eventIds for at least the window and at most 4/3 of it', async () => {
    const admission = new Admission(redis, withIngest({ dedupWindowSeconds: 3600 }));
    const cred = credential('live');
    const ticket = await admitted(admission, cred, ['evt_ttl']);
    // The script and the key layout agree on the period (1,200 s for a one-hour window).
    const { dedup } = periodKeys(cred, 3600);
    expect((await entry(cred, 'evt_ttl', 3600))?.value).toBe(eventIdDigest('evt_ttl').toString('hex'));
    // Not committed yet: its record lists it.
    expect((await redis.hget(periodKeys(cred, 3600).records, ticket.batchId))?.split('|')[8]).toBe(
      eventIdDigest('evt_ttl').toString('hex'),
    );
    const { keys } = await dedupSet(redis, dedup);
    expect(keys).toHaveLength(2);
    for (const key of keys) {
      const ttl = await redis.ttl(key);
      expect(ttl).toBeGreaterThanOrEqual(3600);
      expect(ttl).toBeLessThanOrEqual(4800);
    }
  });

  it('still knows an eventId a window later, in another period, and forgets it four periods on', async () => {
    const admission = new Admission(redis, withIngest({ dedupWindowSeconds: 60 }));
    const cred = credential('live');
    // The last second of a 20-second period.
    const start = Math.floor(now() / 20_000) * 20_000 + 19_000;
    const first = await admitted(admission, cred, ['evt_late'], start);
    expect(await admission.settleDurable([first])).toEqual([true]);
    expect((await admitted(admission, cred, ['evt_late'], start + 60_999)).duplicate).toEqual([true]);
    expect(periodKeys(cred, 60, start + 60_999).dedup).not.toBe(periodKeys(cred, 60, start).dedup);
    expect((await admitted(admission, cred, ['evt_late'], start + 61_000)).duplicate).toEqual([false]);
  });
});

describe('sliding windows', () => {
  it('forgets buckets as they leave the 60-second window and keeps the running sum equal to the buckets', async () => {
    const admission = new Admission(redis, withLimits({ integrationRequestsPerMin: 3 }));
    const cred = credential('live');
    const key = IngestKeys.integrationRequests(cred.accountId, cred.connectionId);
    const start = Math.floor(now() / 1000) * 1000;
    for (const offset of [0, 10_000, 20_000]) expect(await admit(admission, cred, [], start + offset)).toMatchObject({ kind: 'admitted' });
    expect(await admit(admission, cred, [], start + 30_000)).toEqual({
      kind: 'rate_limited',
      code: 'workload_rate_limited',
      retryAfterSeconds: 30,
    });
    // 59.999 s after the first request it still counts; at 60 s its bucket has left the window.
    expect(await admit(admission, cred, [], start + 59_999)).toMatchObject({ kind: 'rate_limited', retryAfterSeconds: 1 });
    expect(await admit(admission, cred, [], start + 60_000)).toMatchObject({ kind: 'admitted' });
    const { s: runningSum, o: oldest, ...buckets } = await redis.hgetall(key);
    expect(Object.keys(buckets).sort()).toEqual([10, 20, 60].map((seconds) => String(start / 1000 + seconds)));
    expect(runningSum).toBe('3');
    expect(oldest).toBe(String(start / 1000 + 1));
    // Idle past the window (or a clock moved by a month): everything is forgotten at once.
    for (const later of [start + 200_000, start + 31 * 24 * 3600_000]) {
      const began = Date.now();
      expect(await admit(admission, cred, [], later)).toMatchObject({ kind: 'admitted' });
      expect(Date.now() - began).toBeLessThan(100);
      const { s: sum, o: _o, ...left } = await redis.hgetall(key);
      expect(sum).toBe('1');
      expect(Object.keys(left)).toEqual([String(Math.floor(later / 1000))]);
    }
  });
});

describe('expiries', () => {
  it("sets each key's expiry when it is created (period keys EXPIREAT NX), so later writes leave it", async () => {
    const admission = new Admission(redis, withIngest({ dedupWindowSeconds: 3600 }));
    const cred = credential('sandbox');
    // One bucket, so that the windows' first write is the first admission's.
    const at = Math.floor(now() / 1000) * 1000;
    const keys = periodKeys(cred, 3600, at);
    const usage = Object.values(usageKeys(cred, at));
    const first = await admitted(admission, cred, ['evt_first'], at);
    // The set's meta and its one bucket.
    const dedupKeys = (await dedupSet(redis, keys.dedup)).keys;
    expect(dedupKeys).toHaveLength(2);
    for (const key of dedupKeys) expect(await redis.expiretime(key)).toBe(keys.expiresAt);
    expect(await redis.expiretime(keys.records)).toBe(keys.expiresAt);
    for (const key of usage) expect(await redis.ttl(key)).toBeGreaterThan(390 * 24 * 3600);
    for (const key of windowKeys(cred)) {
      // A window and a bucket from the start of the bucket its first write went to.
      const ttl = await redis.pttl(key);
      expect(ttl).toBeGreaterThan(55_000);
      expect(ttl).toBeLessThanOrEqual(61_000);
    }
    expect(await admission.settleDurable([first])).toEqual([true]);
    expect(await redis.expiretime(keys.committed)).toBe(keys.expiresAt);
    // Move every expiry: a key whose expiry later writes set again would lose the move.
    const moved = keys.expiresAt + 1000;
    const existing = [...dedupKeys, keys.committed, ...usage, ...windowKeys(cred)];
    for (const key of existing) await redis.expireat(key, moved);
    // The record hash went with its last record (settled): created again, with its expiry.
    const second = await admitted(admission, cred, ['evt_second'], at);
    expect(await redis.expiretime(keys.records)).toBe(keys.expiresAt);
    await redis.expireat(keys.records, moved);
    await admitted(admission, cred, ['evt_third'], at);
    expect(await admission.settleDurable([second])).toEqual([true]);
    const set = await dedupSet(redis, keys.dedup);
    expect(set.count).toBe(3);
    expect(set.digests.flat()).toHaveLength(3);
    expect(set.keys).toEqual(dedupKeys);
    for (const key of usage) expect(await redis.get(key)).toBe('3');
    for (const key of [...existing, keys.records]) expect([key, await redis.expiretime(key)]).toEqual([key, moved]);
  });
});

describe('release', () => {
  it('undoes exactly what the admission counted (usage, windows, de-duplication) and frees its eventIds', async () => {
    const admission = new Admission(redis, config);
    const cred = credential();
    const sums = async () =>
      Promise.all(
        windowKeys(cred).map(async (key) => {
          const { s: runningSum, o: _oldest, ...buckets } = await redis.hgetall(key);
          const sum = Object.values(buckets).reduce((total, value) => total + Number(value), 0);
          expect(Number(runningSum ?? 0)).toBe(sum);
          return sum;
        }),
      );
    const before = await sums();
    const kept = await admitted(admission, cred, ['evt_kept']);
    expect(await admission.settleDurable([kept])).toEqual([true]);
    const between = await sums();
    const ticket = await admitted(admission, cred, ['evt_kept', 'evt_x', 'evt_y']);
    expect(ticket.newEventIds).toEqual(['evt_x', 'evt_y']);
    expect(await redis.get(usageKeys(cred).account)).toBe('3');
    expect(await admission.release(ticket.accountId, ticket.batchId, ticket.receivedAtMs)).toBe(2);
    expect(await sums()).toEqual(between);
    expect(between).not.toEqual(before);
    expect(await redis.get(usageKeys(cred).account)).toBe('1');
    expect(await redis.get(usageKeys(cred).workspace)).toBe('1');
    expect(await entry(cred, 'evt_x')).toBeNull();
    expect(await entry(cred, 'evt_y')).toBeNull();
    expect(await entry(cred, 'evt_kept')).not.toBeNull();
    expect(await redis.hexists(periodKeys(cred).records, ticket.batchId)).toBe(0);
    expect(await pendingScore(ticket)).toBeNull();
  });

  it('leaves an eventId that another batch took over after the deadline', async () => {
    const admission = new Admission(redis, config);
    const cred = credential('live');
    const ticket = await admitted(admission, cred, ['evt_taken']);
    const { records } = periodKeys(cred);
    // Another batch's record lists the same member.
    const record = (await redis.hget(records, ticket.batchId)) ?? '';
    await redis.hset(records, 'someoneelse', record.replace(/^\d+/, String(now() + 60_000)));
    expect(await admission.release(ticket.accountId, ticket.batchId, ticket.receivedAtMs)).toBe(0);
    expect(await entry(cred, 'evt_taken')).not.toBeNull();
    expect(await redis.get(usageKeys(cred).workspace)).toBe('1');
    expect(await redis.hexists(periodKeys(cred).records, ticket.batchId)).toBe(0);
    await redis.hdel(records, 'someoneelse');
  });

  it("lists in its record exactly the batch's new eventIds: all of them, or those left once duplicates are taken out", async () => {
    const admission = new Admission(redis, config);
    const cred = credential('live');
    const hex = (eventId: string) => eventIdDigest(eventId).toString('hex');
    const listed = async (batchId: string) => (await redis.hget(periodKeys(cred).records, batchId))?.split('|')[8];
    const all = await admitted(admission, cred, ['evt_r1', 'evt_r2', 'evt_r3']);
    expect(await listed(all.batchId)).toBe(['evt_r1', 'evt_r2', 'evt_r3'].map(hex).join(','));
    expect(await admission.settleDurable([all])).toEqual([true]);
    // A committed duplicate first, a new one, the same new one again in the batch, another new one.
    const some = await admitted(admission, cred, ['evt_r2', 'evt_r4', 'evt_r4', 'evt_r5']);
    expect(some.duplicate).toEqual([true, false, true, false]);
    expect(await listed(some.batchId)).toBe(['evt_r4', 'evt_r5'].map(hex).join(','));
    expect(await admission.release(some.accountId, some.batchId, some.receivedAtMs)).toBe(2);
    expect(await entry(cred, 'evt_r4')).toBeNull();
    expect(await entry(cred, 'evt_r2')).not.toBeNull();
  });
});

describe('the pending and unanalysed sets', () => {
  it('settleDurable commits the batches of several accounts, one DURABLE call each, and moves them to the unanalysed set', async () => {
    const admission = new Admission(redis, config);
    const [one, two] = [credential('live'), credential('sandbox')];
    const start = now();
    const tickets = [
      await admitted(admission, one, ['evt_d1'], start),
      await admitted(admission, one, ['evt_d2'], start),
      await admitted(admission, two, ['evt_d3'], start + 1),
    ];
    const released = await admitted(admission, two, ['evt_d4'], start);
    await admission.release(released.accountId, released.batchId, released.receivedAtMs);
    for (const ticket of tickets) expect(await pendingScore(ticket)).toBe(String(ticket.receivedAtMs));
    const calls = watch(SCRIPTS.DURABLE);
    expect(await admission.settleDurable([...tickets, released])).toEqual([true, true, true, false]);
    expect(calls).toHaveLength(2);
    for (const ticket of tickets) {
      const cred = ticket.accountId === one.accountId ? one : two;
      const keys = periodKeys(cred, config.ingest.dedupWindowSeconds, ticket.receivedAtMs);
      expect(await redis.hexists(keys.committed, ticket.batchId)).toBe(1);
      expect(await redis.hexists(keys.records, ticket.batchId)).toBe(0);
      expect(await pendingScore(ticket)).toBeNull();
      expect(await unanalysedScore(ticket.batchId)).toBe(String(ticket.receivedAtMs));
    }
    expect(await unanalysedScore(released.batchId)).toBeNull();
    expect(await redis.hexists(periodKeys(two, config.ingest.dedupWindowSeconds, start).committed, released.batchId)).toBe(0);
    // Asked again (the shipper after the request): still committed, nothing counted twice.
    expect(await admission.settleDurable(tickets)).toEqual([true, true, true]);
    expect(await admit(admission, one, ['evt_d1', 'evt_d2'])).toMatchObject({ kind: 'admitted', duplicate: [true, true] });
    expect(await redis.get(usageKeys(one).workspace)).toBe('2');
    await redis.zrem(RedisKeys.unanalysedBatches, ...tickets.map((ticket) => ticket.batchId));
  });

  it('durable() sends the batches of one turn of the event loop in one DURABLE call', async () => {
    const admission = new Admission(redis, config);
    const cred = credential('live');
    const tickets = [await admitted(admission, cred, ['evt_t1']), await admitted(admission, cred, ['evt_t2'])];
    const calls = watch(SCRIPTS.DURABLE);
    expect(await Promise.all(tickets.map((ticket) => admission.durable(ticket)))).toEqual([true, true]);
    expect(calls).toHaveLength(1);
    await redis.zrem(RedisKeys.unanalysedBatches, ...tickets.map((ticket) => ticket.batchId));
  });

  // What admit leaves in the pending set: the batch only when it admitted new eventIds.
  const outcomes: {
    name: string;
    kind: AdmissionResult['kind'];
    staysPending: boolean;
    prepare(cred: IngestCredential): Promise<{ cred: IngestCredential; config?: Config }>;
  }[] = [
    { name: 'new eventIds', kind: 'admitted', staysPending: true, prepare: async (cred) => ({ cred }) },
    {
      name: 'all duplicates',
      kind: 'admitted',
      staysPending: false,
      prepare: async (cred) => {
        const admission = new Admission(redis, config);
        await admission.settleDurable([await admitted(admission, cred, ['evt_p1', 'evt_p2'])]);
        return { cred };
      },
    },
    {
      name: 'in flight',
      kind: 'in_flight',
      staysPending: false,
      prepare: async (cred) => {
        await admitted(new Admission(redis, config), cred, ['evt_p2']);
        return { cred };
      },
    },
    {
      name: 'rate limited',
      kind: 'rate_limited',
      staysPending: false,
      prepare: async (cred) => ({ cred, config: withLimits({ integrationObservationsPerMin: 1 }) }),
    },
    {
      name: 'quota exhausted',
      kind: 'quota_exhausted',
      staysPending: false,
      prepare: async (cred) => ({ cred: { ...cred, sandboxAllowance: 1 } }),
    },
    {
      name: 'stale credential',
      kind: 'stale_credential',
      staysPending: false,
      prepare: async (cred) => {
        await redis.set(RedisKeys.credentialEpoch(cred.accountId, cred.connectionId), '7');
        return { cred };
      },
    },
  ];

  it.each(outcomes)(
    'admit puts the batch in the pending set before ADMIT, and takes it out when nothing new was admitted ($name)',
    async ({ kind, staysPending, prepare }) => {
      const prepared = await prepare(credential('sandbox'));
      const admission = new Admission(redis, prepared.config ?? config);
      const nowMs = now();
      const batchId = admission.newBatchId();
      const target = { accountId: prepared.cred.accountId, batchId };
      const during: (string | null)[] = [];
      watch(SCRIPTS.ADMIT, async () => {
        during.push(await pendingScore(target));
      });
      const result = await admission.admit(prepared.cred, { nowMs, itemCount: 2, eventIds: ['evt_p1', 'evt_p2'], batchId });
      expect(result.kind).toBe(kind);
      expect(during).toEqual([String(nowMs)]);
      expect(await pendingScore(target)).toBe(staysPending ? String(nowMs) : null);
      if (staysPending) expect(await admission.release(target.accountId, batchId, nowMs)).toBe(2);
    },
  );

  it('overdueBatches returns the pending batches received before a time, oldest first, until settled', async () => {
    const admission = new Admission(redis, config);
    const cred = credential('live');
    const start = now();
    const older = await admitted(admission, cred, ['evt_o1'], start - 5);
    const newer = await admitted(admission, cred, ['evt_o2'], start);
    const overdue = async (beforeMs: number) =>
      (await admission.overdueBatches(beforeMs, 1000)).filter((batch) => batch.accountId === cred.accountId);
    expect(await overdue(start)).toEqual([{ accountId: cred.accountId, batchId: older.batchId, receivedAtMs: start - 5 }]);
    expect(await overdue(start + 1)).toEqual([
      { accountId: cred.accountId, batchId: older.batchId, receivedAtMs: start - 5 },
      { accountId: cred.accountId, batchId: newer.batchId, receivedAtMs: start },
    ]);
    await admission.settleDurable([newer]);
    await admission.release(older.accountId, older.batchId, older.receivedAtMs);
    expect(await overdue(start + 1)).toEqual([]);
    await redis.zrem(RedisKeys.unanalysedBatches, newer.batchId);
  });
});

describe('Redis Cluster', () => {
  /** The part of a key a Redis Cluster hashes: the first `{...}` with something inside, else the whole key. */
  function hashTag(key: string): string {
    const open = key.indexOf('{');
    const close = open < 0 ? -1 : key.indexOf('}', open + 1);
    return close > open + 1 ? key.slice(open, close + 1) : key;
  }

  it("gives every key of an ADMIT, DURABLE, RELEASE and CONNECTION_CHECK call the account's hash tag", async () => {
    const admission = new Admission(redis, config);
    const cred = credential('sandbox');
    const admits = watch(SCRIPTS.ADMIT);
    const durables = watch(SCRIPTS.DURABLE);
    const releases = watch(SCRIPTS.RELEASE);
    const checks = watch(SCRIPTS.CONNECTION_CHECK);
    const kept = await admitted(admission, cred, ['evt_h1']);
    await admission.settleDurable([kept]);
    const dropped = await admitted(admission, cred, ['evt_h2']);
    await admission.release(dropped.accountId, dropped.batchId, dropped.receivedAtMs);
    expect(await admission.checkConnection(cred, now())).toEqual({ kind: 'ok' });
    // Epoch, allowance, two usage counters, 4 periods of 4 keys (de-duplication meta, the hash of
    // the form before buckets, committed, records), the sandbox's 5 windows.
    expect(admits[0]).toHaveLength(4 + 16 + 5);
    expect([admits.length, durables.length, releases.length, checks.length]).toEqual([2, 1, 1, 1]);
    for (const key of [...admits, ...durables, ...releases, ...checks].flat())
      expect([key, hashTag(key)]).toEqual([key, `{${cred.accountId}}`]);
    await redis.zrem(RedisKeys.unanalysedBatches, kept.batchId);
  });
});

describe('credential epoch and the script cache', () => {
  it('refuses a batch whose cached epoch differs from Redis, writing nothing', async () => {
    const admission = new Admission(redis, config);
    const cred = { ...credential(), epoch: '4' };
    await redis.set(RedisKeys.credentialEpoch(cred.accountId, cred.connectionId), '5');
    const batchId = admission.newBatchId();
    expect(await admission.admit(cred, { nowMs: now(), itemCount: 1, eventIds: ['evt_e'], batchId })).toEqual({ kind: 'stale_credential' });
    expect(await entry(cred, 'evt_e')).toBeNull();
    const { records } = periodKeys(cred);
    expect(await redis.exists(records, ...windowKeys(cred), ...Object.values(usageKeys(cred)))).toBe(0);
    expect(await pendingScore({ accountId: cred.accountId, batchId })).toBeNull();
    expect(await admit(admission, { ...cred, epoch: '5' }, ['evt_e'])).toMatchObject({ kind: 'admitted' });
  });

  it('falls back to EVAL when Redis does not know the script (NOSCRIPT), which caches it again', async () => {
    const script = new LuaScript(`return ARGV[1] -- ${unique()}`);
    // On a cluster the script runs on the master of its key's slot: look on every master.
    const cached = async () =>
      (await Promise.all(masterNodes(redis).map((node) => node.script('EXISTS', script.sha) as Promise<number[]>))).flat();
    expect(await cached()).not.toContain(1);
    expect(await script.run(redis, ['{noscript}'], ['hello'])).toBe('hello');
    expect(await cached()).toContain(1);
    expect(await script.run(redis, ['{noscript}'], ['again'])).toBe('again');
  });
});

describe('memory of the de-duplication window', () => {
  it('costs under 40 bytes of Redis memory per remembered eventId, in the buckets of one hash', async () => {
    const admission = new Admission(redis, config);
    const cred = credential('live');
    const at = now();
    // 20 batches of 50: enough entries for the set to split into several buckets.
    let stored = 0;
    const batchIds: string[] = [];
    for (let batch = 0; batch < 20; batch += 1) {
      const eventIds = Array.from({ length: 50 }, () => `evt_${randomBytes(12).toString('hex')}`);
      const ticket = await admitted(admission, cred, eventIds, at);
      expect(await admission.settleDurable([ticket])).toEqual([true]);
      batchIds.push(ticket.batchId);
      stored += eventIds.length;
    }
    const keys = periodKeys(cred, config.ingest.dedupWindowSeconds, at);
    const set = await dedupSet(redis, keys.dedup);
    expect(set.count).toBe(stored);
    expect(set.digests.flat()).toHaveLength(stored);
    expect(await redis.exists(keys.records)).toBe(0);
    let dedup = 0;
    for (const key of set.keys) dedup += (await redis.memory('USAGE', key, 'SAMPLES', '0')) as number;
    const committed = (await redis.memory('USAGE', keys.committed, 'SAMPLES', '0')) as number;
    const average = (dedup + committed) / stored;
    // At least the digest itself.
    expect(average).toBeGreaterThan(EVENT_ID_DIGEST_BYTES);
    expect(average).toBeLessThan(40);
    await redis.zrem(RedisKeys.unanalysedBatches, ...batchIds);
  });
});

describe('bucketed de-duplication sets (linear hashing)', () => {
  // Thousands of eventIds a minute into one connection: far past the production windows.
  const roomy = () =>
    withLimits({
      integrationRequestsPerMin: 1_000_000,
      integrationObservationsPerMin: 1_000_000,
      workspaceObservationsPerMin: 1_000_000,
      sandboxAccountEnvelopesPerMin: 1_000_000,
      sandboxAccountRequestsPerMin: 1_000_000,
    });
  const fresh = (count: number) => Array.from({ length: count }, () => `evt_${randomBytes(10).toString('hex')}`);

  /**
   * Checks that every digest of the set is in the bucket it maps to, that the hash has one field
   * per bucket and no other, and that the meta counts the digests.
   */
  async function checkSet(metaKey: string) {
    const set = await dedupSet(redis, metaKey);
    set.digests.forEach((bucket, index) => {
      for (const digest of bucket) expect([digest, dedupBucket(Buffer.from(digest, 'hex'), set.buckets)]).toEqual([digest, index]);
    });
    expect(set.fields.map(Number).every((index) => index >= 0 && index < set.buckets)).toBe(true);
    expect(set.digests.flat()).toHaveLength(set.count);
    return set;
  }

  it('splits as entries come, keeps every remembered eventId findable, and finds them all as duplicates', async () => {
    const admission = new Admission(redis, roomy());
    const cred = credential('live');
    const at = now();
    const all: string[] = [];
    const sizes: number[] = [];
    for (let batch = 0; batch < 40; batch += 1) {
      const eventIds = fresh(100);
      const ticket = await admitted(admission, cred, eventIds, at);
      expect(ticket.duplicate.every((duplicate) => !duplicate)).toBe(true);
      expect(await admission.settleDurable([ticket])).toEqual([true]);
      await redis.zrem(RedisKeys.unanalysedBatches, ticket.batchId);
      all.push(...eventIds);
      sizes.push((await dedupSet(redis, periodKeys(cred, config.ingest.dedupWindowSeconds, at).dedup)).buckets);
    }
    // 4,000 digests at a load of 32: 125 buckets, reached one split at a time (about 3 per batch).
    const set = await checkSet(periodKeys(cred, config.ingest.dedupWindowSeconds, at).dedup);
    expect(set).toMatchObject({ buckets: 125, count: 4000 });
    expect(sizes).toEqual(Array.from({ length: 40 }, (_, batch) => Math.ceil(((batch + 1) * 100) / 32)));
    expect(new Set(set.digests.flat())).toEqual(new Set(all.map((eventId) => eventIdDigest(eventId).toString('hex'))));
    for (let offset = 0; offset < all.length; offset += 500) {
      const again = await admitted(admission, cred, all.slice(offset, offset + 500), at + 1);
      expect(again.duplicate).toEqual(Array.from({ length: 500 }, () => true));
    }
    expect(await redis.get(usageKeys(cred, at).workspace)).toBe('4000');
  });

  it('a low-volume connection keeps one bucket', async () => {
    const admission = new Admission(redis, roomy());
    const cred = credential('live');
    const ticket = await admitted(admission, cred, fresh(12));
    const set = await checkSet(periodKeys(cred).dedup);
    expect(set).toMatchObject({ buckets: 1, count: 12 });
    expect(set.keys).toHaveLength(2);
    await admission.release(ticket.accountId, ticket.batchId, ticket.receivedAtMs);
  });

  it('a release after splits removes exactly its batch entries, wherever the splits moved them', async () => {
    const admission = new Admission(redis, roomy());
    const cred = credential('sandbox');
    const at = now();
    const releasedIds = fresh(60);
    const released = await admitted(admission, cred, releasedIds, at);
    const kept: string[] = [];
    for (let batch = 0; batch < 40; batch += 1) {
      const eventIds = fresh(100);
      const ticket = await admitted(admission, cred, eventIds, at);
      expect(await admission.settleDurable([ticket])).toEqual([true]);
      await redis.zrem(RedisKeys.unanalysedBatches, ticket.batchId);
      kept.push(...eventIds);
    }
    const metaKey = periodKeys(cred, config.ingest.dedupWindowSeconds, at).dedup;
    const before = await checkSet(metaKey);
    expect(before).toMatchObject({ buckets: 127, count: 4060 });
    // The released batch's entries are spread over many buckets that splits made after it.
    const spread = new Set(releasedIds.map((eventId) => dedupBucket(eventIdDigest(eventId), before.buckets)));
    expect(spread.size).toBeGreaterThan(30);
    expect(await admission.release(released.accountId, released.batchId, released.receivedAtMs)).toBe(60);
    const after = await checkSet(metaKey);
    expect(after).toMatchObject({ buckets: 127, count: 4000 });
    for (const eventId of releasedIds) expect(await entry(cred, eventId, config.ingest.dedupWindowSeconds, at)).toBeNull();
    expect(new Set(after.digests.flat())).toEqual(new Set(kept.map((eventId) => eventIdDigest(eventId).toString('hex'))));
    expect(await redis.get(usageKeys(cred, at).account)).toBe('4000');
    expect(await redis.get(usageKeys(cred, at).workspace)).toBe('4000');
    // Sent again, the released eventIds are new and the kept ones duplicates.
    const again = await admitted(admission, cred, [...releasedIds.slice(0, 10), ...kept.slice(0, 10)], at + 1);
    expect(again.duplicate).toEqual([...Array.from({ length: 10 }, () => false), ...Array.from({ length: 10 }, () => true)]);
    await admission.release(again.accountId, again.batchId, again.receivedAtMs);
  });
});

describe('upgrade from the hashes of eventIds', () => {
  it('finds a committed eventId of the form before buckets as a duplicate, and releases a record of that form', async () => {
    const admission = new Admission(redis, config);
    const cred = credential('sandbox');
    const at = now();
    const period = dedupPeriod(at, config.ingest.dedupWindowSeconds);
    const legacy = IngestKeys.eventIds(cred.accountId, cred.connectionId, period);
    const keys = periodKeys(cred, config.ingest.dedupWindowSeconds, at);
    const usage = usageKeys(cred, at);
    // What the edge before buckets left: a committed batch, and one admitted but never durable.
    const [committedBatch, lostBatch] = [admission.newBatchId(), admission.newBatchId()];
    const lostValue = `${at}:${lostBatch}`;
    await redis.hset(legacy, 'evt_old_kept', `${at}:${committedBatch}`, 'evt_old_lost1', lostValue, 'evt_old_lost2', lostValue);
    await redis.hset(keys.committed, committedBatch, '1');
    await redis.set(usage.account, '3');
    await redis.set(usage.workspace, '3');
    const record = `${at}|1|${usage.account}|${usage.workspace}||||${legacy}|${lostValue}|evt_old_lost1,evt_old_lost2`;
    await redis.hset(keys.records, lostBatch, record);
    expect(await admit(admission, cred, ['evt_old_kept', 'evt_new'], at + 1)).toMatchObject({ kind: 'admitted', duplicate: [true, false] });
    expect(await admit(admission, cred, ['evt_old_lost2'], at + 1)).toEqual({ kind: 'in_flight' });
    expect(await admission.release(cred.accountId, lostBatch, at)).toBe(2);
    expect(await redis.hkeys(legacy)).toEqual(['evt_old_kept']);
    expect(await redis.get(usage.account)).toBe('2');
    const retry = await admitted(admission, cred, ['evt_old_lost1', 'evt_old_kept'], at + 2);
    expect(retry.duplicate).toEqual([false, true]);
    expect(await redis.get(usage.account)).toBe('3');
  });
});
