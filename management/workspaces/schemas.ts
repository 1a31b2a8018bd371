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
