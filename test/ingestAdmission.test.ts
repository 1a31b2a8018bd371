import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { admissionInFlightMs } from '../shared/admissionTiming.js';
import { loadConfig, type Config } from '../shared/config.js';
import { connectRedis, RedisKeys, type Redis } from '../shared/redis.js';
import { usagePeriodOf } from '../shared/usagePeriod.js';
import { Admission } from '../ingest/admission.js';
import { LuaScript } from '../ingest/luaScript.js';
import type { IngestCredential } from '../ingest/credentials.js';
import { IngestKeys } from '../ingest/keys.js';
import { dedupEntry, dedupPeriod } from './helpers/ingest.js';

// The admission scripts against the real test Redis, with a credential record of fresh ids:
// the in-flight / committed / abandoned states of an eventId, release, the epoch check and
// the script cache fallback.

let redis: Redis;
let config: Config;

beforeAll(async () => {
  config = loadConfig();
  redis = await connectRedis(config.redisUrl);
});
afterAll(() => { redis.disconnect(); });

const unique = () => randomBytes(8).toString('hex');

function credential(mode: 'sandbox' | 'live' = 'sandbox'): IngestCredential {
  const id = unique();
  return {
    connectionId: `int_${id}`, connectionKey: `svc_conn_v1.${id}`, workspaceId: `ws_${id}`, accountId: `acct_${id}`, tenantId: `ten_${id}`,
    environmentId: `env_${id}`, mode, integrationId: `wint_${id}`, integrationKey: `svc_int_${id}`, direction: 'outbound', protocol: 'http-api',
    usable: true, tokenHash: null, hmacKey: null, sandboxAllowance: null, epoch: '', loadedAt: Date.now(),
  };
}

const now = () => Date.now();
/** The de-duplication hash ADMIT writes to now. */
const currentHash = (connectionId: string) => IngestKeys.eventIds(connectionId, dedupPeriod(now(), config.ingest.dedupWindowSeconds));
const entry = (connectionId: string, eventId: string) => dedupEntry(redis, connectionId, eventId, config.ingest.dedupWindowSeconds);

