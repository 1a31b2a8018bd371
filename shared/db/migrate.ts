import { fileURLToPath } from 'node:url';
import { resolve } from 'node:path';
import { runner } from 'node-pg-migrate';

const MIGRATIONS_DIR = resolve(fileURLToPath(new URL('.', import.meta.url)), '../../../migrations/postgres');
const SOURCE_MIGRATIONS_DIR = resolve(fileURLToPath(new URL('.', import.meta.url)), '../../migrations/postgres');

/** Applies pending PostgreSQL migrations (SQL files under migrations/postgres). */
export async function migratePostgres(databaseUrl: string): Promise<void> {
  // Works both from dist/shared/db (compiled) and shared/db (vitest runs the sources).
  const dir = import.meta.url.includes('/dist/') ? MIGRATIONS_DIR : SOURCE_MIGRATIONS_DIR;
  await runner({
    databaseUrl,
    dir,
    direction: 'up',
    migrationsTable: 'pgmigrations',
    checkOrder: true,
    log: () => undefined,
    noLock: false,
  });
}
