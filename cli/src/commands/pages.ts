// Cursor lists of the API read as one: pages of up to 100 (03 Limits: `limit` 1 to 100) followed
// by their `nextCursor` until the list ends or `max` items are read. The result is the API's own
// page body with every page's items in its list member, so `--json` keeps the route's shape: the
// other members are those of the last page, and `nextCursor` is null when the whole list was read,
// or the cursor that continues it after `max` items (each request asks only for what is missing,
// so that cursor points just past the last item printed).

import type { ApiClient } from '../api.js';

/** The API's largest page (03 Limits "CLI list pages", 01 "Contract list page", 02 rule lists). */
export const PAGE_SIZE = 100;

export interface CursorPage {
  nextCursor: string | null;
}

export interface PagedRead {
  api: ApiClient;
  /** The route without query, e.g. `/v1/cli/workspaces`. */
  path: string;
  /** Query members besides `limit` and `cursor` (undefined values are left out). */
  query?: Record<string, string | undefined>;
  workspace?: string;
  /** At most this many items (every page when absent). */
  max?: number;
}

/** `path` with its query members, the undefined ones left out. */
export function withQuery(path: string, query: Record<string, string | undefined>): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) if (value !== undefined) params.set(name, value);
  const text = params.toString();
  return text === '' ? path : `${path}?${text}`;
}

/** Reads the list's pages; `key` names the page member holding the items (`items`, `contracts`, `rules`). */
export async function readPages<P extends CursorPage, K extends keyof P>(key: K, read: PagedRead): Promise<P> {
  const max = read.max ?? Number.POSITIVE_INFINITY;
  const items: unknown[] = [];
  let cursor: string | undefined;
  for (;;) {
    const limit = Math.min(PAGE_SIZE, max - items.length);
    const page = await read.api.request<P>({
      method: 'GET',
      path: withQuery(read.path, { ...read.query, limit: String(limit), cursor }),
      workspace: read.workspace,
    });
    items.push(...(page[key] as unknown[]));
    if (page.nextCursor === null || items.length >= max) return { ...page, [key]: items };
    cursor = page.nextCursor;
  }
}