describe('eventId states', () => {
  it('admits new eventIds, then reports them in flight until their batch is committed, then as duplicates', async () => {
    const admission = new Admission(redis, config);
    const cred = credential();
    const first = await admission.admit(cred, { nowMs: now(), itemCount: 2, eventIds: ['evt_a', 'evt_b'] });
    expect(first).toMatchObject({ kind: 'admitted', duplicate: [false, false], newCount: 2 });
    expect(await admission.admit(cred, { nowMs: now(), itemCount: 1, eventIds: ['evt_b'] })).toEqual({ kind: 'in_flight' });
    if (first.kind !== 'admitted') throw new Error('not admitted');
    expect(await admission.commit({ connectionId: cred.connectionId, workspaceId: cred.workspaceId, mode: 'sandbox', batchId: first.ticket.batchId, receivedAtMs: now(), eventIds: ['evt_a', 'evt_b'] })).toBe(true);
    const again = await admission.admit(cred, { nowMs: now(), itemCount: 3, eventIds: ['evt_b', 'evt_c', 'evt_a'] });
    expect(again).toMatchObject({ kind: 'admitted', duplicate: [true, false, true], newCount: 1 });
    expect(await redis.get(RedisKeys.sandboxMonthlyUsage(cred.accountId, usagePeriodOf(new Date()).period))).toBe('3');
    await redis.del(RedisKeys.analysisJobs + ':unused');
  });

  it('treats an eventId whose batch never committed and whose deadline passed as never admitted', async () => {
    const admission = new Admission(redis, config);
    const cred = credential();
    // Entries left in an older period are found too.
    const older = IngestKeys.eventIds(cred.connectionId, dedupPeriod(now(), config.ingest.dedupWindowSeconds) - 2);
    await redis.hset(older, 'evt_lost', `${now() - 1}:deadbatch`);
    await redis.hset(currentHash(cred.connectionId), 'evt_pending', `${now() + 60_000}:otherbatch`);
    expect(await admission.admit(cred, { nowMs: now(), itemCount: 1, eventIds: ['evt_lost'] })).toMatchObject({ kind: 'admitted', duplicate: [false] });
    expect(await admission.admit(cred, { nowMs: now(), itemCount: 1, eventIds: ['evt_pending'] })).toEqual({ kind: 'in_flight' });
    await redis.set(IngestKeys.committedBatch('otherbatch'), '1', 'EX', 60);
    expect(await admission.admit(cred, { nowMs: now(), itemCount: 1, eventIds: ['evt_pending'] })).toMatchObject({ kind: 'admitted', duplicate: [true] });
  });

  it('keeps eventIds for at least the de-duplication window and at most 4/3 of it', async () => {
    const admission = new Admission(redis, { ...config, ingest: { ...config.ingest, dedupWindowSeconds: 3600 } });
    const cred = credential('live');
    const admitted = await admission.admit(cred, { nowMs: now(), itemCount: 1, eventIds: ['evt_ttl'] });
    if (admitted.kind !== 'admitted') throw new Error('not admitted');
    // The script and dedupPeriod agree on the period (1,200 s for a one-hour window).
    expect(admitted.ticket.dedupKey).toBe(IngestKeys.eventIds(cred.connectionId, dedupPeriod(now(), 3600)));
    expect(await redis.hget(admitted.ticket.dedupKey, 'evt_ttl')).toMatch(/^\d+:/);
    const ttl = await redis.ttl(admitted.ticket.dedupKey);
    expect(ttl).toBeGreaterThanOrEqual(3600);
    expect(ttl).toBeLessThanOrEqual(4800);
  });

  it('still knows an eventId one window minus a second later, in another period', async () => {
    const admission = new Admission(redis, { ...config, ingest: { ...config.ingest, dedupWindowSeconds: 60 } });
    const cred = credential('live');
    const start = Math.floor(now() / 20_000) * 20_000 + 19_000;
    const first = await admission.admit(cred, { nowMs: start, itemCount: 1, eventIds: ['evt_late'] });
    if (first.kind !== 'admitted') throw new Error('not admitted');
    await admission.commit({ connectionId: cred.connectionId, workspaceId: cred.workspaceId, mode: 'live', batchId: first.ticket.batchId, receivedAtMs: start, eventIds: ['evt_late'] });
    const later = await admission.admit(cred, { nowMs: start + 59_000, itemCount: 1, eventIds: ['evt_late'] });
    expect(later).toMatchObject({ kind: 'admitted', duplicate: [true], newCount: 0 });
    if (later.kind !== 'admitted') throw new Error('not admitted');
    expect(later.ticket.dedupKey).not.toBe(first.ticket.dedupKey);
  });
});

describe('sliding windows', () => {
  it('forgets buckets as they leave the 60-second window and keeps the running sum equal to the buckets', async () => {
    const tight = { ...config, limits: { ...config.limits, integrationRequestsPerMin: 3 } };
    const admission = new Admission(redis, tight);
    const cred = credential('live');
    const key = IngestKeys.integrationRequests(cred.connectionId);
    const start = Math.floor(now() / 1000) * 1000;
    for (const offset of [0, 10_000, 20_000]) expect(await admission.admit(cred, { nowMs: start + offset, itemCount: 0, eventIds: [] })).toMatchObject({ kind: 'admitted' });
    expect(await admission.admit(cred, { nowMs: start + 30_000, itemCount: 0, eventIds: [] })).toEqual({ kind: 'rate_limited', code: 'workload_rate_limited', retryAfterSeconds: 30 });
    // 59.999 s after the first request it still counts; at 60 s its bucket has left the window.
    expect(await admission.admit(cred, { nowMs: start + 59_999, itemCount: 0, eventIds: [] })).toMatchObject({ kind: 'rate_limited', retryAfterSeconds: 1 });
    expect(await admission.admit(cred, { nowMs: start + 60_000, itemCount: 0, eventIds: [] })).toMatchObject({ kind: 'admitted' });
    const { s: runningSum, o: oldest, ...buckets } = await redis.hgetall(key);
    expect(Object.keys(buckets).sort()).toEqual([10, 20, 60].map((seconds) => String(start / 1000 + seconds)));
    expect(runningSum).toBe('3');
    expect(oldest).toBe(String(start / 1000 + 1));
    // Idle past the window (or a clock moved by a month): everything is forgotten at once.
    for (const later of [start + 200_000, start + 31 * 24 * 3600_000]) {
      const began = Date.now();
      expect(await admission.admit(cred, { nowMs: later, itemCount: 0, eventIds: [] })).toMatchObject({ kind: 'admitted' });
      expect(Date.now() - began).toBeLessThan(100);
      const { s: sum, o: _o, ...left } = await redis.hgetall(key);
      expect(sum).toBe('1');
      expect(Object.keys(left)).toEqual([String(Math.floor(later / 1000))]);
    }
  });
});

