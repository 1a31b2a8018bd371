import { loadConfig, ConfigError, type Config } from './config.js';

/** Loads config or exits with the reason: processes fail fast on bad configuration. */
export function loadConfigOrExit(): Config {
  try {
    return loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`configuration error: ${error.message}\n`);
      process.exit(78);
    }
    throw error;
  }
}

/** Runs `stop` once on SIGINT/SIGTERM, then exits. */
export function onShutdown(stop: () => Promise<void>): void {
  let stopping = false;
  const handler = () => {
    if (stopping) return;
    stopping = true;
    stop().then(() => process.exit(0), () => process.exit(1));
  };
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
}
