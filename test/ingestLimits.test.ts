import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setAllowanceCommand } from '../management/admin/commands.js';
import { RedisKeys } from '../shared/redis.js';
import { usagePeriodOf } from '../shared/usagePeriod.js';
import type { ClickHouseClient } from '../shared/clickhouse/client.js';
import { IngestKeys } from '../ingest/admission/keys.js';
import { bootstrapWorkspace, callWithKey, createTestContext, newIdempotencyKey, type TestContext } from './helpers/context.js';
import {
  ManualClock,
  countObservations,
  createCollector,
  envelope,
  sendEnvelopes,
  startEdge,
  testClickHouse,
  type Collector,
  type Edge,
  type EdgeAnswer,
} from './helpers/ingest.js';

// Document 03 Limits and Errors/Ingestion: sliding windows per Integration, workspace and
// Sandbox account, the Sandbox monthly allowance, and what counts as attempted work. Each test
// uses a fresh account (every bootstrap makes one) so budgets never leak between tests.

let ctx: TestContext;
let clickhouse: ClickHouseClient;
let edge: Edge;

beforeAll(async () => {
  ctx = await createTestContext();
  clickhouse = testClickHouse(ctx);
  edge = await startEdge(ctx, clickhouse);
});
afterAll(async () => {
  await edge.close();
  await clickhouse.close();
  await ctx.close();
});

async function withEdge<T>(overrides: Parameters<typeof startEdge>[2], run: (edge: Edge) => Promise<T>): Promise<T> {
  const own = await startEdge(ctx, clickhouse, overrides);
  try {
    return await run(own);
  } finally {
    await own.close();
  }
}

function expectRetryAfter(res: EdgeAnswer, min = 1, max = 60): number {
  const value = Number(res.headers.get('retry-after'));
  expect(Number.isInteger(value)).toBe(true);
  expect(value).toBeGreaterThanOrEqual(min);
  expect(value).toBeLessThanOrEqual(max);
  return value;
}

/** The sum of a window's bucket fields; also checks that the window's running sum `s` agrees. */
async function windowSum(key: string): Promise<number> {
  const { s: runningSum, o: _oldest, ...buckets } = await ctx.deps.redis.hgetall(key);
  const sum = Object.values(buckets).reduce((total, value) => total + Number(value), 0);
  expect(Number(runningSum ?? 0)).toBe(sum);
  return sum;
}

const eventIdsOf = (items: Record<string, unknown>[]) => items.map((item) => item.eventId as string);