describe('expiries', () => {
  it('sets each key\'s expiry when it is created, so later writes need not repeat it', async () => {
    const admission = new Admission(redis, { ...config, ingest: { ...config.ingest, dedupWindowSeconds: 3600 } });
    const cred = credential('sandbox');
    const { period } = usagePeriodOf(new Date());
    const usage = [RedisKeys.sandboxMonthlyUsage(cred.accountId, period), RedisKeys.workspaceMonthlyUsage(cred.workspaceId, period, 'sandbox')];
    const windows = [IngestKeys.sandboxAccountRequests(cred.accountId), IngestKeys.integrationObservations(cred.connectionId), IngestKeys.workspaceObservations(cred.workspaceId)];
    let dedupKey = '';
    for (const eventId of ['evt_first', 'evt_second', 'evt_third']) {
      const admitted = await admission.admit(cred, { nowMs: now(), itemCount: 1, eventIds: [eventId] });
      if (admitted.kind !== 'admitted') throw new Error('not admitted');
      dedupKey = admitted.ticket.dedupKey;
    }
    expect(await redis.hlen(dedupKey)).toBe(3);
    const dedupTtl = await redis.ttl(dedupKey);
    expect(dedupTtl).toBeGreaterThanOrEqual(3600);
    expect(dedupTtl).toBeLessThanOrEqual(4800);
    for (const key of usage) {
      expect(await redis.get(key)).toBe('3');
      // About 400 days: the console still reads a month's usage long after it ended.
      expect(await redis.ttl(key)).toBeGreaterThan(390 * 24 * 3600);
    }
    for (const key of windows) {
      // A window and a bucket from the start of the bucket its first write went to.
      const ttl = await redis.pttl(key);
      expect(ttl).toBeGreaterThan(55_000);
      expect(ttl).toBeLessThanOrEqual(61_000);
    }
  });
});

describe('release', () => {
  it('undoes exactly what the admission counted and frees its eventIds', async () => {
    const admission = new Admission(redis, config);
    const cred = credential();
    const { period } = usagePeriodOf(new Date());
    const windowKeys = [IngestKeys.sandboxAccountRequests(cred.accountId), IngestKeys.sandboxAccountEnvelopes(cred.accountId), IngestKeys.integrationRequests(cred.connectionId), IngestKeys.integrationObservations(cred.connectionId), IngestKeys.workspaceObservations(cred.workspaceId)];
    const sums = async () => Promise.all(windowKeys.map(async (key) => {
      const { s: runningSum, o: _oldest, ...buckets } = await redis.hgetall(key);
      const sum = Object.values(buckets).reduce((total, value) => total + Number(value), 0);
      expect(Number(runningSum ?? 0)).toBe(sum);
      return sum;
    }));
    const before = await sums();
    const kept = await admission.admit(cred, { nowMs: now(), itemCount: 1, eventIds: ['evt_kept'] });
    if (kept.kind !== 'admitted') throw new Error('not admitted');
    await admission.commit({ connectionId: cred.connectionId, workspaceId: cred.workspaceId, mode: 'sandbox', batchId: kept.ticket.batchId, receivedAtMs: now(), eventIds: ['evt_kept'] });
    const between = await sums();
    const admitted = await admission.admit(cred, { nowMs: now(), itemCount: 3, eventIds: ['evt_kept', 'evt_x', 'evt_y'] });
    if (admitted.kind !== 'admitted') throw new Error('not admitted');
    expect(admitted.newCount).toBe(2);
    expect(await redis.get(RedisKeys.sandboxMonthlyUsage(cred.accountId, period))).toBe('3');
    await admission.release(admitted.ticket.batchId);
    expect(await sums()).toEqual(between);
    expect(between).not.toEqual(before);
    expect(await redis.get(RedisKeys.sandboxMonthlyUsage(cred.accountId, period))).toBe('1');
    expect(await redis.get(RedisKeys.workspaceMonthlyUsage(cred.workspaceId, period, 'sandbox'))).toBe('1');
    expect(await entry(cred.connectionId, 'evt_x')).toBeNull();
    expect(await entry(cred.connectionId, 'evt_y')).toBeNull();
    expect(await entry(cred.connectionId, 'evt_kept')).not.toBeNull();
  });

  it('leaves an eventId that another batch took over after the deadline', async () => {
    const admission = new Admission(redis, config);
    const cred = credential('live');
    const admitted = await admission.admit(cred, { nowMs: now(), itemCount: 1, eventIds: ['evt_taken'] });
    if (admitted.kind !== 'admitted') throw new Error('not admitted');
    await redis.hset(admitted.ticket.dedupKey, 'evt_taken', `${now() + 60_000}:someoneelse`);
    await admission.release(admitted.ticket.batchId);
    expect(await redis.hget(admitted.ticket.dedupKey, 'evt_taken')).toMatch(/someoneelse$/);
    expect(await redis.get(RedisKeys.workspaceMonthlyUsage(cred.workspaceId, usagePeriodOf(new Date()).period, 'live'))).toBe('1');
  });
});

