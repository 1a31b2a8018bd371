import type { Queryable } from '../db/pool.js';

/** The `$defs` members each version keeps once (shared/contracts/definitions.ts), by version id. */
export async function readDefinitions(db: Queryable, versionIds: readonly string[]): Promise<Map<string, Record<string, unknown>>> {
  const { rows } = await db.query<{ id: string; definitions: Record<string, unknown> }>(
    'SELECT id, definitions FROM contract_versions WHERE id = ANY($1::text[])',
    [versionIds],
  );
  return new Map(rows.map((row) => [row.id, row.definitions]));
}
