import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { isAppError } from '../shared/errors/index.js';
import {
  REPAIR_ADMISSIONS_PER_ACTOR,
  REPAIR_ADMISSIONS_PER_WORKSPACE,
  reserveRepairAdmission,
  type RepairAdmissionInput,
} from '../management/repairs/repairAdmission.js';
import type { RateSlot } from '../management/operations/rateWindow.js';
import { advanceClock, createTestContext, resetClockAndHooks, type TestContext } from './helpers/context.js';

// 03 Limits, Repair admission: 20 new operations per workspace and 5 per actor per UTC minute,
// for request, decision preview and export each; fixed UTC minutes of the service clock.
let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(async () => {
  await ctx.close();
});
afterEach(async () => {
  await resetClockAndHooks(ctx);
});

const MINUTE_MS = 60_000;
const fresh = (prefix: string) => `${prefix}${randomBytes(8).toString('hex')}`;

function admission(overrides: Partial<RepairAdmissionInput> = {}): RepairAdmissionInput {
  return {
    workspaceId: fresh('ws_'),
    accountId: fresh('acct_'),
    userId: fresh('usr_'),
    clientId: fresh('clic_'),
    action: 'request',
    ...overrides,
  };
}

/** Moves the service clock to `offsetMs` after the start of the next UTC minute; returns that start. */
async function toNextMinute(offsetMs: number): Promise<number> {
  await ctx.deps.clock.sync();
  const now = ctx.deps.clock.nowMs();
  const minuteStart = (Math.floor(now / MINUTE_MS) + 1) * MINUTE_MS;
  await advanceClock(ctx, minuteStart + offsetMs - now);
  return minuteStart;
}

async function refusal(input: RepairAdmissionInput): Promise<{ code: string; retryAfterSeconds: number | undefined }> {
  try {
    await reserveRepairAdmission(ctx.deps, input);
  } catch (error) {
    if (isAppError(error)) return { code: error.code, retryAfterSeconds: error.retryAfterSeconds };
    throw error;
  }
  throw new Error('admitted');
}

async function takeAll(input: RepairAdmissionInput, count: number): Promise<RateSlot[]> {
  const slots: RateSlot[] = [];
  for (let i = 0; i < count; i += 1) slots.push(await reserveRepairAdmission(ctx.deps, input));
  return slots;
}

describe('repair admission', () => {
  it('admits 5 operations of one actor a minute, then 429 workload_rate_limited until the next UTC minute', async () => {
    const minuteStart = await toNextMinute(1_000);
    const input = admission();
    await takeAll(input, REPAIR_ADMISSIONS_PER_ACTOR);
    const before = ctx.deps.clock.nowMs();
    const refused = await refusal(input);
    const after = ctx.deps.clock.nowMs();
    expect(refused.code).toBe('workload_rate_limited');
    const nextMinute = minuteStart + MINUTE_MS;
    expect(refused.retryAfterSeconds).toBeGreaterThanOrEqual(Math.ceil((nextMinute - after) / 1000));
    expect(refused.retryAfterSeconds).toBeLessThanOrEqual(Math.ceil((nextMinute - before) / 1000));

    // The same actor through another CLI client is the same actor.
    expect((await refusal({ ...input, clientId: fresh('clic_') })).code).toBe('workload_rate_limited');
    // Each action has its own counters.
    await reserveRepairAdmission(ctx.deps, { ...input, action: 'preview' });
    await reserveRepairAdmission(ctx.deps, { ...input, action: 'export' });
    // Another member of the workspace has an allowance of their own.
    await reserveRepairAdmission(ctx.deps, { ...input, userId: fresh('usr_') });

    // Fixed windows: the next UTC minute starts afresh, however recent the last admission was.
    await toNextMinute(0);
    await takeAll(input, REPAIR_ADMISSIONS_PER_ACTOR);
  });

  it('admits 20 operations of a workspace a minute across its actors', async () => {
    await toNextMinute(1_000);
    const workspace = admission();
    const actors = REPAIR_ADMISSIONS_PER_WORKSPACE / REPAIR_ADMISSIONS_PER_ACTOR;
    for (let i = 0; i < actors; i += 1) await takeAll({ ...workspace, userId: fresh('usr_') }, REPAIR_ADMISSIONS_PER_ACTOR);
    const refused = await refusal({ ...workspace, userId: fresh('usr_') });
    expect(refused.code).toBe('workload_rate_limited');
    expect(refused.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    // Another workspace of the same account is not affected.
    await reserveRepairAdmission(ctx.deps, { ...workspace, workspaceId: fresh('ws_'), userId: fresh('usr_') });
  });

  it('a refused reservation takes nothing, and release() gives the slot back to both counters (once)', async () => {
    await toNextMinute(1_000);
    const input = admission();
    const slots = await takeAll(input, REPAIR_ADMISSIONS_PER_ACTOR);
    expect((await refusal(input)).code).toBe('workload_rate_limited');
    await slots[0].release();
    await slots[0].release();
    const again = await reserveRepairAdmission(ctx.deps, input);
    expect((await refusal(input)).code).toBe('workload_rate_limited');

    // The workspace counter got its slot back too: 15 more by other actors fill it exactly.
    const others = REPAIR_ADMISSIONS_PER_WORKSPACE / REPAIR_ADMISSIONS_PER_ACTOR - 1;
    for (let i = 0; i < others; i += 1) await takeAll({ ...input, userId: fresh('usr_') }, REPAIR_ADMISSIONS_PER_ACTOR);
    expect((await refusal({ ...input, userId: fresh('usr_') })).code).toBe('workload_rate_limited');
    await again.release();
    await reserveRepairAdmission(ctx.deps, { ...input, userId: fresh('usr_') });
  });

  it('concurrent reservations of one actor: exactly 5 are admitted', async () => {
    await toNextMinute(1_000);
    const input = admission();
    const results = await Promise.allSettled(Array.from({ length: 12 }, () => reserveRepairAdmission(ctx.deps, input)));
    expect(results.filter((result) => result.status === 'fulfilled')).toHaveLength(REPAIR_ADMISSIONS_PER_ACTOR);
    for (const result of results) {
      if (result.status === 'rejected') expect(isAppError(result.reason) && result.reason.code).toBe('workload_rate_limited');
    }
  });
});
