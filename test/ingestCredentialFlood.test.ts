import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClickHouseClient } from '../shared/clickhouse/client.js';
import { createPool } from '../shared/db/pool.js';
import { newId } from '../shared/ids.js';
import { bumpCredentialEpoch } from '../shared/redis.js';
import { CREDENTIAL_LOAD_LIMITS } from '../ingest/auth/loadQueue.js';
import { UnknownKeys } from '../ingest/auth/unknownKeys.js';
import type { CredentialLoadResult } from '../ingest/common/credential.js';
import { bootstrapWorkspace, createTestContext, type TestContext } from './helpers/context.js';
import { createCollector, envelope, sendEnvelopes, startEdge, testClickHouse, type Edge } from './helpers/ingest.js';
import { waitFor } from './helpers/wait.js';

// Issue 25, item 4: well-formed but unknown Connection keys cost PostgreSQL one read per key and
// TTL, wait in a bounded queue (503 with Retry-After past it, never 500), and never delay the
// reload of a connection the edge already knows. The edge has its own 4-connection pool, as in
// production (ingest/main.ts), on the real test PostgreSQL.

let ctx: TestContext;
let clickhouse: ClickHouseClient;
let edgePool: pg.Pool;
let edge: Edge;

beforeAll(async () => {
  ctx = await createTestContext();
  clickhouse = testClickHouse(ctx);
  edgePool = createPool(ctx.deps.config.databaseUrl, 4);
  edge = await startEdge(ctx, clickhouse, { pool: edgePool });
});
afterAll(async () => {
  await edge.close();
  await edgePool.end();
  await clickhouse.close();
  await ctx.close();
});

/** POST /ingest with a well-formed key, token and signature header that no connection has. */
async function postUnknown(connectionKey: string): Promise<{ status: number; retryAfter: string | null; body: unknown }> {
  const res = await fetch(`${edge.url}/ingest`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-service-connection': connectionKey,
      authorization: `Bearer svc_ing_${randomBytes(32).toString('base64url')}`,
      'x-service-signature': `t=${Math.floor(Date.now() / 1000)},v1=${randomBytes(32).toString('hex')}`,
    },
    body: '{"envelopes":[]}',
  });
  return { status: res.status, retryAfter: res.headers.get('retry-after'), body: await res.json() };
}

/** `ingest_credential_loads_total{result}` as the edge's /metrics reports it. */
async function loads(result: CredentialLoadResult): Promise<number> {
  const text = await (await fetch(`${edge.url}/metrics`)).text();
  const line = text.split('\n').find((entry) => entry.startsWith('ingest_credential_loads_total{') && entry.includes(`result="${result}"`));
  return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(' ') + 1));
}

/** Queries of the edge's pool now waiting on a lock, whose text contains `fragment`. */
async function waitingOnLock(fragment: string): Promise<number> {
  const { rows } = await ctx.deps.pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE $1`,
    [`%${fragment}%`],
  );
  return rows[0].n;
}

describe('unknown Connection keys', () => {
  it('read PostgreSQL once per key within the TTL, however often and concurrently they are sent', async () => {
    const key = newId('svc_conn_v1.');
    const before = await loads('unknown');
    const first = await Promise.all(Array.from({ length: 10 }, () => postUnknown(key)));
    for (let round = 0; round < 10; round += 1) first.push(await postUnknown(key));
    expect(first.map((answer) => answer.status)).toEqual(first.map(() => 401));
    expect(first[0].body).toEqual({ error: 'unauthenticated' });
    expect(await loads('unknown')).toBe(before + 1);
  });

  it('a flood while PostgreSQL is slow: bounded queue, 401 or 503 with Retry-After, a known connection reloaded first', async () => {
    const boot = await bootstrapWorkspace(ctx);
    const known = await createCollector(ctx, boot.apiKey.key, { mode: 'live' });
    expect((await sendEnvelopes(edge, known, [envelope(known)])).status).toBe(202);
    // Its next batch needs the binding read again (the admission script sees the epoch moved).
    await bumpCredentialEpoch(ctx.deps.redis, known.accountId, known.connectionId);
    const before = { unknown: await loads('unknown'), shed: await loads('shed') };

    // PostgreSQL made slow for the edge: every read of connections waits on this lock.
    const locker = await ctx.deps.pool.connect();
    const flood = 3000;
    const runningOrWaiting = CREDENTIAL_LOAD_LIMITS.unknownConcurrency + CREDENTIAL_LOAD_LIMITS.maxWaiting.unknown;
    let answers: Promise<{ status: number; retryAfter: string | null; body: unknown }[]>;
    let reloaded: ReturnType<typeof sendEnvelopes>;
    try {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE connections IN ACCESS EXCLUSIVE MODE');
      let answered = 0;
      answers = Promise.all(
        Array.from({ length: flood }, () =>
          postUnknown(newId('svc_conn_v1.')).then((answer) => {
            answered += 1;
            return answer;
          }),
        ),
      );
      // Past the bounded queue, keys are refused at once instead of queueing on the pool.
      await waitFor(() => (answered >= flood - runningOrWaiting ? true : undefined), 20_000, 'every load past the queue refused');
      reloaded = sendEnvelopes(edge, known, [envelope(known)]);
      // The known connection's reload reaches PostgreSQL while the flood's loads still wait.
      await waitFor(
        async () => ((await waitingOnLock('LEFT JOIN credentials cr')) === 1 ? true : undefined),
        10_000,
        'the known reload to reach PostgreSQL',
      );
      expect(await waitingOnLock('WHERE c.connection_key = $1')).toBeLessThanOrEqual(CREDENTIAL_LOAD_LIMITS.unknownConcurrency);
      expect(edgePool.waitingCount).toBe(0);
    } finally {
      await locker.query('COMMIT');
      locker.release();
    }

    const results = await answers;
    const byStatus = new Map<number, number>();
    for (const answer of results) byStatus.set(answer.status, (byStatus.get(answer.status) ?? 0) + 1);
    expect([...byStatus.keys()].sort()).toEqual([401, 503]);
    for (const answer of results.filter((result) => result.status === 503)) {
      expect(answer.body).toEqual({ error: 'service_unavailable' });
      expect(answer.retryAfter).toBe('1');
    }
    // Each 401 cost one read, each 503 none.
    expect(byStatus.get(401)).toBeLessThanOrEqual(runningOrWaiting);
    expect(await loads('unknown')).toBe(before.unknown + byStatus.get(401)!);
    expect(await loads('shed')).toBe(before.shed + byStatus.get(503)!);
    expect((await reloaded).status).toBe(202);
  });
});

describe('UnknownKeys (the negative cache)', () => {
  it('forgets a key after its TTL and, when full, the least recently asked key only', () => {
    const keys = new UnknownKeys(10, 3);
    for (const key of ['a', 'b', 'c']) keys.add(key, 0);
    expect(keys.has('a', 9)).toBe(true);
    keys.add('d', 9);
    expect(keys.size).toBe(3);
    expect([keys.has('b', 9), keys.has('a', 9), keys.has('c', 9), keys.has('d', 9)]).toEqual([false, true, true, true]);
    expect(keys.has('a', 10)).toBe(false);
    expect(keys.has('d', 18)).toBe(true);
  });
});
