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
