import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { RedisKeys, type Redis } from './redis.js';

export type ProcessKind = 'ingest' | 'analyzer' | 'management';

/** One running process as it reports itself in `RedisKeys.runningProcesses`. */
export interface RunningProcess {
  kind: ProcessKind;
  id: string;
  host: string;
  pid: number;
  /** Whether it was started with ENABLE_TEST_CLOCK=1 (reads "now" with the Redis offset). */
  testClock: boolean;
  startedAt: string;
}

/**
 * A process reports every 5 s and counts as running while its last report is under 15 s old, so
 * one that died without deregistering stops counting within 15 s. Real time, not the service
 * clock: moving the test clock must not make processes look dead.
 */
export const PROCESS_REPORT_INTERVAL_MS = 5_000;
export const PROCESS_REPORT_TTL_MS = 15_000;

/**
 * Started by each process's main: warns on stderr when the process honours the test clock (never
 * silenced by LOG_LEVEL: it is about the setting, not a request), then reports the process, and
 * whether it honours the test clock, until `stop()` (called at shutdown) removes it.
 */
export async function registerProcess(redis: Redis, input: { kind: ProcessKind; testClock: boolean }): Promise<{ stop(): Promise<void> }> {
  if (input.testClock) {
    process.stderr.write(
      `${new Date().toISOString()} WARNING: ${input.kind} runs with ENABLE_TEST_CLOCK=1: "now" is real time plus the offset that \`admin clock\` sets in Redis. Never enable it in production.\n`,
    );
  }
  const self: RunningProcess = {
    kind: input.kind,
    id: randomBytes(8).toString('hex'),
    host: hostname(),
    pid: process.pid,
    testClock: input.testClock,
    startedAt: new Date().toISOString(),
  };
  const member = JSON.stringify(self);
  const report = async () => {
    const now = Date.now();
    await redis.zadd(RedisKeys.runningProcesses, now, member);
    await redis.zremrangebyscore(RedisKeys.runningProcesses, '-inf', now - PROCESS_REPORT_TTL_MS);
  };
  await report();
  // A failed report (Redis briefly away) is retried at the next tick; the TTL covers two misses.
  const timer = setInterval(() => {
    report().catch(() => undefined);
  }, PROCESS_REPORT_INTERVAL_MS);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await redis.zrem(RedisKeys.runningProcesses, member).catch(() => undefined);
    },
  };
}

function parse(member: string): RunningProcess | null {
  try {
    const value = JSON.parse(member) as RunningProcess;
    return typeof value.kind === 'string' && typeof value.testClock === 'boolean' ? value : null;
  } catch {
    return null;
  }
}

/** The processes whose last report is under PROCESS_REPORT_TTL_MS old (read by `admin clock`). */
export async function runningProcesses(redis: Redis): Promise<RunningProcess[]> {
  const members = await redis.zrangebyscore(RedisKeys.runningProcesses, Date.now() - PROCESS_REPORT_TTL_MS, '+inf');
  return members.map(parse).filter((value): value is RunningProcess => value !== null);
}