describe('COMMIT', () => {
  const jobOf = (cred: IngestCredential, batchId: string, eventIds: string[]) => ({
    connectionId: cred.connectionId, workspaceId: cred.workspaceId, mode: cred.mode, batchId, receivedAtMs: now(), eventIds,
  });

  it('commits the batches asked for together in one call: each gets its marker and its own analysis job', async () => {
    const stream = `test:analysis:${unique()}`;
    const admission = new Admission(redis, config, stream);
    const cred = credential('live');
    const tickets = [];
    for (const eventId of ['evt_c1', 'evt_c2', 'evt_c3']) {
      const admitted = await admission.admit(cred, { nowMs: now(), itemCount: 1, eventIds: [eventId] });
      if (admitted.kind !== 'admitted') throw new Error('not admitted');
      tickets.push(admitted.ticket);
    }
    const added = await Promise.all(tickets.map((ticket) => admission.commit(jobOf(cred, ticket.batchId, ticket.newEventIds))));
    expect(added).toEqual([true, true, true]);
    for (const ticket of tickets) expect(await redis.exists(IngestKeys.committedBatch(ticket.batchId))).toBe(1);
    const entries = await redis.xrange(stream, '-', '+');
    expect(entries.map(([, fields]) => [fields[fields.indexOf('batchId') + 1], fields[fields.indexOf('eventIds') + 1]]))
      .toEqual(tickets.map((ticket) => [ticket.batchId, ticket.newEventIds.join(',')]));
    expect(await admission.admit(cred, { nowMs: now(), itemCount: 3, eventIds: ['evt_c1', 'evt_c2', 'evt_c3'] })).toMatchObject({ kind: 'admitted', duplicate: [true, true, true] });
    await redis.del(stream);
  });

  it('answers false for each batch whose job could not be added, still marking it committed', async () => {
    const stream = `test:analysis:${unique()}`;
    await redis.set(stream, 'not a stream');
    const admission = new Admission(redis, config, stream);
    const cred = credential('live');
    const tickets = [];
    for (const eventId of ['evt_f1', 'evt_f2']) {
      const admitted = await admission.admit(cred, { nowMs: now(), itemCount: 1, eventIds: [eventId] });
      if (admitted.kind !== 'admitted') throw new Error('not admitted');
      tickets.push(admitted.ticket);
    }
    expect(await Promise.all(tickets.map((ticket) => admission.commit(jobOf(cred, ticket.batchId, ticket.newEventIds))))).toEqual([false, false]);
    for (const ticket of tickets) expect(await redis.exists(IngestKeys.committedBatch(ticket.batchId))).toBe(1);
    // The retried call adds each job once, however often it is repeated.
    await redis.del(stream);
    for (let call = 0; call < 2; call += 1) {
      expect(await Promise.all(tickets.map((ticket) => admission.commit(jobOf(cred, ticket.batchId, ticket.newEventIds))))).toEqual([true, true]);
    }
    expect(await redis.xlen(stream)).toBe(2);
    await redis.del(stream);
  });
});

