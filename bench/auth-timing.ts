// Issue 25 item 6: a failed login for an unknown e-mail must not be told apart from a wrong
// password by its time. Logs in through the management app (in-process inject, the real stores)
// alternately with a known e-mail and a wrong password and with an e-mail no user has, each from
// an address of its own, and prints both latency distributions and the scrypt runs per attempt.
// The throttles are lifted for the run (they would answer 429 after 10 attempts).
//   npm run bench:build && DATABASE_URL=… REDIS_URL=… node dist/bench/auth-timing.js
// (the URLs of a migrated database, e.g. a test slot's; BENCH_AUTH_ROUNDS changes the 300 rounds)

import { randomBytes } from 'node:crypto';
import { buildApp } from '../management/app.js';
import { scryptRunCount } from '../management/accounts/passwords.js';
import { createClock } from '../shared/clock.js';
import { loadConfig } from '../shared/config.js';
import { createPool } from '../shared/db/pool.js';
import { connectRedis } from '../shared/redis.js';

const ROUNDS = Number(process.env.BENCH_AUTH_ROUNDS ?? 300);
const LIFTED = 1_000_000_000;

const config = loadConfig({ ...process.env, ENABLE_TEST_CLOCK: '0', LOG_LEVEL: 'silent' });
config.auth = { loginFailuresPerEmail: LIFTED, loginFailuresPerAddress: LIFTED, signupsPerAddressPerHour: LIFTED };
const pool = createPool(config.databaseUrl, 4);
const redis = await connectRedis(config.redisUrl);
const app = await buildApp({ config, pool, redis, clock: createClock(false, redis) });
await app.ready();

let address = 0;
const ip = () => {
  address += 1;
  return `198.19.${(address >> 8) & 255}.${address & 255}`;
};
const email = () => `bench-${randomBytes(6).toString('hex')}@example.test`;

const known = email();
const created = await app.inject({
  method: 'POST',
  url: '/auth/signup',
  payload: { email: known, password: 'the right password', name: 'Bench' },
  remoteAddress: ip(),
});
if (created.statusCode !== 201) throw new Error(`signup answered ${created.statusCode}`);

async function attempt(login: string): Promise<{ ms: number; status: number; runs: number }> {
  const runs = scryptRunCount();
  const started = process.hrtime.bigint();
  const res = await app.inject({
    method: 'POST',
    url: '/auth/login',
    payload: { email: login, password: 'a wrong password' },
    remoteAddress: ip(),
  });
  return { ms: Number(process.hrtime.bigint() - started) / 1e6, status: res.statusCode, runs: scryptRunCount() - runs };
}

const series = { 'wrong password': [] as number[], 'unknown e-mail': [] as number[] };
const statuses = new Set<string>();
const runsPerAttempt = new Set<number>();
for (let warm = 0; warm < 10; warm += 1) await attempt(email());
for (let round = 0; round < ROUNDS; round += 1) {
  // Alternate which goes first, so drift of the machine falls on both alike.
  const order: (keyof typeof series)[] = round % 2 ? ['wrong password', 'unknown e-mail'] : ['unknown e-mail', 'wrong password'];
  for (const kind of order) {
    const result = await attempt(kind === 'wrong password' ? known : email());
    series[kind].push(result.ms);
    statuses.add(`${kind}: ${result.status}`);
    runsPerAttempt.add(result.runs);
  }
}

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
console.log(`${ROUNDS} rounds; statuses ${[...statuses].join(', ')}; scrypt runs per attempt ${[...runsPerAttempt].join(', ')}`);
const medians: number[] = [];
for (const [kind, values] of Object.entries(series)) {
  const sorted = [...values].sort((a, b) => a - b);
  const mean = values.reduce((sum, value) => sum + value, 0) / values.length;
  medians.push(quantile(sorted, 0.5));
  console.log(
    `${kind.padEnd(15)} mean ${mean.toFixed(2)} ms  p10 ${quantile(sorted, 0.1).toFixed(2)}  median ${quantile(sorted, 0.5).toFixed(2)}  p90 ${quantile(sorted, 0.9).toFixed(2)}  p99 ${quantile(sorted, 0.99).toFixed(2)}`,
  );
}
console.log(`median difference (unknown − wrong password): ${(medians[1] - medians[0]).toFixed(2)} ms`);

await app.close();
await pool.end();
redis.disconnect();
