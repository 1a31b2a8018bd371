import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createClient } from '@clickhouse/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClickHouseClient } from '../shared/clickhouse/client.js';
import { createClickHouse } from '../shared/clickhouse/client.js';
import { sqlIdentifier, sqlLiteral } from '../shared/clickhouse/escape.js';
import { migrateClickHouse, parseMigration } from '../shared/clickhouse/migrate.js';
import { bootstrapWorkspace, createTestContext, type TestContext } from './helpers/context.js';
import { countObservations, createCollector, envelope, sendEnvelopes, startEdge, type Collector, type Edge } from './helpers/ingest.js';

// Issue 17, item 4 (ClickHouse): migrations on a cluster of two shards, the two servers of
// scripts/clickhouse-shards.sh (started here when they are not running, and then stopped here),
// and the real ingest edge writing through one shard's Distributed table.

const SCRIPT = resolve(fileURLToPath(new URL('.', import.meta.url)), '../scripts/clickhouse-shards.sh');
const CLUSTER = 'svc_shards';
const SHARD_URLS = ['http://127.0.0.2:18123', 'http://127.0.0.3:18123'];
const SINGLE_URL = process.env.CLICKHOUSE_URL!;

let startedShards = false;
const created: { url: string; database: string }[] = [];
const scratch = (label: string) => `svc_test_${label}_${randomBytes(4).toString('hex')}`;

