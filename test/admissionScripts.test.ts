import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadConfig, type Config } from '../shared/config.js';
import { connectRedis, RedisKeys, type Redis } from '../shared/redis.js';
import { Admission, BUCKET_MS, WINDOW_MS } from '../ingest/admission/admission.js';
import { DEDUP_PERIODS, IngestKeys } from '../ingest/admission/keys.js';
import { LuaScript } from '../ingest/admission/luaScript.js';
import {
  ScriptLayout,
  arg,
  key,
  keyList,
  replyConstant,
  type Kind,
  type ScriptCall,
  type ScriptInput,
  type Slot,
} from '../ingest/admission/scriptLayout.js';
import { LAYOUTS, SCRIPTS, admitCall, admitOutcome, connectionCheckCall, connectionCheckOutcome } from '../ingest/admission/scripts.js';
import type { IngestCredential } from '../ingest/common/credential.js';

// The admission scripts' layouts (scriptLayout.ts) against the real test Redis: the Lua locals
// each preamble declares hold what the builder put in KEYS and ARGV, and CONNECTION_CHECK counts
// a client's checks exactly as ADMIT did when the connection check ran it with placeholders.

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

/** What the echo needs of any layout. */
interface AnyLayout {
  keys: readonly Slot[];
  args: readonly Slot[];
  replies: Readonly<Record<string, number>>;
  preamble: string;
}

/**
 * Runs the layout's preamble followed by a body that returns every local it declares (and the
 * reply constants) as JSON: what the script body would see.
 */
async function echo(layout: AnyLayout, call: ScriptCall): Promise<Record<string, unknown>> {
  const names = [...layout.keys, ...layout.args].map((slot) => slot.name);
  const constants = Object.keys(layout.replies).map(replyConstant);
  const fields = [...names, ...constants].map((name) => `${name} = ${name}`).join(', ');
  const script = new LuaScript(`${layout.preamble}return cjson.encode({${fields}})`);
  return JSON.parse(String(await script.run(redis, call.keys, call.args))) as Record<string, unknown>;
}

/**
 * What the Lua should hold for a typed input: each value, as text for a 'numberText' slot and
 * the bytes of a 'bytes' slot (ASCII here, which cjson and JSON keep as they are; cjson writes an
 * empty Lua table as `{}`, so an empty list is expected as `{}`), and the reply codes.
 */
function expected(layout: AnyLayout, input: object): Record<string, unknown> {
  const values = input as Record<string, unknown>;
  const lua = (kind: Kind, value: unknown) =>
    kind === 'numberText' ? String(value) : kind === 'bytes' ? (value as Buffer).toString('latin1') : value;
  const locals = [...layout.keys, ...layout.args].map((slot) => {
    const value = values[slot.name];
    if (slot.slot === 'field') return [slot.name, lua(slot.kind, value)];
    const list = value as unknown[];
    return [slot.name, list.length === 0 ? {} : list.map((each) => lua(slot.kind, each))];
  });
  return {
    ...Object.fromEntries(locals),
    ...Object.fromEntries(Object.entries(layout.replies).map(([name, code]) => [replyConstant(name), code])),
  };
}

