import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { advanceTestClock, resetTestClock } from '../shared/clock.js';
import { newId } from '../shared/ids.js';
import { RedisKeys } from '../shared/redis.js';
import { usagePeriodOf } from '../shared/usagePeriod.js';
import { bootstrapWorkspace, callWithSession, createTestContext, type TestContext } from './helpers/context.js';
import { addAccountMember, addWorkspaceMember, createConsoleUser } from './helpers/consoleUsers.js';

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(async () => {
  await ctx.close();
});

describe('usage periods', () => {
  it('are UTC calendar months', () => {
    expect(usagePeriodOf(new Date('2025-12-31T23:59:59.999Z'))).toEqual({
      period: '2025-12',
      periodStart: new Date('2025-12-01T00:00:00.000Z'),
      resetAt: new Date('2026-01-01T00:00:00.000Z'),
    });
    expect(usagePeriodOf(new Date('2026-02-01T00:00:00.000Z')).period).toBe('2026-02');
  });
});

describe('GET /billing-accounts', () => {
  it('lists the accounts the user owns or administers with active workspace counts', async () => {
    const boot = await bootstrapWorkspace(ctx);
    const other = await bootstrapWorkspace(ctx);
    await addAccountMember(ctx, other.account.id, boot.user.id, 'admin');
    await callWithSession(ctx, other.sessionToken, 'POST', `/workspaces/${other.workspace.slug}/archive`);
    const stranger = await bootstrapWorkspace(ctx);
    await addWorkspaceMember(ctx, stranger.workspace.id, boot.user.id, 'owner');

    const res = await callWithSession(ctx, boot.sessionToken, 'GET', '/billing-accounts');
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    const { accounts } = res.json();
    expect(accounts).toHaveLength(2);
    expect(accounts).toContainEqual({
      id: boot.account.id,
      name: expect.any(String),
      plan: 'developer',
      status: 'active',
      role: 'owner',
      activeWorkspaceCount: 1,
      workspaceLimit: 3,
    });
    expect(accounts).toContainEqual(expect.objectContaining({ id: other.account.id, role: 'admin', activeWorkspaceCount: 0 }));
  });

  it('gives a user without accounts an empty list; needs a verified session', async () => {
    const user = await createConsoleUser(ctx);
    expect((await callWithSession(ctx, user.sessionToken, 'GET', '/billing-accounts')).json()).toEqual({ accounts: [] });
    expect((await callWithSession(ctx, null, 'GET', '/billing-accounts')).statusCode).toBe(401);
    const unverified = await createConsoleUser(ctx, { verified: false });
    const res = await callWithSession(ctx, unverified.sessionToken, 'GET', '/billing-accounts');
    expect(res.statusCode).toBe(403);
    expect(res.json()).toEqual({ error: 'email_verification_required' });
  });
});

