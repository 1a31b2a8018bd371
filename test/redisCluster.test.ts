import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../shared/config.js';
import { newId } from '../shared/ids.js';
import { accountTag, connectRedis, isCluster, masterNodes, RedisKeys, type Redis } from '../shared/redis.js';
import { parseRedisTarget } from '../shared/redisTarget.js';
import { usagePeriodOf } from '../shared/usagePeriod.js';
import {
  advanceClock,
  bootstrapWorkspace,
  callWithSession,
  createTestContext,
  expectError,
  resetClockAndHooks,
  type TestContext,
} from './helpers/context.js';
import { createConsoleUser } from './helpers/consoleUsers.js';

// Runs in the vitest project `redis-cluster` only (vitest.config.ts): REDIS_CLUSTER_NODES names the
// three masters of this slot's cluster.
const clusterPorts = (process.env.REDIS_CLUSTER_NODES ?? '').split(',').map((node) => Number(node.split(':')[1]));

const keySlot = (redis: Redis, key: string): Promise<number> => redis.cluster('KEYSLOT', key) as Promise<number>;

/** The connection to the master that serves a key's slot. */
async function masterOf(redis: Redis, key: string): Promise<Redis> {
  const slot = await keySlot(redis, key);
  const ranges = await redis.cluster('SLOTS');
  const port = ranges.find(([from, to]) => from <= slot && slot <= to)?.[2][1];
  const master = masterNodes(redis).find((node) => node.options.port === port);
  if (!master) throw new Error(`no master serves slot ${slot}`);
  return master;
}

describe('Redis configuration', () => {
  const env = (vars: Record<string, string>) => ({ ...process.env, REDIS_URL: '', REDIS_CLUSTER_NODES: '', ...vars });

  it.each([
    ['REDIS_CLUSTER_NODES', { REDIS_CLUSTER_NODES: '127.0.0.1:7000, 127.0.0.1:7001' }, 'redis+cluster://127.0.0.1:7000,127.0.0.1:7001'],
    [
      'REDIS_CLUSTER_NODES over REDIS_URL',
      { REDIS_URL: 'redis://127.0.0.1:6379/3', REDIS_CLUSTER_NODES: 'localhost:7000' },
      'redis+cluster://localhost:7000',
    ],
    [
      'a redis+cluster:// REDIS_URL',
      { REDIS_URL: 'redis+cluster://user:secret@127.0.0.1:7000,127.0.0.1:7002' },
      'redis+cluster://user:secret@127.0.0.1:7000,127.0.0.1:7002',
    ],
    ['one server', { REDIS_URL: 'redis://127.0.0.1:6379/3' }, 'redis://127.0.0.1:6379/3'],
  ])('reads %s', (_label, vars, redisUrl) => {
    expect(loadConfig(env(vars)).redisUrl).toBe(redisUrl);
  });

  it.each([
    [{ REDIS_CLUSTER_NODES: '127.0.0.1' }, /^REDIS_CLUSTER_NODES: "127.0.0.1" is not host:port$/],
    [{ REDIS_CLUSTER_NODES: '127.0.0.1:70000' }, /^REDIS_CLUSTER_NODES: /],
    [{ REDIS_CLUSTER_NODES: ' , ' }, /^REDIS_CLUSTER_NODES: no host:port given$/],
    [{ REDIS_URL: 'redis+cluster://127.0.0.1:7000/1' }, /^REDIS_URL: a Redis Cluster URL takes no database number/],
    [{ REDIS_URL: 'http://127.0.0.1:7000' }, /^REDIS_URL must use redis:$/],
  ])('refuses %j at start-up', (vars, message) => {
    expect(() => loadConfig(env(vars))).toThrow(ConfigError);
    expect(() => loadConfig(env(vars))).toThrow(message);
  });

  it('takes percent-encoded credentials from a cluster URL', () => {
    expect(parseRedisTarget('redis+cluster://app:p%40ss@[::1]:7000,h:7001')).toEqual({
      kind: 'cluster',
      username: 'app',
      password: 'p@ss',
      nodes: [
        { host: '::1', port: 7000 },
        { host: 'h', port: 7001 },
      ],
    });
    expect(parseRedisTarget('redis+cluster://:only-password@h:7000')).toEqual({
      kind: 'cluster',
      password: 'only-password',
      nodes: [{ host: 'h', port: 7000 }],
    });
  });
});

