import { createClient, type ClickHouseClient } from '@clickhouse/client';

export type { ClickHouseClient } from '@clickhouse/client';

export function createClickHouse(url: string, database: string): ClickHouseClient {
  return createClient({ url, database, request_timeout: 10_000, compression: { request: false, response: false } });
}