describe('GET /billing-accounts/{accountId}/usage', () => {
  async function accountWithTwoWorkspaces() {
    const boot = await bootstrapWorkspace(ctx);
    const second = await callWithSession(ctx, boot.sessionToken, 'POST', '/workspaces', {
      body: { name: 'Second', slug: `second-${newId('ws_').slice(-10)}` },
    });
    expect(second.statusCode).toBe(201);
    return { boot, second: second.json().workspace as { id: string; slug: string } };
  }

  it('reports the month total from the ingest counters, the default limit and per-workspace contributions', async () => {
    const { boot, second } = await accountWithTwoWorkspaces();
    const { period, periodStart, resetAt } = usagePeriodOf(ctx.deps.clock.now());
    await ctx.deps.redis.set(RedisKeys.sandboxMonthlyUsage(boot.account.id, period), '1234');
    await ctx.deps.redis.set(RedisKeys.workspaceMonthlyUsage(boot.account.id, boot.workspace.id, period, 'sandbox'), '1000');
    await ctx.deps.redis.set(RedisKeys.workspaceMonthlyUsage(boot.account.id, second.id, period, 'sandbox'), '234');
    await ctx.deps.redis.set(RedisKeys.workspaceMonthlyUsage(boot.account.id, second.id, period, 'live'), '99');
    await ctx.deps.redis.set(RedisKeys.sandboxMonthlyUsage(boot.account.id, '1999-01'), '5');

    const res = await callWithSession(ctx, boot.sessionToken, 'GET', `/billing-accounts/${boot.account.id}/usage`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    const limit = ctx.deps.config.limits.sandboxMonthlyAllowance;
    expect(res.json()).toEqual({
      accountId: boot.account.id,
      period,
      periodStart: periodStart.toISOString(),
      resetAt: resetAt.toISOString(),
      mode: 'sandbox',
      total: 1234,
      limit,
      remaining: limit - 1234,
      workspaces: [
        { workspaceId: boot.workspace.id, slug: boot.workspace.slug, total: 1000 },
        { workspaceId: second.id, slug: second.slug, total: 234 },
      ],
    });
    expect(res.json().periodStart).toMatch(/^\d{4}-\d{2}-01T00:00:00\.000Z$/);
  });

  it('uses the account allowance and never reports a negative remainder; empty counters are 0', async () => {
    const { boot } = await accountWithTwoWorkspaces();
    await ctx.deps.pool.query('UPDATE accounts SET sandbox_monthly_allowance = 1000 WHERE id = $1', [boot.account.id]);
    const empty = await callWithSession(ctx, boot.sessionToken, 'GET', `/billing-accounts/${boot.account.id}/usage`);
    expect(empty.json()).toMatchObject({ total: 0, limit: 1000, remaining: 1000 });
    expect(empty.json().workspaces.map((w: { total: number }) => w.total)).toEqual([0, 0]);
    const { period } = usagePeriodOf(ctx.deps.clock.now());
    await ctx.deps.redis.set(RedisKeys.sandboxMonthlyUsage(boot.account.id, period), '1500');
    const over = await callWithSession(ctx, boot.sessionToken, 'GET', `/billing-accounts/${boot.account.id}/usage`);
    expect(over.json()).toMatchObject({ total: 1500, limit: 1000, remaining: 0 });
  });

  it('follows the service clock into the next UTC month', async () => {
    const { boot } = await accountWithTwoWorkspaces();
    const now = ctx.deps.clock.now();
    await ctx.deps.redis.set(RedisKeys.sandboxMonthlyUsage(boot.account.id, usagePeriodOf(now).period), '10');
    const next = usagePeriodOf(usagePeriodOf(now).resetAt);
    try {
      await advanceTestClock(ctx.deps.redis, usagePeriodOf(now).resetAt.getTime() - now.getTime() + 60_000);
      const res = await callWithSession(ctx, boot.sessionToken, 'GET', `/billing-accounts/${boot.account.id}/usage`);
      expect(res.json()).toMatchObject({
        period: next.period,
        periodStart: next.periodStart.toISOString(),
        resetAt: next.resetAt.toISOString(),
        total: 0,
      });
    } finally {
      await resetTestClock(ctx.deps.redis);
      await ctx.deps.clock.sync();
    }
  });

  it('answers 400 for a malformed id and 404 for unknown, foreign or merely workspace-member accounts', async () => {
    const boot = await bootstrapWorkspace(ctx);
    const foreign = await bootstrapWorkspace(ctx);
    await addWorkspaceMember(ctx, foreign.workspace.id, boot.user.id, 'owner');
    for (const id of ['acct_nope', newId('ws_'), 'x']) {
      const res = await callWithSession(ctx, boot.sessionToken, 'GET', `/billing-accounts/${id}/usage`);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({ error: 'invalid_billing_account_id' });
    }
    for (const id of [newId('acct_'), foreign.account.id]) {
      const res = await callWithSession(ctx, boot.sessionToken, 'GET', `/billing-accounts/${id}/usage`);
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({ error: 'account_not_found' });
    }
    const query = await callWithSession(ctx, boot.sessionToken, 'GET', `/billing-accounts/${boot.account.id}/usage?period=2020-01`);
    expect(query.statusCode).toBe(400);
    expect(query.json()).toEqual({ error: 'invalid_request' });
    expect((await callWithSession(ctx, null, 'GET', `/billing-accounts/${boot.account.id}/usage`)).statusCode).toBe(401);
  });
});
