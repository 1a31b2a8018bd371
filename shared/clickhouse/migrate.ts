import { readdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createClient, type ClickHouseClient, type ClickHouseSettings } from '@clickhouse/client';
import { sqlIdentifier, sqlLiteral } from './escape.js';

/**
 * ClickHouse migrations: numbered `.sql` files, statements separated by `;` at a line end, `{db}`
 * standing for the database, `--` comment lines. Applied file names are kept in
 * `{db}.schema_migrations`. `upTo` stops after the migration of that file name (tests of a later
 * migration start from there).
 *
 * On one server (`cluster` unset, CLICKHOUSE_CLUSTER) every statement runs on the server of `url`.
 *
 * On a cluster (`cluster`: a name in the `remote_servers` of `url`'s server):
 * - The shards are the replicas that server lists in `system.clusters`, reached over HTTP at their
 *   `host_name` with the scheme, port, user and path of `url` (one server per machine, all on one
 *   HTTP port; scripts/clickhouse-shards.sh gives each local shard a loopback address for this).
 * - A statement runs on every shard, `{db}` standing for the shard's local database
 *   `<database>_local`: the files build the local tables as they do on one server.
 * - `-- cluster: distributed <table> by <sharding expression>`, a comment line anywhere in a file,
 *   makes `<database>.<table>`, on every server (the shards and `url`'s), a `Distributed` table over
 *   the shards' `<database>_local.<table>`, each row on the shard the expression picks. After each
 *   file, and before each `once` statement, every such table is brought in line with its local
 *   table: same columns (a MATERIALIZED one is declared ALIAS with its expression: 18.16 forwards
 *   a Distributed table's materialized values and the shard refuses them, while an ALIAS column
 *   of a Distributed table is read by name from the shards), created again when they differ.
 * - `-- cluster: once` in a statement runs it once, on `url`'s server, `{db}` standing for
 *   `<database>` (the Distributed tables): a backfill or a data fix that must not run per shard.
 * - `schema_migrations` is in `<database>` on every shard; a file is recorded on each once all of
 *   its statements have run, and the runner stops when the shards disagree.
 * Markers are comments: on one server the statements sent are the same with or without them.
 * Not `ON CLUSTER`: 18.16 queues distributed DDL in ZooKeeper, which this deployment does not run.
 *
 * Statements run with EXPERIMENTAL_SWITCHES on where the server still knows them (18.16); later
 * releases made them obsolete or unknown, and send nothing for them.
 */
export interface ClickHouseMigrationOptions {
  /** CLICKHOUSE_CLUSTER. */
  cluster?: string;
  /** Another folder of migration files (tests of the runner itself). */
  migrationsDir?: string;
}

export interface MigrationStatement {
  sql: string;
  /** `-- cluster: once`: on a cluster, run once through the Distributed tables, not on each shard. */
  once: boolean;
}

export interface DistributedTable {
  table: string;
  shardingKey: string;
}

export interface ParsedMigration {
  statements: MigrationStatement[];
  distributed: DistributedTable[];
}

const MARKER = /^\s*--\s*cluster:\s*(.*?)\s*$/gm;
const DISTRIBUTED_MARKER = /^distributed\s+([A-Za-z_][A-Za-z0-9_]*)\s+by\s+(\S.*)$/i;
const PLAIN_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** A migration file's statements (comments removed, as sent) and its cluster markers. */
export function parseMigration(text: string, file = 'migration'): ParsedMigration {
  const statements: MigrationStatement[] = [];
  const distributed: DistributedTable[] = [];
  for (const chunk of text.split(/;\s*$/m)) {
    let once = false;
    for (const [, marker] of chunk.matchAll(MARKER)) {
      const table = DISTRIBUTED_MARKER.exec(marker);
      if (table) distributed.push({ table: table[1], shardingKey: table[2] });
      else if (marker.toLowerCase() === 'once') once = true;
      else throw new Error(`${file}: unknown marker "-- cluster: ${marker}"`);
    }
    const sql = chunk.replace(/^\s*--.*$/gm, '').trim();
    if (sql) statements.push({ sql, once });
    else if (once) throw new Error(`${file}: "-- cluster: once" marks no statement`);
  }
  return { statements, distributed };
}

function migrationsDir(): string {
  const here = fileURLToPath(new URL('.', import.meta.url));
  return resolve(here, import.meta.url.includes('/dist/') ? '../../../migrations/clickhouse' : '../../migrations/clickhouse');
}