describe('Sandbox per admission account (1,000 envelopes and 100 requests per minute)', () => {
  it('answers the 101st request in a minute with 429 sandbox_request_rate_limited and stores nothing of it', async () => {
    const boot = await bootstrapWorkspace(ctx);
    const collector = await createCollector(ctx, boot.apiKey.key);
    for (let index = 0; index < 100; index += 1) {
      const res = await sendEnvelopes(edge, collector, [envelope(collector)]);
      expect(res.status, `request ${index + 1}`).toBe(202);
    }
    const windowBefore = await windowSum(IngestKeys.sandboxAccountRequests(boot.account.id));
    const refused = [envelope(collector), envelope(collector)];
    const res = await sendEnvelopes(edge, collector, refused);
    expect(res.status).toBe(429);
    expect(res.body).toEqual({ error: 'sandbox_request_rate_limited' });
    expectRetryAfter(res);
    expect(await countObservations(clickhouse, collector.connectionId, eventIdsOf(refused))).toBe(0);
    expect(await countObservations(clickhouse, collector.connectionId)).toBe(100);
    // A refused batch is not counted, so the client can recover once the window moves on.
    expect(await windowSum(IngestKeys.sandboxAccountRequests(boot.account.id))).toBe(windowBefore);
    // The budget is the account's: another Sandbox Integration of the account is refused too,
    // while Live traffic of the same account is not under the Sandbox budget.
    const sibling = await createCollector(ctx, boot.apiKey.key, { name: 'Sibling' });
    expect((await sendEnvelopes(edge, sibling, [envelope(sibling)])).status).toBe(429);
    const live = await createCollector(ctx, boot.apiKey.key, { mode: 'live', name: 'Live twin' });
    expect((await sendEnvelopes(edge, live, [envelope(live)])).status).toBe(202);
  });

  it('counts invalid and duplicate items as submitted envelopes: 429 sandbox_observation_rate_limited after 1,000', async () => {
    const boot = await bootstrapWorkspace(ctx);
    const collector = await createCollector(ctx, boot.apiKey.key);
    const batch = Array.from({ length: 50 }, () => envelope(collector));
    for (let index = 0; index < 10; index += 1) expect((await sendEnvelopes(edge, collector, batch)).status).toBe(202);
    const invalid = Array.from({ length: 50 }, () => envelope(collector, { eventType: '' }));
    for (let index = 0; index < 10; index += 1) expect((await sendEnvelopes(edge, collector, invalid)).status).toBe(207);
    expect(await windowSum(IngestKeys.sandboxAccountEnvelopes(boot.account.id))).toBe(1000);
    const extra = envelope(collector);
    const res = await sendEnvelopes(edge, collector, [extra]);
    expect(res.status).toBe(429);
    expect(res.body).toEqual({ error: 'sandbox_observation_rate_limited' });
    expectRetryAfter(res);
    expect(await countObservations(clickhouse, collector.connectionId)).toBe(50);
  });

  it('counts empty batches as requests', async () => {
    await withEdge({ limits: { sandboxAccountRequestsPerMin: 5 } }, async (limited) => {
      const boot = await bootstrapWorkspace(ctx);
      const collector = await createCollector(ctx, boot.apiKey.key);
      for (let index = 0; index < 5; index += 1) expect((await sendEnvelopes(limited, collector, [])).status).toBe(202);
      const res = await sendEnvelopes(limited, collector, []);
      expect(res.status).toBe(429);
      expect(res.body).toEqual({ error: 'sandbox_request_rate_limited' });
    });
  });

  it('slides: Retry-After tells when the oldest counted work leaves the window, then the same batch is admitted', async () => {
    const clock = new ManualClock();
    await withEdge({ limits: { sandboxAccountRequestsPerMin: 3 }, clock }, async (timed) => {
      const boot = await bootstrapWorkspace(ctx);
      const collector = await createCollector(ctx, boot.apiKey.key);
      for (let index = 0; index < 3; index += 1) expect((await sendEnvelopes(timed, collector, [envelope(collector)])).status).toBe(202);
      const refused = [envelope(collector), envelope(collector)];
      const first = await sendEnvelopes(timed, collector, refused);
      expect(first.status).toBe(429);
      expectRetryAfter(first, 58, 60);
      clock.advance(30_000);
      const later = await sendEnvelopes(timed, collector, refused);
      expect(later.status).toBe(429);
      expectRetryAfter(later, 28, 30);
      clock.advance(31_000);
      // Nothing of the refused batch was admitted before: it is new now, not a duplicate.
      const admitted = await sendEnvelopes(timed, collector, refused);
      expect(admitted.status).toBe(202);
      expect(admitted.body).toMatchObject({ accepted: 2, persisted: 2 });
      expect(await countObservations(clickhouse, collector.connectionId)).toBe(5);
    });
  });
});

