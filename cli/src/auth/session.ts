import type { Session } from '../context.js';
import { CliError, EXIT } from '../errors.js';

// Placeholder until the profile store and the login land (issue 30).
export function createSession(): Session {
  const missing = (): never => {
    throw new CliError('not logged in: run `iw login`', EXIT.authentication);
  };
  return { profile: missing, saveWorkspace: missing, api: missing, idempotencyKey: missing, settled: missing };
}
