#!/usr/bin/env node
import '../../shared/supportedNode.js'; // first: refuses an unsupported Node before anything else loads
import { createClock } from '../../shared/clock.js';
import { ConfigError, loadConfig, type Config } from '../../shared/config.js';
import { createPool } from '../../shared/db/pool.js';
import { connectRedis } from '../../shared/redis.js';
import type { Deps } from '../deps.js';
import { helpRequest, parseCommand } from './args.js';
import { commandErrorBody } from './commandError.js';
import { helpText } from './commandTable.js';
import { runCommand } from './commands.js';

/**
 * The operator CLI (00-decisions §2): `npm run --silent admin -- <command> --json`. It prints
 * exactly one JSON object on stdout: the command's result, or `{error, message}` with exit 1.
 * `--help`, `-h` and `help` print the usage text instead (exit 0), without touching the stores.
 */
async function main(argv: string[]): Promise<number> {
  const topic = helpRequest(argv);
  if (topic !== null) {
    process.stdout.write(helpText(topic));
    return 0;
  }
  let config: Config;
  let deps: Deps | undefined;
  try {
    const parsed = parseCommand(argv);
    try {
      config = loadConfig();
    } catch (error) {
      if (error instanceof ConfigError) {
        process.stdout.write(`${JSON.stringify({ error: 'invalid_configuration', message: error.message })}\n`);
        return 1;
      }
      throw error;
    }
    const pool = createPool(config.databaseUrl, 2);
    const redis = await connectRedis(config.redisUrl).catch((error: unknown) => {
      void pool.end();
      throw error;
    });
    deps = { config, pool, redis, clock: createClock(config.enableTestClock, redis) };
    await deps.clock.sync();
    const result = await runCommand(deps, parsed);
    process.stdout.write(`${JSON.stringify(result)}\n`);
    return 0;
  } catch (error) {
    process.stdout.write(`${JSON.stringify(commandErrorBody(error))}\n`);
    return 1;
  } finally {
    if (deps) {
      await deps.pool.end().catch(() => undefined);
      deps.redis.disconnect();
    }
  }
}

process.exitCode = await main(process.argv.slice(2));