describe('per Integration (600 requests, 6,000 attempted observations per minute) and per workspace (30,000)', () => {
  it('answers the 601st request of an Integration with 429 workload_rate_limited; a rotation does not reset it', async () => {
    const boot = await bootstrapWorkspace(ctx);
    const collector = await createCollector(ctx, boot.apiKey.key, { mode: 'live' });
    for (let index = 0; index < 600; index += 1) {
      const res = await sendEnvelopes(edge, collector, []);
      expect(res.status, `request ${index + 1}`).toBe(202);
    }
    const refused = [envelope(collector)];
    const res = await sendEnvelopes(edge, collector, refused);
    expect(res.status).toBe(429);
    expect(res.body).toEqual({ error: 'workload_rate_limited' });
    expectRetryAfter(res);
    expect(await countObservations(clickhouse, collector.connectionId)).toBe(0);
    const connection = await callWithKey(ctx, boot.apiKey.key, 'GET', `/v1/connections/${collector.connectionId}`);
    const rotated = await callWithKey(ctx, boot.apiKey.key, 'POST', `/v1/connections/${collector.connectionId}/credentials/rotate`, {
      idempotencyKey: newIdempotencyKey(),
      body: { expectedRevision: connection.json().revision },
    });
    const renewed: Collector = { ...collector, ingestToken: rotated.json().ingestToken };
    const afterRotation = await sendEnvelopes(edge, renewed, refused);
    expect(afterRotation.status).toBe(429);
    expect(afterRotation.body).toEqual({ error: 'workload_rate_limited' });
    // Another Integration of the workspace has its own request budget.
    const other = await createCollector(ctx, boot.apiKey.key, { mode: 'live', name: 'Other' });
    expect((await sendEnvelopes(edge, other, [envelope(other)])).status).toBe(202);
  });

  it('counts attempted observations per Integration', async () => {
    await withEdge({ limits: { integrationObservationsPerMin: 100 } }, async (limited) => {
      const boot = await bootstrapWorkspace(ctx);
      const collector = await createCollector(ctx, boot.apiKey.key, { mode: 'live' });
      const batch = Array.from({ length: 50 }, () => envelope(collector));
      expect((await sendEnvelopes(limited, collector, batch)).status).toBe(202);
      expect((await sendEnvelopes(limited, collector, batch)).status).toBe(202);
      const res = await sendEnvelopes(limited, collector, [envelope(collector)]);
      expect(res.status).toBe(429);
      expect(res.body).toEqual({ error: 'workload_rate_limited' });
      expectRetryAfter(res);
      expect(await countObservations(clickhouse, collector.connectionId)).toBe(50);
    });
  });

  it('pools attempted observations of all Integrations of a workspace', async () => {
    await withEdge({ limits: { workspaceObservationsPerMin: 100 } }, async (limited) => {
      const boot = await bootstrapWorkspace(ctx);
      const first = await createCollector(ctx, boot.apiKey.key, { mode: 'live', name: 'First' });
      const second = await createCollector(ctx, boot.apiKey.key, { mode: 'live', name: 'Second' });
      expect(
        (
          await sendEnvelopes(
            limited,
            first,
            Array.from({ length: 50 }, () => envelope(first)),
          )
        ).status,
      ).toBe(202);
      expect(
        (
          await sendEnvelopes(
            limited,
            second,
            Array.from({ length: 50 }, () => envelope(second)),
          )
        ).status,
      ).toBe(202);
      for (const collector of [first, second]) {
        const res = await sendEnvelopes(limited, collector, [envelope(collector)]);
        expect(res.status).toBe(429);
        expect(res.body).toEqual({ error: 'workload_rate_limited' });
      }
      const otherWorkspace = await bootstrapWorkspace(ctx);
      const outsider = await createCollector(ctx, otherWorkspace.apiKey.key, { mode: 'live' });
      expect((await sendEnvelopes(limited, outsider, [envelope(outsider)])).status).toBe(202);
    });
  });

  it('shares windows across edge processes (the budget lives in Redis)', async () => {
    await withEdge({ limits: { integrationRequestsPerMin: 3 } }, async (a) => {
      await withEdge({ limits: { integrationRequestsPerMin: 3 } }, async (b) => {
        const boot = await bootstrapWorkspace(ctx);
        const collector = await createCollector(ctx, boot.apiKey.key, { mode: 'live' });
        expect((await sendEnvelopes(a, collector, [])).status).toBe(202);
        expect((await sendEnvelopes(b, collector, [])).status).toBe(202);
        expect((await sendEnvelopes(a, collector, [])).status).toBe(202);
        expect((await sendEnvelopes(b, collector, [])).status).toBe(429);
      });
    });
  });

  it('refuses a batch that exceeds the budget on its own with Retry-After of the whole window', async () => {
    await withEdge({ limits: { integrationObservationsPerMin: 10 } }, async (limited) => {
      const boot = await bootstrapWorkspace(ctx);
      const collector = await createCollector(ctx, boot.apiKey.key, { mode: 'live' });
      const res = await sendEnvelopes(
        limited,
        collector,
        Array.from({ length: 11 }, () => envelope(collector)),
      );
      expect(res.status).toBe(429);
      expect(expectRetryAfter(res)).toBe(60);
    });
  });
});

