/** Workspace API key scopes (document 01, Authentication 2). */
export const WORKSPACE_SCOPES = [
  'integrations:read',
  'integrations:manage',
  'contracts:read',
  'contracts:write',
  'contracts:activate',
  'observations:read',
  'incidents:read',
  'repairs:read',
] as const;

export type WorkspaceScope = (typeof WORKSPACE_SCOPES)[number];

export function isWorkspaceScope(value: string): value is WorkspaceScope {
  return (WORKSPACE_SCOPES as readonly string[]).includes(value);
}

/** Account CLI scope suffixes (document 03, Authentication, Account CLI OAuth 4). */
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

/** A CLI scope as the OAuth grant and access tokens carry it: `service:cli:` + a suffix. */
export type CliScope = `service:cli:${CliScopeSuffix}`;

export const CLI_SCOPES: readonly CliScope[] = CLI_SCOPE_SUFFIXES.map((suffix) => `service:cli:${suffix}` as const);

/** Asks for a refresh token (03 Account CLI OAuth 1: the CLI requests `offline_access`). */
export const OFFLINE_ACCESS_SCOPE = 'offline_access';

export function isCliScope(value: string): value is CliScope {
  return (CLI_SCOPES as readonly string[]).includes(value);
}