describe("each script's Lua locals hold what its builder sent", () => {
  const tag = `{layout_${unique()}}`;
  const k = (name: string) => `${name}:${tag}`;
  const periodKeys = (kind: string) => Array.from({ length: DEDUP_PERIODS }, (_, back) => k(`${kind}${back}`));

  const admit: ScriptInput<typeof LAYOUTS.ADMIT>[] = [
    {
      epochKey: k('epoch'),
      allowanceKey: k('allowance'),
      accountUsageKey: k('account'),
      workspaceUsageKey: k('workspace'),
      metaKeys: periodKeys('dm'),
      legacyKeys: periodKeys('dd'),
      committedKeys: periodKeys('dc'),
      recordKeys: periodKeys('ib'),
      windowKeys: [k('w1'), k('w2'), k('w3')],
      cachedEpoch: '7',
      nowMs: 1_767_225_600_123,
      windowMs: 60_000,
      bucketMs: 1_000,
      sandbox: true,
      quotaEnforced: false,
      allowanceFallback: 10_000,
      expiresAt: 1_767_230_000,
      batchId: 'b1a2',
      usageTtlSeconds: 34_560_000,
      admissionDeadlineMs: 30_000,
      recordHead: '1767225600123|1|a|b|w1,w2,w3|1,2,0|',
      windowLimits: [100, 6000, 1],
      windowCosts: [1, 2, 0],
      eventIdList: 'evt_1,evt 2 with spaces,évt_3,42',
      hexList: '64696765737430303031,64696765737430303032,64696765737430303033,64696765737430303034',
      digestList: Buffer.from('digest0001digest0002digest0003digest0004'),
    },
    {
      // No windows and no eventIds: the count of an empty list, then an empty rest.
      epochKey: k('epoch'),
      allowanceKey: k('allowance'),
      accountUsageKey: k('account'),
      workspaceUsageKey: k('workspace'),
      metaKeys: periodKeys('dm'),
      legacyKeys: periodKeys('dd'),
      committedKeys: periodKeys('dc'),
      recordKeys: periodKeys('ib'),
      windowKeys: [],
      cachedEpoch: '',
      nowMs: 0,
      windowMs: 60_000,
      bucketMs: 1_000,
      sandbox: false,
      quotaEnforced: true,
      allowanceFallback: 0,
      expiresAt: 1,
      batchId: '',
      usageTtlSeconds: 1,
      admissionDeadlineMs: 0,
      recordHead: '',
      windowLimits: [],
      windowCosts: [],
      eventIdList: '',
      hexList: '',
      digestList: Buffer.alloc(0),
    },
  ];
  const connectionCheck: ScriptInput<typeof LAYOUTS.CONNECTION_CHECK>[] = [
    {
      epochKey: k('epoch'),
      windowKey: k('check'),
      cachedEpoch: '12',
      nowMs: 1_767_225_600_999,
      windowMs: 60_000,
      bucketMs: 1_000,
      limit: 60,
    },
  ];
  const durable: ScriptInput<typeof LAYOUTS.DURABLE>[] = [
    {
      recordKey: k('ib'),
      committedKey: k('dc'),
      expiresAt: 1_767_230_000,
      batchIds: Array.from({ length: 200 }, (_, index) => `batch${index}`),
    },
    { recordKey: k('ib'), committedKey: k('dc'), expiresAt: 5, batchIds: [] },
  ];
  const release: ScriptInput<typeof LAYOUTS.RELEASE>[] = [
    {
      recordKey: k('ib'),
      dedupKey: k('dd'),
      accountUsageKey: k('account'),
      workspaceUsageKey: k('workspace'),
      windowKeys: [k('w1'), k('w2')],
      batchId: 'b9',
      record: 'x|y|z',
    },
    {
      recordKey: k('ib'),
      dedupKey: k('dd'),
      accountUsageKey: k('account'),
      workspaceUsageKey: k('workspace'),
      windowKeys: [],
      batchId: 'b9',
      record: '',
    },
  ];

  it.each(admit.map((input, index) => ({ index, input })))('ADMIT ($index)', async ({ input }) => {
    expect(await echo(LAYOUTS.ADMIT, LAYOUTS.ADMIT.build(input))).toStrictEqual(expected(LAYOUTS.ADMIT, input));
  });
  it.each(connectionCheck.map((input, index) => ({ index, input })))('CONNECTION_CHECK ($index)', async ({ input }) => {
    expect(await echo(LAYOUTS.CONNECTION_CHECK, LAYOUTS.CONNECTION_CHECK.build(input))).toStrictEqual(
      expected(LAYOUTS.CONNECTION_CHECK, input),
    );
  });
  it.each(durable.map((input, index) => ({ index, input })))('DURABLE ($index)', async ({ input }) => {
    expect(await echo(LAYOUTS.DURABLE, LAYOUTS.DURABLE.build(input))).toStrictEqual(expected(LAYOUTS.DURABLE, input));
  });
  it.each(release.map((input, index) => ({ index, input })))('RELEASE ($index)', async ({ input }) => {
    expect(await echo(LAYOUTS.RELEASE, LAYOUTS.RELEASE.build(input))).toStrictEqual(expected(LAYOUTS.RELEASE, input));
  });

  it("every script starts with its layout's preamble, and every script has a layout", () => {
    expect(Object.keys(LAYOUTS).sort()).toEqual(Object.keys(SCRIPTS).sort());
    for (const name of Object.keys(SCRIPTS) as (keyof typeof SCRIPTS)[])
      expect(SCRIPTS[name].source.startsWith(LAYOUTS[name].preamble)).toBe(true);
  });

  it('reads counted lists between other slots, and each kind in fields and lists', async () => {
    const layout = new ScriptLayout(
      [key('first'), keyList('pair', 2), keyList('rest')],
      [
        arg.list('counts', 'number'),
        arg.flag('on'),
        arg.list('sets', 'flag'),
        arg.numberText('at'),
        arg.list('texts', 'numberText', 2),
        arg.list('strings', 'string'),
        arg.list('tail', 'number'),
      ],
      { done: 0, failedHard: -7 },
    );
    const input: ScriptInput<typeof layout> = {
      first: k('f'),
      pair: [k('p1'), k('p2')],
      rest: [k('r1'), k('r2'), k('r3')],
      counts: [3, -1.5, 0],
      on: false,
      sets: [true, false, true],
      at: 1_767_225_600_123,
      texts: [0, 12.5],
      strings: ['x', '', 'y'],
      tail: [1, 2, 3],
    };
    expect(await echo(layout, layout.build(input))).toStrictEqual(expected(layout, input));
    const empty: ScriptInput<typeof layout> = { ...input, rest: [], counts: [], sets: [], strings: [], tail: [] };
    expect(await echo(layout, layout.build(empty))).toStrictEqual(expected(layout, empty));
  });

  it('refuses a layout whose names cannot be Lua locals or positions, and a fixed-length list of another length', () => {
    expect(() => new ScriptLayout([key('end')], [])).toThrow(/Lua local/);
    expect(() => new ScriptLayout([key('a')], [arg.number('a')])).toThrow(/twice/);
    expect(() => new ScriptLayout([keyList('some'), key('after')], [])).toThrow(/last list of KEYS/);
    const layout = new ScriptLayout([keyList('two', 2)], []);
    expect(() => layout.build({ two: ['only one'] })).toThrow(/needs 2 values/);
  });
});

