/**
 * The body of a POST or DELETE that takes none: absent, `null` or `{}`; anything else is refused
 * (unknown fields are rejected, never ignored).
 */
export const EMPTY_BODY_SCHEMA = {
  anyOf: [{ type: 'null' }, { type: 'object', additionalProperties: false, properties: {} }],
} as const;

/** `{workspaceSlug}` path parameter; a value that cannot be a slug is simply not found (404). */
export const workspaceSlugParams = {
  type: 'object',
  required: ['workspaceSlug'],
  properties: { workspaceSlug: { type: 'string' } },
} as const;

/**
 * The path parameters of a browser-session adapter: the API route's own, after `{workspaceSlug}`
 * (02: adapters use the same paths under /workspaces/{workspaceSlug} instead of /v1).
 */
export function withWorkspaceSlug<const Required extends readonly string[], const Properties extends object>(params: {
  required: Required;
  properties: Properties;
}) {
  return {
    type: 'object',
    required: ['workspaceSlug', ...params.required],
    properties: { workspaceSlug: { type: 'string' }, ...params.properties },
    additionalProperties: false,
  } as const;
}

export const environmentSummarySchema = {
  type: 'object',
  required: ['id', 'name', 'slug', 'category', 'isDefault'],
  properties: {
    id: { type: 'string' },
    name: { type: 'string' },
    slug: { type: 'string' },
    category: { type: 'string' },
    isDefault: { type: 'boolean' },
  },
} as const;

/** 01 Workspace summary, plus `status` and `canManageLifecycle` (the console list needs both). */
export const workspaceSummarySchema = {
  type: 'object',
  required: ['id', 'tenantId', 'name', 'slug', 'role', 'active', 'status', 'environments', 'canManageLifecycle'],
  properties: {
    id: { type: 'string' },
    tenantId: { type: 'string' },
    name: { type: 'string' },
    slug: { type: 'string' },
    role: { type: 'string', enum: ['owner', 'admin', 'viewer'] },
    active: { type: 'boolean' },
    status: { type: 'string', enum: ['active', 'archived'] },
    environments: { type: 'array', items: environmentSummarySchema },
    canManageLifecycle: { type: 'boolean' },
  },
} as const;
