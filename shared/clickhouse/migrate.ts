import { readdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createClient } from '@clickhouse/client';
import { sqlIdentifier, sqlLiteral } from './escape.js';

function migrationsDir(): string {
  const here = fileURLToPath(new URL('.', import.meta.url));
  return resolve(here, import.meta.url.includes('/dist/') ? '../../../migrations/clickhouse' : '../../migrations/clickhouse');
}

/**
 * Applies ClickHouse migrations: numbered `.sql` files, statements separated by `;` lines,
 * `{db}` standing for the database. Applied names are kept in `schema_migrations`. `upTo`
 * stops after the migration of that file name (tests of a later migration start from there).
 */
export async function migrateClickHouse(url: string, database: string, upTo?: string): Promise<void> {
  const admin = createClient({ url });
  const db = sqlIdentifier(database);
  try {
    await admin.command({ query: `CREATE DATABASE IF NOT EXISTS ${db}` });
    await admin.command({
      query: `CREATE TABLE IF NOT EXISTS ${db}.schema_migrations (name String, applied_at DateTime) ENGINE = TinyLog`,
    });
    const applied = new Set(
      (await (await admin.query({ query: `SELECT name FROM ${db}.schema_migrations`, format: 'JSONEachRow' }))
        .json<{ name: string }>()).map((row) => row.name),
    );
    const dir = migrationsDir();
    for (const file of readdirSync(dir).filter((name) => name.endsWith('.sql')).sort()) {
      if (upTo !== undefined && file > upTo) break;
      if (applied.has(file)) continue;
      const text = readFileSync(resolve(dir, file), 'utf8').replaceAll('{db}', db);
      for (const statement of text.split(/;\s*$/m).map((s) => s.replace(/^\s*--.*$/gm, '').trim()).filter(Boolean)) {
        await admin.command({ query: statement });
      }
      await admin.command({ query: `INSERT INTO ${db}.schema_migrations VALUES (${sqlLiteral(file)}, now())` });
    }
  } finally {
    await admin.close();
  }
}