describe('Sandbox monthly allowance (403 observation_monthly_quota_exhausted)', () => {
  const quotaBody = (now: Date) => ({
    error: 'observation_monthly_quota_exhausted',
    mode: 'sandbox',
    period: 'utc_calendar_month',
    resetAt: usagePeriodOf(now).resetAt.toISOString(),
    retryable: false,
    batchPersisted: 0,
  });

  it('persists nothing of a batch whose new observations do not wholly fit; duplicates never consume it', async () => {
    const boot = await bootstrapWorkspace(ctx);
    await setAllowanceCommand(ctx.deps, { account: boot.account.id, mode: 'sandbox', limit: 5 });
    const collector = await createCollector(ctx, boot.apiKey.key);
    const usageKey = RedisKeys.sandboxMonthlyUsage(boot.account.id, usagePeriodOf(new Date()).period);
    const firstBatch = [envelope(collector), envelope(collector), envelope(collector)];
    expect((await sendEnvelopes(edge, collector, firstBatch)).body).toMatchObject({ accepted: 3, persisted: 3 });

    const crossing = [envelope(collector), envelope(collector), envelope(collector)];
    const refused = await sendEnvelopes(edge, collector, crossing);
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual(quotaBody(new Date()));
    expect(refused.headers.get('retry-after')).toBeNull();
    expect(await countObservations(clickhouse, collector.connectionId, eventIdsOf(crossing))).toBe(0);
    expect(await ctx.deps.redis.get(usageKey)).toBe('3');

    expect((await sendEnvelopes(edge, collector, crossing.slice(0, 2))).body).toMatchObject({ accepted: 2, persisted: 2 });
    expect(await ctx.deps.redis.get(usageKey)).toBe('5');
    // The allowance is used up, yet duplicates (and rejected items) are still answered: they consume nothing.
    const resend = await sendEnvelopes(edge, collector, [...firstBatch, envelope(collector, { eventType: '' })]);
    expect(resend.status).toBe(207);
    expect(resend.body).toMatchObject({ accepted: 3, persisted: 0 });
    expect(await ctx.deps.redis.get(usageKey)).toBe('5');
    const oneMore = await sendEnvelopes(edge, collector, [...firstBatch, envelope(collector)]);
    expect(oneMore.status).toBe(403);
    expect(await countObservations(clickhouse, collector.connectionId)).toBe(5);
    const jobs = (await ctx.deps.redis.xrange(RedisKeys.analysisJobs, '-', '+')).filter(([, fields]) =>
      fields.includes(collector.connectionId),
    );
    expect(jobs).toHaveLength(2);
  });

  it('meters Live without rejection', async () => {
    const boot = await bootstrapWorkspace(ctx);
    await setAllowanceCommand(ctx.deps, { account: boot.account.id, mode: 'sandbox', limit: 1 });
    const live = await createCollector(ctx, boot.apiKey.key, { mode: 'live' });
    const res = await sendEnvelopes(edge, live, [envelope(live), envelope(live), envelope(live)]);
    expect(res.status).toBe(202);
    const period = usagePeriodOf(new Date()).period;
    expect(await ctx.deps.redis.get(RedisKeys.workspaceMonthlyUsage(boot.account.id, boot.workspace.id, period, 'live'))).toBe('3');
    expect(await ctx.deps.redis.get(RedisKeys.sandboxMonthlyUsage(boot.account.id, period))).toBeNull();
  });

  it('uses SANDBOX_MONTHLY_ALLOWANCE when the account has no allowance of its own', async () => {
    await withEdge({ limits: { sandboxMonthlyAllowance: 4 } }, async (limited) => {
      const boot = await bootstrapWorkspace(ctx);
      const collector = await createCollector(ctx, boot.apiKey.key);
      expect(
        (
          await sendEnvelopes(
            limited,
            collector,
            Array.from({ length: 5 }, () => envelope(collector)),
          )
        ).status,
      ).toBe(403);
      expect(
        (
          await sendEnvelopes(
            limited,
            collector,
            Array.from({ length: 4 }, () => envelope(collector)),
          )
        ).status,
      ).toBe(202);
    });
  });

  it('uses the allowance stored in PostgreSQL when Redis has lost its mirror', async () => {
    const boot = await bootstrapWorkspace(ctx);
    await setAllowanceCommand(ctx.deps, { account: boot.account.id, mode: 'sandbox', limit: 2 });
    await ctx.deps.redis.del(RedisKeys.sandboxAllowanceLimit(boot.account.id));
    const collector = await createCollector(ctx, boot.apiKey.key);
    const res = await sendEnvelopes(edge, collector, [envelope(collector), envelope(collector), envelope(collector)]);
    expect(res.status).toBe(403);
    expect((await sendEnvelopes(edge, collector, [envelope(collector), envelope(collector)])).status).toBe(202);
  });

  it('only meters while SANDBOX_QUOTA_ENFORCED is false', async () => {
    await withEdge({ limits: { sandboxQuotaEnforced: false } }, async (lenient) => {
      const boot = await bootstrapWorkspace(ctx);
      await setAllowanceCommand(ctx.deps, { account: boot.account.id, mode: 'sandbox', limit: 1 });
      const collector = await createCollector(ctx, boot.apiKey.key);
      expect((await sendEnvelopes(lenient, collector, [envelope(collector), envelope(collector), envelope(collector)])).status).toBe(202);
      expect(await ctx.deps.redis.get(RedisKeys.sandboxMonthlyUsage(boot.account.id, usagePeriodOf(new Date()).period))).toBe('3');
    });
  });

  it('resets with the UTC calendar month', async () => {
    const clock = new ManualClock();
    await withEdge({ clock }, async (timed) => {
      const boot = await bootstrapWorkspace(ctx);
      await setAllowanceCommand(ctx.deps, { account: boot.account.id, mode: 'sandbox', limit: 1 });
      const collector = await createCollector(ctx, boot.apiKey.key);
      expect((await sendEnvelopes(timed, collector, [envelope(collector)])).status).toBe(202);
      const refused = await sendEnvelopes(timed, collector, [envelope(collector)]);
      expect(refused.body).toEqual(quotaBody(clock.now()));
      const { resetAt } = usagePeriodOf(clock.now());
      clock.advance(resetAt.getTime() - clock.nowMs() + 5_000);
      expect((await sendEnvelopes(timed, collector, [envelope(collector)])).status).toBe(202);
      expect(await ctx.deps.redis.get(RedisKeys.sandboxMonthlyUsage(boot.account.id, usagePeriodOf(clock.now()).period))).toBe('1');
    });
  });
});