function migrationFiles(dir: string, upTo: string | undefined): string[] {
  return readdirSync(dir)
    .filter((name) => name.endsWith('.sql'))
    .sort()
    .filter((file) => upTo === undefined || file <= upTo);
}

/** 18.16 creates LowCardinality columns (0005) only with this on; the runner's own Distributed tables too. */
const EXPERIMENTAL_SWITCHES = ['allow_experimental_low_cardinality_type'] as const;

/** A client for migrating the server at `url`, with the EXPERIMENTAL_SWITCHES that server knows turned on. */
async function migrationClient(url: string): Promise<ClickHouseClient> {
  const probe = createClient({ url });
  let known: string[];
  try {
    known = (
      await select<{ name: string }>(
        probe,
        `SELECT name FROM system.settings WHERE name IN (${EXPERIMENTAL_SWITCHES.map(sqlLiteral).join(', ')})`,
      )
    ).map((row) => row.name);
  } catch (error) {
    await probe.close();
    throw error;
  }
  if (known.length === 0) return probe;
  await probe.close();
  return createClient({ url, clickhouse_settings: Object.fromEntries(known.map((name) => [name, 1])) as ClickHouseSettings });
}

async function select<T>(client: ClickHouseClient, query: string): Promise<T[]> {
  return (await client.query({ query, format: 'JSONEachRow' })).json<T>();
}

async function ensureMigrationsTable(client: ClickHouseClient, db: string): Promise<Set<string>> {
  await client.command({ query: `CREATE DATABASE IF NOT EXISTS ${db}` });
  await client.command({
    query: `CREATE TABLE IF NOT EXISTS ${db}.schema_migrations (name String, applied_at DateTime) ENGINE = TinyLog`,
  });
  return new Set((await select<{ name: string }>(client, `SELECT name FROM ${db}.schema_migrations`)).map((row) => row.name));
}

const recordApplied = (client: ClickHouseClient, db: string, file: string) =>
  client.command({ query: `INSERT INTO ${db}.schema_migrations VALUES (${sqlLiteral(file)}, now())` });

export async function migrateClickHouse(
  url: string,
  database: string,
  upTo?: string,
  options: ClickHouseMigrationOptions = {},
): Promise<void> {
  const dir = options.migrationsDir ?? migrationsDir();
  if (options.cluster !== undefined) return migrateCluster(url, database, options.cluster, dir, upTo);
  const admin = await migrationClient(url);
  const db = sqlIdentifier(database);
  try {
    const applied = await ensureMigrationsTable(admin, db);
    for (const file of migrationFiles(dir, upTo)) {
      if (applied.has(file)) continue;
      const text = readFileSync(resolve(dir, file), 'utf8').replaceAll('{db}', db);
      for (const statement of parseMigration(text, file).statements) await admin.command({ query: statement.sql });
      await recordApplied(admin, db, file);
    }
  } finally {
    await admin.close();
  }
}

interface Server {
  url: string;
  client: ClickHouseClient;
}

/** `url` with the host of a `system.clusters` replica. */
function replicaUrl(url: string, host: string): string {
  const address = new URL(url);
  address.hostname = host.includes(':') ? `[${host}]` : host;
  return address.toString();
}

async function clusterShardUrls(entry: ClickHouseClient, url: string, cluster: string): Promise<string[]> {
  const replicas = await select<{ host_name: string }>(
    entry,
    `SELECT host_name, shard_num, replica_num FROM system.clusters WHERE cluster = ${sqlLiteral(cluster)} ORDER BY shard_num, replica_num`,
  );
  if (replicas.length === 0) throw new Error(`ClickHouse cluster "${cluster}" is not in the remote_servers of ${new URL(url).host}`);
  return [...new Set(replicas.map((replica) => replicaUrl(url, replica.host_name)))];
}

interface ColumnRow {
  name: string;
  type: string;
  default_kind: string;
  default_expression: string;
}

const columnsOf = (client: ClickHouseClient, database: string, table: string) =>
  select<ColumnRow>(
    client,
    `SELECT name, type, default_kind, default_expression FROM system.columns WHERE database = ${sqlLiteral(database)} AND table = ${sqlLiteral(table)}`,
  );

const declaration = (column: ColumnRow) =>
  `${sqlIdentifier(column.name)} ${column.type}${column.default_kind ? ` ${column.default_kind} ${column.default_expression}` : ''}`;

