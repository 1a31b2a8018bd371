import '../supportedNode.js'; // first: refuses an unsupported Node before anything else loads
import { migrateClickHouse } from '../clickhouse/migrate.js';
import { loadConfigOrExit } from '../runtime.js';
import { migratePostgres } from './migrate.js';

/** `npm run migrate`: applies PostgreSQL and ClickHouse migrations for the configured stores. */
const config = loadConfigOrExit();
await migratePostgres(config.databaseUrl);
await migrateClickHouse(config.clickhouseUrl, config.clickhouseDatabase, undefined, { cluster: config.clickhouseCluster });
process.stdout.write('migrations applied\n');
