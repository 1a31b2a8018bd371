import type { CliScope, CliScopeSuffix } from './scopes.js';

/**
 * What every route of the account CLI API (`/v1/cli`, 03) shares: its scopes, its workspace
 * header and the schema version its responses carry.
 */

/** The full scope string a CLI access token carries for a suffix (03 Account CLI OAuth 4). */
export function cliScope(suffix: CliScopeSuffix): CliScope {
  return `service:cli:${suffix}`;
}

/** 03 Endpoints: workspace routes of the CLI API name their workspace by slug in this header. */
export const WORKSPACE_HEADER = 'X-Service-Workspace';

/** 03 Versioning 1: response objects of the CLI API carry `schemaVersion: 1`. */
export const CLI_SCHEMA_VERSION = 1;

/** The `schemaVersion` member of every CLI response schema. */
export const schemaVersionSchema = { type: 'integer', enum: [CLI_SCHEMA_VERSION] } as const;