/** A local table's column as its Distributed table declares it. */
const distributedColumn = (column: ColumnRow) =>
  declaration(column.default_kind === 'MATERIALIZED' ? { ...column, default_kind: 'ALIAS' } : column);

const comparable = (text: string) => text.replace(/[\s`]/g, '');

/** Creates, replaces or drops `<database>.<table>` on every server so that it matches the shards' local table. */
async function syncDistributed(
  servers: Server[],
  firstShard: Server,
  database: string,
  local: string,
  cluster: string,
  tables: Map<string, string>,
): Promise<void> {
  const db = sqlIdentifier(database);
  for (const [table, shardingKey] of tables) {
    const name = `${db}.${sqlIdentifier(table)}`;
    const wanted = (await columnsOf(firstShard.client, local, table)).map(distributedColumn);
    const engine = `Distributed(${cluster}, ${local}, ${table}, ${shardingKey})`;
    for (const { client } of servers) {
      if (wanted.length === 0) {
        await client.command({ query: `DROP TABLE IF EXISTS ${name}` });
        continue;
      }
      const [current] = await select<{ engine_full: string }>(
        client,
        `SELECT engine_full FROM system.tables WHERE database = ${sqlLiteral(database)} AND name = ${sqlLiteral(table)}`,
      );
      const columns = (await columnsOf(client, database, table)).map(declaration);
      if (current && comparable(current.engine_full) === comparable(engine) && columns.join(',') === wanted.join(',')) continue;
      // Dropped and created again rather than swapped by RENAME: 18.16 keeps a Distributed table's
      // folder under the name it was created with, and DROP DATABASE then fails on the leftover.
      // Metadata only; an insert in that instant fails and is retried by its sender.
      if (current) await client.command({ query: `DROP TABLE ${name}` });
      await client.command({ query: `CREATE TABLE ${name} (${wanted.join(', ')}) ENGINE = ${engine}` });
    }
  }
}

/** The files applied on every shard; shards that disagree (a run that failed half-way) are left to the operator. */
async function shardsApplied(shards: Server[], db: string): Promise<Set<string>> {
  const sets = await Promise.all(shards.map((shard) => ensureMigrationsTable(shard.client, db)));
  const all = new Set(sets.flatMap((set) => [...set]));
  const partial = [...all].filter((file) => sets.some((set) => !set.has(file)));
  if (partial.length > 0) throw new Error(`ClickHouse shards differ in applied migrations (${partial.join(', ')}): finish them by hand`);
  return all;
}

async function migrateCluster(url: string, database: string, cluster: string, dir: string, upTo: string | undefined): Promise<void> {
  if (!PLAIN_NAME.test(cluster)) throw new Error(`unsafe ClickHouse cluster name: ${cluster}`);
  const db = sqlIdentifier(database);
  const local = `${database}_local`;
  const localDb = sqlIdentifier(local);
  const entry: Server = { url: new URL(url).toString(), client: await migrationClient(url) };
  const servers: Server[] = [entry];
  try {
    const shards: Server[] = [];
    for (const shardUrl of await clusterShardUrls(entry.client, url, cluster)) {
      let server = servers.find((known) => known.url === shardUrl);
      if (server === undefined) {
        server = { url: shardUrl, client: await migrationClient(shardUrl) };
        servers.push(server);
      }
      shards.push(server);
    }
    await entry.client.command({ query: `CREATE DATABASE IF NOT EXISTS ${db}` });
    const applied = await shardsApplied(shards, db);
    for (const shard of shards) await shard.client.command({ query: `CREATE DATABASE IF NOT EXISTS ${localDb}` });

    const distributed = new Map<string, string>();
    const sync = () => syncDistributed(servers, shards[0], database, local, cluster, distributed);
    for (const file of migrationFiles(dir, upTo)) {
      const migration = parseMigration(readFileSync(resolve(dir, file), 'utf8'), file);
      for (const table of migration.distributed) distributed.set(table.table, table.shardingKey);
      if (applied.has(file)) continue;
      for (const statement of migration.statements) {
        if (statement.once) {
          await sync();
          await entry.client.command({ query: statement.sql.replaceAll('{db}', db) });
        } else {
          for (const shard of shards) await shard.client.command({ query: statement.sql.replaceAll('{db}', localDb) });
        }
      }
      await sync();
      for (const shard of shards) await recordApplied(shard.client, db, file);
    }
    // Also gives the Distributed tables to a server of `url` that is not a shard and is new.
    await sync();
  } finally {
    await Promise.all(servers.map((server) => server.client.close()));
  }
}
