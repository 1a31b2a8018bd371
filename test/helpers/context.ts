import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { randomBytes, randomInt } from 'node:crypto';
import { expect } from 'vitest';
import { advanceTestClock, createClock, resetTestClock } from '../../shared/clock.js';
import { loadConfig } from '../../shared/config.js';
import { createPool } from '../../shared/db/pool.js';
import { connectRedis } from '../../shared/redis.js';
import { bootstrap, type BootstrapInput, type BootstrapResult } from '../../management/admin/bootstrap.js';
import { buildApp } from '../../management/app.js';
import type { Deps, TestHooks } from '../../management/deps.js';

export interface TestContext {
  app: FastifyInstance;
  deps: Deps;
  hooks: TestHooks;
  close(): Promise<void>;
}

/**
 * The management app on the real test PostgreSQL and Redis (no mocks), served through inject;
 * `env` overrides variables of the test environment (a limit made small enough to reach).
 */
export async function createTestContext(env: Record<string, string> = {}): Promise<TestContext> {
  const config = loadConfig({ ...process.env, ...env });
  const pool = createPool(config.databaseUrl, 20);
  const redis = await connectRedis(config.redisUrl);
  const hooks: TestHooks = {};
  const deps: Deps = { config, pool, redis, clock: createClock(config.enableTestClock, redis), hooks };
  const app = await buildApp(deps);
  await app.ready();
  return {
    app,
    deps,
    hooks,
    async close() {
      await app.close();
      await pool.end();
      redis.disconnect();
    },
  };
}

/** After each test of a file that moves the test clock or sets the authority-recheck hook: both back to normal. */
export async function resetClockAndHooks(ctx: TestContext): Promise<void> {
  ctx.hooks.beforeAuthorityRecheck = undefined;
  await resetTestClock(ctx.deps.redis);
}

/** Moves the operator test clock (shared by every process of the slot) and this app's view of it. */
export async function advanceClock(ctx: TestContext, ms: number): Promise<void> {
  await advanceTestClock(ctx.deps.redis, ms);
  await ctx.deps.clock.sync();
}

export const uniqueEmail = (label = 'user') => `${label}-${randomBytes(6).toString('hex')}@example.test`;

/**
 * A client address of its own (in 198.18.0.0/15, reserved for benchmarks) for `inject`'s
 * `remoteAddress`: the per-address login and sign-up limits of one test never meet another's.
 */
export const freshClientIp = () => `198.${18 + randomInt(2)}.${randomInt(256)}.${randomInt(1, 255)}`;

/** A fresh verified user, account, workspace, session and API key (operator bootstrap). */
export function bootstrapWorkspace(ctx: TestContext, input: Partial<BootstrapInput> = {}): Promise<BootstrapResult> {
  return bootstrap(ctx.deps, { email: uniqueEmail(), ...input });
}

type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE' | 'PUT';

export interface CallOptions {
  body?: unknown;
  headers?: Record<string, string>;
  idempotencyKey?: string;
}

/** Calls a route with a workspace API key. */
export function callWithKey(
  ctx: TestContext,
  key: string | null,
  method: Method,
  url: string,
  options: CallOptions = {},
): Promise<LightMyRequestResponse> {
  const headers: Record<string, string> = { ...options.headers };
  if (key !== null) headers.authorization = `Bearer ${key}`;
  if (options.idempotencyKey !== undefined) headers['idempotency-key'] = options.idempotencyKey;
  return ctx.app.inject({ method, url, headers, ...(options.body === undefined ? {} : { payload: options.body as object }) });
}

/** Calls a console route with a session cookie and a same-origin Origin header. */
export function callWithSession(
  ctx: TestContext,
  sessionToken: string | null,
  method: Method,
  url: string,
  options: CallOptions = {},
): Promise<LightMyRequestResponse> {
  const headers: Record<string, string> = { origin: ctx.deps.config.consoleOrigin, ...options.headers };
  if (sessionToken !== null) headers.cookie = `session=${sessionToken}`;
  if (options.idempotencyKey !== undefined) headers['idempotency-key'] = options.idempotencyKey;
  return ctx.app.inject({ method, url, headers, ...(options.body === undefined ? {} : { payload: options.body as object }) });
}

/** An error answer: the status and exactly `{ error }`. */
export function expectError(res: LightMyRequestResponse, status: number, error: string): void {
  expect(res.statusCode, res.body).toBe(status);
  expect(res.json()).toEqual({ error });
}

export const newIdempotencyKey = () => `idem-${randomBytes(8).toString('hex')}`;

/** Counts rows matching a WHERE clause, to prove that a failed request wrote nothing. */
export async function countRows(ctx: TestContext, table: string, where: string, params: unknown[]): Promise<number> {
  if (!/^[a-z_]+$/.test(table)) throw new Error('bad table name');
  const { rows } = await ctx.deps.pool.query<{ count: number }>(`SELECT count(*)::int AS count FROM ${table} WHERE ${where}`, params);
  return rows[0].count;
}
