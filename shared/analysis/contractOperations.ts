import { readDefinitions } from '../contracts/definitionStore.js';
import { withDefinitions } from '../contracts/definitions.js';
import type { Queryable } from '../db/pool.js';
import type { AnalysedOperation } from './types.js';

/** Reads a version's operations (immutable once registered, 01 "Contract version"), each schema self-contained. */
export async function loadOperations(db: Queryable, versionId: string): Promise<AnalysedOperation[]> {
  const { rows } = await db.query<{
    id: string;
    operation_key: string;
    method: string;
    route_template: string;
    base_paths: string[];
    payload_location: string;
    status_selector: string;
    schema: Record<string, unknown>;
    unchecked: { schemaPointer: string }[];
  }>(
    `SELECT id, operation_key, method, route_template, base_paths, payload_location, status_selector, schema, unchecked
       FROM contract_operations WHERE contract_version_id = $1 ORDER BY position`,
    [versionId],
  );
  const definitions = (await readDefinitions(db, [versionId])).get(versionId) ?? {};
  return rows.map((row) => ({
    id: row.id,
    operationKey: row.operation_key,
    method: row.method,
    routeTemplate: row.route_template,
    basePaths: row.base_paths,
    payloadLocation: row.payload_location,
    statusSelector: row.status_selector,
    schema: withDefinitions(row.schema, definitions),
    uncheckedPointers: [...new Set(row.unchecked.map((entry) => entry.schemaPointer))],
  }));
}