describe('connectRedis on the Redis Cluster', () => {
  let redis: Redis;
  beforeAll(async () => {
    redis = await connectRedis(loadConfig().redisUrl);
  });
  afterAll(() => {
    redis.disconnect();
  });

  it('reaches the three masters of a healthy cluster that covers every slot', async () => {
    expect(clusterPorts).toHaveLength(3);
    expect(isCluster(redis)).toBe(true);
    const masters = masterNodes(redis);
    expect(masters.map((node) => node.options.port).sort((a, b) => (a ?? 0) - (b ?? 0))).toEqual(clusterPorts);
    for (const master of masters) {
      const info = (await master.cluster('INFO')) as string;
      expect(info).toMatch(/^cluster_state:ok\r$/m);
      expect(info).toMatch(/^cluster_slots_assigned:16384\r$/m);
      expect(info).toMatch(/^cluster_size:3\r$/m);
      const nodes = ((await master.cluster('NODES')) as string).trim().split('\n');
      expect(nodes.filter((line) => / master /.test(line) || / myself,master /.test(line))).toHaveLength(3);
    }
  });

  it('runs a script over several keys of one hash tag, on the master that owns their slot', async () => {
    const tag = accountTag(newId('acct_'));
    const keys = ['a', 'b', 'c'].map((name) => `cluster_test:${tag}:${name}`);
    const slots = await Promise.all(keys.map((key) => keySlot(redis, key)));
    expect(new Set(slots).size).toBe(1);

    const script = "local sum = 0 for i, key in ipairs(KEYS) do sum = sum + redis.call('INCRBY', key, ARGV[i]) end return sum";
    expect(await redis.eval(script, keys.length, ...keys, 1, 20, 300)).toBe(321);
    expect(await Promise.all(keys.map((key) => redis.get(key)))).toEqual(['1', '20', '300']);

    // Only the slot's master holds them: the others answer MOVED.
    const owner = await masterOf(redis, keys[0]);
    expect(await owner.get(keys[2])).toBe('300');
    for (const other of masterNodes(redis).filter((node) => node !== owner)) await expect(other.get(keys[2])).rejects.toThrow(/^MOVED /);
  });

  it.each([
    ['a script', (r: Redis, keys: string[]) => r.eval("return redis.call('SET', KEYS[1], '1')", keys.length, ...keys)],
    ['MGET', (r: Redis, keys: string[]) => r.mget(...keys)],
  ])('refuses %s over keys of two slots with CROSSSLOT, through the cluster client and on a master', async (_label, run) => {
    const id = newId('acct_');
    const keys = [`cluster_test:${id}:a`, `cluster_test:${id}:b`];
    expect(await keySlot(redis, keys[0])).not.toBe(await keySlot(redis, keys[1]));
    // Through the cluster client (no auto-pipelining on a cluster: shared/redis.ts) and sent straight to a master alike.
    await expect(run(redis, keys)).rejects.toThrow(/^CROSSSLOT /);
    await expect(run(await masterOf(redis, keys[0]), keys)).rejects.toThrow(/^CROSSSLOT /);
    expect(await redis.exists(keys[0])).toBe(0);
  });
});

describe('the management plane on the Redis Cluster', () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await createTestContext();
  });
  afterAll(async () => {
    await resetClockAndHooks(ctx);
    await ctx.close();
  });

  it('is ready, with Redis answering', async () => {
    expect(isCluster(ctx.deps.redis)).toBe(true);
    const res = await ctx.app.inject({ method: 'GET', url: '/readyz' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ status: 'ready', redis: true });
  });

  it('rate-limits workspace creations in a sliding window kept in the cluster, on the test clock kept there too', async () => {
    const user = await createConsoleUser(ctx);
    const configured = ctx.deps.config.workspaceCreationsPerHour;
    ctx.deps.config.workspaceCreationsPerHour = 1;
    const create = () =>
      callWithSession(ctx, user.sessionToken, 'POST', '/workspaces', {
        body: { name: 'Clustered', slug: `clustered-${newId('ws_').slice(-10)}` },
      });
    try {
      expect((await create()).statusCode).toBe(201);
      expectError(await create(), 429, 'workspace_creation_rate_limited');
      expect(await ctx.deps.redis.zcard(RedisKeys.workspaceCreations(user.userId))).toBe(1);
      await advanceClock(ctx, 3600 * 1000);
      expect((await create()).statusCode).toBe(201);
    } finally {
      ctx.deps.config.workspaceCreationsPerHour = configured;
    }
  });

  it('reads an account usage from counters of one hash tag in one MGET', async () => {
    const boot = await bootstrapWorkspace(ctx);
    const { period } = usagePeriodOf(ctx.deps.clock.now());
    await ctx.deps.redis.set(RedisKeys.sandboxMonthlyUsage(boot.account.id, period), '70');
    await ctx.deps.redis.set(RedisKeys.workspaceMonthlyUsage(boot.account.id, boot.workspace.id, period, 'sandbox'), '70');
    const res = await callWithSession(ctx, boot.sessionToken, 'GET', `/billing-accounts/${boot.account.id}/usage`);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ total: 70, workspaces: [{ workspaceId: boot.workspace.id, total: 70 }] });
  });
});