function shardsScript(command: 'start' | 'stop' | 'status'): number {
  const run = spawnSync('bash', [SCRIPT, command], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  if (command !== 'status' && run.status !== 0) throw new Error(`clickhouse-shards.sh ${command} failed:\n${run.stdout}${run.stderr}`);
  return run.status ?? 1;
}

async function query<T>(url: string, sql: string): Promise<T[]> {
  const client = createClickHouse(url, 'default');
  try {
    return await (await client.query({ query: sql, format: 'JSONEachRow' })).json<T>();
  } finally {
    await client.close();
  }
}

/** Migrates `database` on the cluster; it and its shard databases are dropped after the file. */
async function migrateOnCluster(database: string, upTo?: string, migrationsDir?: string): Promise<void> {
  for (const url of SHARD_URLS) created.push({ url, database }, { url, database: `${database}_local` });
  await migrateClickHouse(SHARD_URLS[0], database, upTo, { cluster: CLUSTER, ...(migrationsDir ? { migrationsDir } : {}) });
}

beforeAll(() => {
  if (shardsScript('status') !== 0) {
    startedShards = true;
    shardsScript('start');
  }
});
afterAll(async () => {
  try {
    for (const { url, database } of created) {
      const client = createClickHouse(url, 'default');
      await client.command({ query: `DROP DATABASE IF EXISTS ${sqlIdentifier(database)}` }).finally(() => client.close());
    }
  } finally {
    if (startedShards) shardsScript('stop');
  }
});

describe('migration markers', () => {
  const file = [
    '-- A table.',
    '-- cluster: distributed t by cityHash64(k)',
    'CREATE TABLE {db}.t (k String) ENGINE = MergeTree ORDER BY k;',
    '',
    '-- cluster: once',
    "INSERT INTO {db}.t VALUES ('a');",
    '',
    'DROP TABLE {db}.u;',
  ].join('\n');
  const cases: [string, string, unknown][] = [
    [
      'declares a Distributed table and a statement run once; the statements are sent without the comments',
      file,
      {
        statements: [
          { sql: 'CREATE TABLE {db}.t (k String) ENGINE = MergeTree ORDER BY k', once: false },
          { sql: "INSERT INTO {db}.t VALUES ('a')", once: true },
          { sql: 'DROP TABLE {db}.u', once: false },
        ],
        distributed: [{ table: 't', shardingKey: 'cityHash64(k)' }],
      },
    ],
    [
      'accepts a declaration with no statement of its own',
      '-- cluster: distributed v by rand()\n',
      { statements: [], distributed: [{ table: 'v', shardingKey: 'rand()' }] },
    ],
    ['rejects an unknown marker', '-- cluster: everywhere\nSELECT 1;', new Error('f.sql: unknown marker "-- cluster: everywhere"')],
    ['rejects "once" on no statement', '-- cluster: once\n;\nSELECT 1;', new Error('f.sql: "-- cluster: once" marks no statement')],
  ];
  it.each(cases)('%s', (_label, text, expected) => {
    if (expected instanceof Error) expect(() => parseMigration(text, 'f.sql')).toThrow(expected.message);
    else expect(parseMigration(text, 'f.sql')).toEqual(expected);
  });

  it('sends each project migration to one server as its ;-separated chunks without comment lines, markers or not', () => {
    const dir = resolve(fileURLToPath(new URL('.', import.meta.url)), '../migrations/clickhouse');
    for (const file of readdirSync(dir).filter((name) => name.endsWith('.sql'))) {
      const text = readFileSync(join(dir, file), 'utf8');
      const chunks = text
        .split(/;\s*$/m)
        .map((chunk) =>
          chunk
            .split('\n')
            .filter((line) => !line.trim().startsWith('--'))
            .join('\n')
            .trim(),
        )
        .filter(Boolean);
      expect(parseMigration(text, file).statements.map((statement) => statement.sql)).toEqual(chunks);
    }
    expect(parseMigration(readFileSync(join(dir, '0001_observations.sql'), 'utf8')).distributed).toEqual([
      { table: 'observations', shardingKey: 'cityHash64(connection_id)' },
    ]);
  });
});

describe('ClickHouse migrations on a cluster of two shards', () => {
  it('builds the observations table on each shard and a Distributed table over them, sharded by connection', async () => {
    const database = scratch('cluster');
    await migrateOnCluster(database);
    await migrateOnCluster(database); // applied once: nothing to do the second time
    for (const url of SHARD_URLS) {
      const tables = await query<{ database: string; name: string; engine: string; engine_full: string; sorting_key: string }>(
        url,
        `SELECT database, name, engine, engine_full, sorting_key FROM system.tables WHERE database IN (${sqlLiteral(database)}, ${sqlLiteral(`${database}_local`)}) ORDER BY database, name`,
      );
      expect(tables.map(({ database: db, name, engine, sorting_key }) => ({ db, name, engine, sorting_key }))).toEqual([
        { db: database, name: 'observations', engine: 'Distributed', sorting_key: '' },
        { db: database, name: 'schema_migrations', engine: 'TinyLog', sorting_key: '' },
        {
          db: `${database}_local`,
          name: 'observations',
          engine: 'ReplacingMergeTree',
          sorting_key: 'connection_id, received_at_ms, event_id',
        },
      ]);
      expect(tables[0].engine_full).toBe(`Distributed(${CLUSTER}, ${database}_local, observations, cityHash64(connection_id))`);
      const applied = await query<{ name: string }>(url, `SELECT name FROM ${sqlIdentifier(database)}.schema_migrations ORDER BY name`);
      expect(applied.map((row) => row.name)).toEqual([
        '0001_observations.sql',
        '0002_observation_binding.sql',
        '0003_observation_time_order.sql',
        '0004_observation_granularity.sql',
        '0005_observation_low_cardinality.sql',
      ]);
      // Every local column is readable through the Distributed table; the materialized one as an ALIAS the shard answers.
      const columns = async (db: string) =>
        query<{ name: string; type: string; default_kind: string }>(
          url,
          `SELECT name, type, default_kind FROM system.columns WHERE database = ${sqlLiteral(db)} AND table = 'observations' ORDER BY name`,
        );
      const local = await columns(`${database}_local`);
      expect(local.find((column) => column.name === 'shape_hash')).toEqual({
        name: 'shape_hash',
        type: 'FixedString(32)',
        default_kind: 'MATERIALIZED',
      });
      expect(local.find((column) => column.name === 'schema_shape')?.type).toBe('LowCardinality(String)');
      expect(await columns(database)).toEqual(
        local.map((column) => (column.default_kind === 'MATERIALIZED' ? { ...column, default_kind: 'ALIAS' } : column)),
      );
    }
  });

  it('runs later migrations per shard or once, and keeps each Distributed table in line with its local table', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ch-migrations-'));
    try {
      writeFileSync(
        join(dir, '0001_t.sql'),
        '-- cluster: distributed t by cityHash64(k)\nCREATE TABLE {db}.t (k String, v UInt32) ENGINE = MergeTree ORDER BY k;\n',
      );
      writeFileSync(
        join(dir, '0002_more.sql'),
        [
          'ALTER TABLE {db}.t ADD COLUMN h FixedString(32) MATERIALIZED SHA256(k);',
          '-- cluster: once',
          "INSERT INTO {db}.t (k, v) VALUES ('a', 1), ('b', 2), ('c', 3), ('d', 4), ('e', 5), ('f', 6);",
        ].join('\n'),
      );
      const database = scratch('cluster_runner');
      await migrateOnCluster(database, '0001_t.sql', dir);
      await migrateOnCluster(database, undefined, dir);
      // Inserted once through the Distributed table (not once per shard), each row on one shard, the new column readable.
      for (const url of SHARD_URLS) {
        expect(
          await query(url, `SELECT k, v, lower(hex(h)) = lower(hex(SHA256(k))) AS ok FROM ${sqlIdentifier(database)}.t ORDER BY k`),
        ).toEqual(['a', 'b', 'c', 'd', 'e', 'f'].map((k, index) => ({ k, v: index + 1, ok: 1 })));
      }
      const perShard = await Promise.all(
        SHARD_URLS.map((url) => query<{ n: string }>(url, `SELECT count() AS n FROM ${sqlIdentifier(`${database}_local`)}.t`)),
      );
      expect(perShard.map(([row]) => Number(row.n)).reduce((a, b) => a + b)).toBe(6);
      expect(perShard.every(([row]) => Number(row.n) > 0)).toBe(true);

      // On one server the markers are comments: the same files build one table t.
      const single = scratch('single_runner');
      created.push({ url: SINGLE_URL, database: single });
      await migrateClickHouse(SINGLE_URL, single, undefined, { migrationsDir: dir });
      expect(
        await query(SINGLE_URL, `SELECT name, engine FROM system.tables WHERE database = ${sqlLiteral(single)} ORDER BY name`),
      ).toEqual([
        { name: 'schema_migrations', engine: 'TinyLog' },
        { name: 't', engine: 'MergeTree' },
      ]);
      expect(await query(SINGLE_URL, `SELECT count() AS n FROM ${sqlIdentifier(single)}.t`)).toEqual([{ n: '6' }]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the ingest edge on the cluster', () => {
  const database = scratch('shards');
  let ctx: TestContext;
  let clickhouse: ClickHouseClient;
  let edge: Edge;

  beforeAll(async () => {
    await migrateOnCluster(database);
    ctx = await createTestContext();
    clickhouse = createClient({ url: SHARD_URLS[0], database, request_timeout: 10_000, compression: { request: false, response: false } });
    edge = await startEdge(ctx, clickhouse);
  });
  afterAll(async () => {
    await edge?.close();
    await clickhouse?.close();
    await ctx?.close();
  });

  /** The shard (1 or 2) the Distributed table's sharding key picks for a connection. */
  async function expectedShard(connectionId: string): Promise<number> {
    const [row] = await query<{ shard: number }>(SHARD_URLS[0], `SELECT toUInt8(cityHash64(${sqlLiteral(connectionId)}) % 2 + 1) AS shard`);
    return row.shard;
  }

  it('stores every accepted envelope exactly once across the shards, each connection on one shard', async () => {
    // Connections until each shard is due at least two of them.
    const collectors: { collector: Collector; shard: number }[] = [];
    while ([1, 2].some((shard) => collectors.filter((entry) => entry.shard === shard).length < 2)) {
      const boot = await bootstrapWorkspace(ctx);
      const collector = await createCollector(ctx, boot.apiKey.key);
      collectors.push({ collector, shard: await expectedShard(collector.connectionId) });
    }
    const accepted = new Map<string, Set<string>>();
    await Promise.all(
      collectors.map(async ({ collector }) => {
        const eventIds = new Set<string>();
        accepted.set(collector.connectionId, eventIds);
        const first = Array.from({ length: 10 }, () => envelope(collector));
        const second = Array.from({ length: 10 }, () => envelope(collector));
        // The third batch retries the first; the fourth mixes one new envelope with two already stored.
        const batches = [first, second, first, [second[0], envelope(collector), first[3]]];
        for (const [index, batch] of batches.entries()) {
          const res = await sendEnvelopes(edge, collector, batch);
          expect(res.status, res.text).toBe(202);
          expect(res.body).toMatchObject({ accepted: batch.length, persisted: [10, 10, 0, 1][index] });
          for (const item of batch) eventIds.add(item.eventId as string);
        }
      }),
    );
    expect(await edge.shipped()).toBe(true);
    // A re-sent insert, as after a crash between an insert and its confirmation: every row once more,
    // through the other shard's Distributed table. The sharding key sends each copy to its original's shard.
    const other = createClickHouse(SHARD_URLS[1], database);
    await other.command({ query: 'INSERT INTO observations SELECT * FROM observations' }).finally(() => other.close());

    const local = sqlIdentifier(`${database}_local`);
    const perShard = await Promise.all(
      SHARD_URLS.map((url) =>
        query<{ connection_id: string; n: string; events: string[] }>(
          url,
          `SELECT connection_id, count() AS n, groupArray(event_id) AS events FROM ${local}.observations FINAL GROUP BY connection_id`,
        ),
      ),
    );
    for (const { collector, shard } of collectors) {
      const expected = [...accepted.get(collector.connectionId)!].sort();
      const holders = perShard.flatMap((rows, index) =>
        rows.filter((row) => row.connection_id === collector.connectionId).map((row) => ({ shard: index + 1, row })),
      );
      expect(holders.map((holder) => holder.shard)).toEqual([shard]);
      expect(Number(holders[0].row.n)).toBe(expected.length);
      expect([...holders[0].row.events].sort()).toEqual(expected);
      expect(await countObservations(clickhouse, collector.connectionId)).toBe(expected.length);
    }
    expect(connectionsHeld(perShard)).toBe(collectors.length);
    // Both entry points read the same whole through their Distributed tables.
    const total = [...accepted.values()].reduce((sum, ids) => sum + ids.size, 0);
    for (const url of SHARD_URLS) {
      expect(await query(url, `SELECT count() AS n, uniqExact(event_id) AS u FROM ${sqlIdentifier(database)}.observations FINAL`)).toEqual([
        { n: String(total), u: String(total) },
      ]);
    }
  });
});

/** How many connections the shards hold altogether (each counted on every shard that has it). */
function connectionsHeld(perShard: { connection_id: string }[][]): number {
  return perShard.reduce((sum, rows) => sum + rows.length, 0);
}