describe('CONNECTION_CHECK', () => {
  function credential(): IngestCredential {
    const id = unique();
    return {
      connectionId: `int_${id}`,
      connectionKey: `svc_conn_v1.${id}`,
      workspaceId: `ws_${id}`,
      accountId: `acct_${id}`,
      tenantId: `ten_${id}`,
      environmentId: `env_${id}`,
      mode: 'sandbox',
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

  /** The connection check as it was before it had its script: ADMIT with one window, no eventIds and no quota. */
  async function checkWithAdmit(cred: IngestCredential, windowKey: string, limit: number, nowMs: number) {
    const periods = Array.from({ length: DEDUP_PERIODS }, (_, back) => 100 - back);
    const { keys, args } = admitCall({
      epochKey: RedisKeys.credentialEpoch(cred.accountId, cred.connectionId),
      allowanceKey: RedisKeys.sandboxAllowanceLimit(cred.accountId),
      accountUsageKey: RedisKeys.sandboxMonthlyUsage(cred.accountId, '2026-01'),
      workspaceUsageKey: RedisKeys.workspaceMonthlyUsage(cred.accountId, cred.workspaceId, '2026-01', cred.mode),
      metaKeys: periods.map((period) => IngestKeys.eventIdMeta(cred.accountId, cred.connectionId, period)),
      legacyKeys: periods.map((period) => IngestKeys.eventIds(cred.accountId, cred.connectionId, period)),
      committedKeys: periods.map((period) => IngestKeys.committedBatches(cred.accountId, period)),
      recordKeys: periods.map((period) => IngestKeys.admissionRecords(cred.accountId, period)),
      windows: [{ key: windowKey, limit, cost: 1 }],
      cachedEpoch: cred.epoch,
      nowMs,
      windowMs: WINDOW_MS,
      bucketMs: BUCKET_MS,
      sandbox: false,
      quotaEnforced: false,
      allowanceFallback: 1000,
      expiresAt: Math.floor(nowMs / 1000) + 3600,
      batchId: '',
      usageTtlSeconds: 3600,
      admissionDeadlineMs: 30_000,
      eventIds: [],
    });
    const outcome = admitOutcome((await SCRIPTS.ADMIT.run(redis, keys, args)) as unknown[], 0);
    if (outcome.kind === 'admitted') return { kind: 'ok' };
    if (outcome.kind === 'rate_limited') return { kind: 'rate_limited', retryMs: outcome.retryMs };
    return outcome;
  }

  async function check(cred: IngestCredential, windowKey: string, limit: number, nowMs: number) {
    const { keys, args } = connectionCheckCall({
      epochKey: RedisKeys.credentialEpoch(cred.accountId, cred.connectionId),
      windowKey,
      cachedEpoch: cred.epoch,
      nowMs,
      windowMs: WINDOW_MS,
      bucketMs: BUCKET_MS,
      limit,
    });
    return connectionCheckOutcome((await SCRIPTS.CONNECTION_CHECK.run(redis, keys, args)) as unknown[]);
  }

  /** A window hash and whether it expires, to compare two windows' states. */
  async function windowState(windowKey: string) {
    const ttl = await redis.pttl(windowKey);
    return { fields: await redis.hgetall(windowKey), expiry: ttl > 0 ? 'set' : ttl };
  }

  // Times after a start: within a bucket, across buckets, to the window's edge and past it, and a gap of several windows.
  const steps = [
    0, 0, 10, 400, 999, 1_000, 1_001, 2_500, 30_000, 58_999, 59_000, 59_999, 60_000, 60_001, 61_000, 61_500, 90_000, 119_999, 120_000,
    121_000, 500_000, 500_001, 500_002, 500_003, 501_000, 559_000, 560_000, 560_000, 560_500,
  ];

  it.each([1, 2, 3, 5])('answers and counts as ADMIT did with placeholders, at limit %i', async (limit) => {
    const cred = credential();
    const viaAdmit = IngestKeys.connectionChecks(cred.accountId, `${cred.connectionKey}.admit`);
    const viaCheck = IngestKeys.connectionChecks(cred.accountId, `${cred.connectionKey}.check`);
    const start = Math.floor(Date.now() / BUCKET_MS) * BUCKET_MS + 250;
    for (const step of steps) {
      const [before, after] = [await checkWithAdmit(cred, viaAdmit, limit, start + step), await check(cred, viaCheck, limit, start + step)];
      expect({ step, outcome: after }).toStrictEqual({ step, outcome: before });
      expect({ step, window: await windowState(viaCheck) }).toStrictEqual({ step, window: await windowState(viaAdmit) });
    }
    // A window lives a window and a bucket past its newest bucket's first count.
    expect(await redis.pttl(viaCheck)).toBeGreaterThan(WINDOW_MS);
    expect(await redis.pttl(viaCheck)).toBeLessThanOrEqual(WINDOW_MS + BUCKET_MS);
    await redis.del(viaAdmit, viaCheck);
  });

  it('refuses a stale cached epoch before it counts, as ADMIT did', async () => {
    const cred = { ...credential(), epoch: '3' };
    const windowKey = IngestKeys.connectionChecks(cred.accountId, cred.connectionKey);
    expect(await check(cred, windowKey, 5, Date.now())).toEqual({ kind: 'stale_credential' });
    expect(await checkWithAdmit(cred, windowKey, 5, Date.now())).toEqual({ kind: 'stale_credential' });
    await redis.set(RedisKeys.credentialEpoch(cred.accountId, cred.connectionId), '3');
    expect(await redis.exists(windowKey)).toBe(0);
    expect(await check(cred, windowKey, 5, Date.now())).toEqual({ kind: 'ok' });
    expect(await check({ ...cred, epoch: '4' }, windowKey, 5, Date.now())).toEqual({ kind: 'stale_credential' });
    expect(await redis.hget(windowKey, 's')).toBe('1');
    await redis.del(windowKey, RedisKeys.credentialEpoch(cred.accountId, cred.connectionId));
  });

  it("Admission.checkConnection runs CONNECTION_CHECK on the epoch key and the client's window only, with the configured budget", async () => {
    const admission = new Admission(redis, { ...config, ingest: { ...config.ingest, connectionChecksPerMin: 2 } });
    const cred = credential();
    const windowKey = IngestKeys.connectionChecks(cred.accountId, cred.connectionKey);
    const calls: { script: string; keys: string[] }[] = [];
    for (const [name, script] of Object.entries(SCRIPTS)) {
      const run = script.run.bind(script);
      vi.spyOn(script, 'run').mockImplementation(async (client, keys, args) => {
        calls.push({ script: name, keys: [...keys] });
        return run(client, keys, args);
      });
    }
    const nowMs = Date.now();
    expect(await admission.checkConnection(cred, nowMs)).toEqual({ kind: 'ok' });
    expect(await admission.checkConnection(cred, nowMs + 1)).toEqual({ kind: 'ok' });
    expect(await admission.checkConnection(cred, nowMs + 2)).toEqual({ kind: 'rate_limited', retryAfterSeconds: 60 });
    const keys = [RedisKeys.credentialEpoch(cred.accountId, cred.connectionId), windowKey];
    expect(calls).toEqual(Array.from({ length: 3 }, () => ({ script: 'CONNECTION_CHECK', keys })));
    expect(await redis.hget(windowKey, 's')).toBe('2');
    await redis.del(windowKey);
  });
});
