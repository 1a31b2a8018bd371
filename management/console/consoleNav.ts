/**
 * The navigation of a workspace's console pages, in order: each entry is a page under
 * `/console/workspaces/{slug}/{path}` registered with `consoleWorkspacePage` (consoleRoute.ts).
 * A new page adds its line here.
 */
export const WORKSPACE_NAV: readonly { path: string; label: string }[] = [{ path: 'api-keys', label: 'API keys' }];