describe('batches whose outcome was never reported (issue 12)', () => {
  const shortLived = () => ({ ...config, ingest: { ...config.ingest, insertTimeoutMs: 100, groupCommitMaxWaitMs: 10, groupCommitBusyWaitMs: 0 } });
  const pendingDeadline = (batchId: string) => redis.zscore(IngestKeys.pendingBatches, batchId);

  async function admitted(admission: Admission, cred: IngestCredential, eventIds: string[], nowMs = now()) {
    const result = await admission.admit(cred, { nowMs, itemCount: eventIds.length, eventIds });
    if (result.kind !== 'admitted') throw new Error(`not admitted: ${result.kind}`);
    return result.ticket;
  }

  it('keeps an admission record until the batch is settled, and reports its eventIds unsettled after the deadline', async () => {
    const admission = new Admission(redis, shortLived());
    const cred = credential('sandbox');
    const start = now();
    const ticket = await admitted(admission, cred, ['evt_u1', 'evt_u2'], start);
    const deadline = Number(await pendingDeadline(ticket.batchId));
    // The one timing the edge and the analyzer's stream time share (shared/admissionTiming.ts).
    expect(deadline).toBe(start + admissionInFlightMs(shortLived().ingest));
    expect(shortLived().analyzer.admissionInFlightMs).toBe(admissionInFlightMs(config.ingest));
    expect(await admission.pendingBatch(ticket.batchId)).toEqual({ connectionId: cred.connectionId, receivedAtMs: start, eventIds: ['evt_u1', 'evt_u2'] });
    expect(await admission.admit(cred, { nowMs: deadline, itemCount: 1, eventIds: ['evt_u2'] })).toEqual({ kind: 'in_flight' });
    // Past the deadline the eventId is neither new nor a duplicate until the batch is settled.
    expect(await admission.admit(cred, { nowMs: deadline + 1, itemCount: 1, eventIds: ['evt_u2'] }))
      .toEqual({ kind: 'unsettled', batchId: ticket.batchId, deadlineMs: deadline });
    expect((await admission.overdueBatches(deadline + 1, 1000)).map((batch) => batch.batchId)).toContain(ticket.batchId);
    expect(await redis.get(RedisKeys.sandboxMonthlyUsage(cred.accountId, usagePeriodOf(new Date(start)).period))).toBe('2');
  });

  it('settles a batch whose rows were written: counted once, committed, analysed, and its retry is a duplicate', async () => {
    const stream = `test:analysis:${unique()}`;
    const admission = new Admission(redis, shortLived(), stream);
    const cred = credential('live');
    const start = now();
    const ticket = await admitted(admission, cred, ['evt_w1', 'evt_w2'], start);
    const deadline = Number(await pendingDeadline(ticket.batchId));
    expect(await admission.resolve(ticket.batchId, ['evt_w1', 'evt_w2'])).toEqual({ kept: 2, released: 0 });
    expect(await admission.resolve(ticket.batchId, ['evt_w1', 'evt_w2'])).toEqual({ kept: 0, released: 0 });
    expect(await pendingDeadline(ticket.batchId)).toBeNull();
    expect(await admission.pendingBatch(ticket.batchId)).toBeNull();
    const entries = await redis.xrange(stream, '-', '+');
    expect(entries).toHaveLength(1);
    expect(entries[0][1]).toEqual(['connectionId', cred.connectionId, 'workspaceId', cred.workspaceId, 'mode', 'live', 'batchId', ticket.batchId, 'receivedAtMs', String(start), 'eventIds', 'evt_w1,evt_w2']);
    expect(await admission.admit(cred, { nowMs: deadline + 1, itemCount: 2, eventIds: ['evt_w1', 'evt_w2'] })).toMatchObject({ kind: 'admitted', newCount: 0 });
    expect(await redis.get(RedisKeys.workspaceMonthlyUsage(cred.workspaceId, usagePeriodOf(new Date(start)).period, 'live'))).toBe('2');
    // A COMMIT that arrives after the batch was settled adds no second job.
    expect(await admission.commit({ connectionId: cred.connectionId, workspaceId: cred.workspaceId, mode: 'live', batchId: ticket.batchId, receivedAtMs: start, eventIds: ticket.newEventIds })).toBe(true);
    expect(await redis.xlen(stream)).toBe(1);
    await redis.del(stream);
  });

  it('settles a batch whose rows were not written (or only some): the rest is released and counted again only by the retry', async () => {
    const stream = `test:analysis:${unique()}`;
    const admission = new Admission(redis, shortLived(), stream);
    const cred = credential('sandbox');
    const start = now();
    const usage = RedisKeys.sandboxMonthlyUsage(cred.accountId, usagePeriodOf(new Date(start)).period);
    const none = await admitted(admission, cred, ['evt_n1', 'evt_n2'], start);
    const some = await admitted(admission, cred, ['evt_s1', 'evt_s2'], start);
    expect(await redis.get(usage)).toBe('4');
    expect(await admission.resolve(none.batchId, [])).toEqual({ kept: 0, released: 2 });
    expect(await admission.resolve(some.batchId, ['evt_s2'])).toEqual({ kept: 1, released: 1 });
    expect(await redis.get(usage)).toBe('1');
    expect(await redis.xlen(stream)).toBe(1);
    const deadline = Number(start) + 60_000;
    const retry = await admission.admit(cred, { nowMs: deadline, itemCount: 4, eventIds: ['evt_n1', 'evt_n2', 'evt_s1', 'evt_s2'] });
    expect(retry).toMatchObject({ kind: 'admitted', duplicate: [false, false, false, true], newCount: 3 });
    expect(await redis.get(usage)).toBe('4');
    await redis.del(stream);
  });

  it('adds the analysis job of a batch committed by a process that died before its job was added', async () => {
    const stream = `test:analysis:${unique()}`;
    await redis.set(stream, 'not a stream');
    const admission = new Admission(redis, shortLived(), stream);
    const cred = credential('live');
    const ticket = await admitted(admission, cred, ['evt_j1']);
    expect(await admission.commit({ connectionId: cred.connectionId, workspaceId: cred.workspaceId, mode: 'live', batchId: ticket.batchId, receivedAtMs: now(), eventIds: ['evt_j1'] })).toBe(false);
    expect(await pendingDeadline(ticket.batchId)).not.toBeNull();
    await redis.del(stream);
    expect(await admission.resolve(ticket.batchId, [])).toEqual({ kept: 1, released: 0 });
    expect(await redis.xlen(stream)).toBe(1);
    expect(await pendingDeadline(ticket.batchId)).toBeNull();
    await redis.del(stream);
  });
});

