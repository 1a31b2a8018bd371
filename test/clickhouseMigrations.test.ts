import { createHash, randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { createClickHouse } from '../shared/clickhouse/client.js';
import { sqlIdentifier } from '../shared/clickhouse/escape.js';
import { migrateClickHouse } from '../shared/clickhouse/migrate.js';

// Each test migrates a database of its own, so the shared test database is never rebuilt under other tests.
const CLICKHOUSE_URL = process.env.CLICKHOUSE_URL!;
const databases: string[] = [];
const scratch = () => {
  const name = `svc_test_migrate_${randomBytes(4).toString('hex')}`;
  databases.push(name);
  return name;
};
const query = async <T>(database: string, sql: string): Promise<T[]> => {
  const client = createClickHouse(CLICKHOUSE_URL, database);
  try {
    return await (await client.query({ query: sql, format: 'JSONEachRow' })).json<T>();
  } finally {
    await client.close();
  }
};

const insert = async (database: string, values: Record<string, unknown>[]): Promise<void> => {
  const client = createClickHouse(CLICKHOUSE_URL, database);
  try {
    await client.insert({ table: 'observations', values, format: 'JSONEachRow' });
  } finally {
    await client.close();
  }
};
/** The database's tables: a rebuild leaves none of its intermediate tables behind. */
const tableNames = async (database: string): Promise<string[]> =>
  (await query<{ name: string }>(database, `SELECT name FROM system.tables WHERE database = currentDatabase() ORDER BY name`)).map(
    (t) => t.name,
  );

afterAll(async () => {
  const client = createClickHouse(CLICKHOUSE_URL, 'default');
  for (const database of databases) await client.command({ query: `DROP DATABASE IF EXISTS ${sqlIdentifier(database)}` });
  await client.close();
});

describe('ClickHouse migration 0002 (observation binding)', () => {
  it('keeps every row written under 0001, each binding member readable under its old column name', async () => {
    const database = scratch();
    await migrateClickHouse(CLICKHOUSE_URL, database, '0001_observations.sql');
    const row = (eventId: string, mode: string) => ({
      connection_id: 'int_1',
      event_id: eventId,
      batch_id: 'bat_1',
      workspace_id: 'wrk_1',
      account_id: 'acct_1',
      integration_id: 'wint_1',
      integration_key: 'svc_int_1',
      tenant_id: 'ten_1',
      environment_id: 'env_1',
      mode,
      envelope_version: '0.2',
      direction: 'inbound',
      protocol: 'queue',
      event_type: 'order.created',
      operation_key: 'POST orders:message:0',
      method: 'POST',
      route_template: 'orders',
      payload_location: 'message',
      status_code: 0,
      duration_ms: 1.5,
      attempt: 2,
      occurred_at_ms: 1000,
      received_at_ms: 2000,
      received_date: '2026-11-24',
      observed_fingerprint: '',
      schema_fingerprint: 'sha256:ab',
      schema_inspected: 1,
      schema_shape: '{"kind":"null"}',
      redaction_policy_version: 'r1',
      source_event_id_hash: 'h1',
      idempotency_key_hash: '',
      hash_namespace: 'n',
      outcome_accepted: 1,
      business_object_type: '',
      business_object_id_hash: '',
    });
    await insert(database, [row('evt_a', 'live'), row('evt_b', 'sandbox')]);
    await migrateClickHouse(CLICKHOUSE_URL, database);
    const rows = await query<Record<string, unknown>>(
      database,
      `SELECT binding, workspace_id, account_id, integration_id, integration_key,
      tenant_id, environment_id, mode, direction, protocol, operation_key, attempt FROM observations ORDER BY event_id`,
    );
    expect(rows).toEqual(
      ['live', 'sandbox'].map((mode) => ({
        binding: `wrk_1|acct_1|wint_1|svc_int_1|ten_1|env_1|${mode}|inbound|queue`,
        workspace_id: 'wrk_1',
        account_id: 'acct_1',
        integration_id: 'wint_1',
        integration_key: 'svc_int_1',
        tenant_id: 'ten_1',
        environment_id: 'env_1',
        mode,
        direction: 'inbound',
        protocol: 'queue',
        operation_key: 'POST orders:message:0',
        attempt: 2,
      })),
    );
    expect(await tableNames(database)).toEqual(['observations', 'schema_migrations']);
    // Applied once: running the migrations again changes nothing.
    await migrateClickHouse(CLICKHOUSE_URL, database);
    expect(await query(database, 'SELECT count() AS n FROM observations')).toEqual([{ n: '2' }]);
  });
});

/** An observations row as 0002 and later store it. */
const row = (eventId: string, receivedAtMs: number, shape: string) => ({
  connection_id: 'int_1',
  event_id: eventId,
  batch_id: 'bat_1',
  binding: 'wrk_1|acct_1|wint_1|svc_int_1|ten_1|env_1|live|outbound|http-api',
  envelope_version: '0.3',
  event_type: 'order.read',
  method: 'GET',
  route_template: '/o',
  payload_location: 'response',
  status_code: 200,
  duration_ms: 1,
  attempt: 1,
  occurred_at_ms: 1000,
  received_at_ms: receivedAtMs,
  received_date: '2026-11-25',
  observed_fingerprint: '',
  schema_fingerprint: 'sha256:ab',
  schema_inspected: 1,
  schema_shape: shape,
  redaction_policy_version: 'r1',
  source_event_id_hash: '',
  idempotency_key_hash: '',
  hash_namespace: '',
  outcome_accepted: 1,
  business_object_type: '',
  business_object_id_hash: '',
});

describe('ClickHouse migration 0003 (receipt-time order, shape hash)', () => {
  it('keeps every row written under 0002, sorts by connection and receipt time, and hashes each stored shape', async () => {
    const database = scratch();
    await migrateClickHouse(CLICKHOUSE_URL, database, '0002_observation_binding.sql');
    await insert(database, [row('evt_a', 3000, '{"kind":"null"}'), row('evt_b', 2000, '{"kind":"string"}')]);
    await migrateClickHouse(CLICKHOUSE_URL, database);
    const rows = await query<Record<string, unknown>>(
      database,
      `SELECT event_id, received_at_ms, lower(hex(shape_hash)) AS hash, schema_shape FROM observations ORDER BY event_id`,
    );
    const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
    expect(rows).toEqual([
      { event_id: 'evt_a', received_at_ms: '3000', hash: sha256('{"kind":"null"}'), schema_shape: '{"kind":"null"}' },
      { event_id: 'evt_b', received_at_ms: '2000', hash: sha256('{"kind":"string"}'), schema_shape: '{"kind":"string"}' },
    ]);
    const [table] = await query<{ sorting_key: string }>(
      database,
      `SELECT sorting_key FROM system.tables WHERE database = currentDatabase() AND name = 'observations'`,
    );
    expect(table.sorting_key).toBe('connection_id, received_at_ms, event_id');
    expect(await tableNames(database)).toEqual(['observations', 'schema_migrations']);
  });
});

describe('ClickHouse migration 0004 (1,024-row granules)', () => {
  it('keeps every row written under 0003, with its shape hash, in a table of 1,024-row granules', async () => {
    const database = scratch();
    await migrateClickHouse(CLICKHOUSE_URL, database, '0003_observation_time_order.sql');
    await insert(database, [row('evt_a', 3000, '{"kind":"null"}'), row('evt_b', 2000, '{"kind":"string"}')]);
    const before = await query(database, 'SELECT event_id, received_at_ms, hex(shape_hash) AS hash FROM observations ORDER BY event_id');
    await migrateClickHouse(CLICKHOUSE_URL, database);
    expect(await query(database, 'SELECT event_id, received_at_ms, hex(shape_hash) AS hash FROM observations ORDER BY event_id')).toEqual(
      before,
    );
    expect(before).toHaveLength(2);
    const [table] = await query<{ sorting_key: string; engine_full: string }>(
      database,
      `SELECT sorting_key, engine_full FROM system.tables WHERE database = currentDatabase() AND name = 'observations'`,
    );
    expect(table.sorting_key).toBe('connection_id, received_at_ms, event_id');
    expect(table.engine_full).toMatch(/SETTINGS index_granularity = 1024$/);
    expect(await tableNames(database)).toEqual(['observations', 'schema_migrations']);
  });
});

describe('ClickHouse migration 0005 (LowCardinality shape, binding and fingerprint)', () => {
  it('keeps every row written under 0004, its values and shape hash, in LowCardinality columns that read as before', async () => {
    const database = scratch();
    await migrateClickHouse(CLICKHOUSE_URL, database, '0004_observation_granularity.sql');
    await insert(database, [
      row('evt_a', 3000, '{"kind":"null"}'),
      row('evt_b', 2000, '{"kind":"string"}'),
      row('evt_c', 2500, '{"kind":"null"}'),
    ]);
    const read = `SELECT event_id, received_at_ms, schema_shape, binding, workspace_id, schema_fingerprint, hex(shape_hash) AS hash
      FROM observations ORDER BY event_id`;
    const before = await query(database, read);
    await migrateClickHouse(CLICKHOUSE_URL, database);
    expect(await query(database, read)).toEqual(before);
    expect(before).toHaveLength(3);
    const types = await query<{ name: string; type: string }>(
      database,
      `SELECT name, type FROM system.columns WHERE database = currentDatabase() AND table = 'observations'
        AND name IN ('schema_shape', 'binding', 'schema_fingerprint') ORDER BY name`,
    );
    expect(types.map(({ name, type }) => `${name} ${type}`)).toEqual([
      'binding LowCardinality(String)',
      'schema_fingerprint LowCardinality(String)',
      'schema_shape LowCardinality(String)',
    ]);
    // A row inserted afterwards groups by shape hash with the migrated ones.
    await insert(database, [row('evt_d', 4000, '{"kind":"null"}')]);
    const groups = await query<{ shape: string; n: string }>(
      database,
      'SELECT any(schema_shape) AS shape, uniqExact(event_id) AS n FROM observations GROUP BY shape_hash ORDER BY shape',
    );
    expect(groups).toEqual([
      { shape: '{"kind":"null"}', n: '3' },
      { shape: '{"kind":"string"}', n: '1' },
    ]);
    expect(await tableNames(database)).toEqual(['observations', 'schema_migrations']);
  });
});
