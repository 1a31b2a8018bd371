/**
 * What every route of the account CLI API (`/v1/cli`, 03) shares: its scopes, its workspace
 * header and the schema version its responses carry.
 */

/**
 * Account CLI OAuth scopes (03 Authentication, Account CLI OAuth 4): `service:cli:` plus one of
 * these suffixes. Routes name the suffix; tokens carry the full scope string.
 */
export const CLI_SCOPE_SUFFIXES = [
  'integrations:read',
  'integrations:manage',
  'contracts:read',
  'contracts:write',
  'contracts:activate',
  'observations:read',
  'incidents:read',
  'repairs:read',
  'repairs:create',
  'repairs:approve',
  'repairs:export',
  'replays:read',
] as const;

export type CliScopeSuffix = (typeof CLI_SCOPE_SUFFIXES)[number];

export const CLI_SCOPE_PREFIX = 'service:cli:';

/** The full scope string a CLI access token carries for a suffix. */
export function cliScope(suffix: CliScopeSuffix): string {
  return `${CLI_SCOPE_PREFIX}${suffix}`;
}

/** 03 Endpoints: workspace routes of the CLI API name their workspace by slug in this header. */
export const WORKSPACE_HEADER = 'X-Service-Workspace';

/** 03 Versioning 1: response objects of the CLI API carry `schemaVersion: 1`. */
export const CLI_SCHEMA_VERSION = 1;

/** The `schemaVersion` member of every CLI response schema. */
export const schemaVersionSchema = { type: 'integer', enum: [CLI_SCHEMA_VERSION] } as const;