describe('credential epoch and the script cache', () => {
  it('refuses a batch whose cached epoch differs from Redis, writing nothing', async () => {
    const admission = new Admission(redis, config);
    const cred = { ...credential(), epoch: '4' };
    await redis.set(RedisKeys.credentialEpoch(cred.connectionId), '5');
    expect(await admission.admit(cred, { nowMs: now(), itemCount: 1, eventIds: ['evt_e'] })).toEqual({ kind: 'stale_credential' });
    expect(await entry(cred.connectionId, 'evt_e')).toBeNull();
    expect(await redis.exists(IngestKeys.integrationRequests(cred.connectionId))).toBe(0);
    expect(await admission.admit({ ...cred, epoch: '5' }, { nowMs: now(), itemCount: 1, eventIds: ['evt_e'] })).toMatchObject({ kind: 'admitted' });
  });

  it('falls back to EVAL when Redis does not know the script (NOSCRIPT), which caches it again', async () => {
    const script = new LuaScript(`return ARGV[1] -- ${unique()}`);
    expect(await redis.script('EXISTS', script.sha)).toEqual([0]);
    expect(await script.run(redis, [], ['hello'])).toBe('hello');
    expect(await redis.script('EXISTS', script.sha)).toEqual([1]);
    expect(await script.run(redis, [], ['again'])).toBe('again');
  });
});

describe('memory of the de-duplication window', () => {
  it('costs well under 100 bytes of Redis memory per remembered eventId', async () => {
    const admission = new Admission(redis, config);
    const cred = credential('live');
    // 20 batches of 50: enough fields for the hash to leave its compact encoding, as it does in use.
    let stored = 0;
    let markers = 0;
    let dedupKey = '';
    for (let batch = 0; batch < 20; batch += 1) {
      const eventIds = Array.from({ length: 50 }, () => `evt_${randomBytes(12).toString('hex')}`);
      const admitted = await admission.admit(cred, { nowMs: now(), itemCount: 50, eventIds });
      if (admitted.kind !== 'admitted') throw new Error('not admitted');
      await admission.commit({ connectionId: cred.connectionId, workspaceId: cred.workspaceId, mode: 'live', batchId: admitted.ticket.batchId, receivedAtMs: now(), eventIds });
      markers += (await redis.memory('USAGE', IngestKeys.committedBatch(admitted.ticket.batchId))) as number;
      stored += eventIds.length;
      dedupKey = admitted.ticket.dedupKey;
    }
    expect(await redis.hlen(dedupKey)).toBe(stored);
    const hash = (await redis.memory('USAGE', dedupKey, 'SAMPLES', '0')) as number;
    const average = (hash + markers) / stored;
    expect(average).toBeGreaterThan(30);
    expect(average).toBeLessThan(100);
  });
});
