// The route templates of a connection's active contract version, for the connection check: the
// collector learns from them how to templatise concrete paths (issue 26).
//
// Every check reads the connection's active version pointer from PostgreSQL (the store all edges share, so an
// activation through any management plane is seen by every edge at the next check); the routes
// are read only when that id differs from the one this edge cached for the connection, in the
// same statement: a check costs one query, a small one unless the active version changed.

import type pg from 'pg';

/** One distinct `{method, routeTemplate}` of the active version, with its operations' base paths. */
export interface ContractRoute {
  method: string;
  routeTemplate: string;
  /** The union of its operations' `base_paths` (e.g. `['/v1']`), sorted; empty at the root. */
  basePaths: string[];
}

export interface ActiveRoutes {
  /** Null when the connection has no active version. */
  versionId: string | null;
  routes: ContractRoute[];
  /** More distinct routes than MAX_ROUTES: the first ones in import order are given. */
  truncated: boolean;
}

/** Routes per answer (the OpenAI document has 75; a check answer stays well under 1 MB). */
export const MAX_ROUTES = 2_000;
/** Base paths per route (server enums expand to a few; more is not a path prefix scheme). */
export const MAX_BASE_PATHS = 16;
/** Connections whose routes one edge keeps. */
const MAX_CACHED_CONNECTIONS = 1_000;

const NO_CONTRACT: ActiveRoutes = { versionId: null, routes: [], truncated: false };

/**
 * $1 the connection, $2 the version id cached for it (or null), $3 the connection's protocol,
 * $4 MAX_ROUTES + 1 (to tell truncation). The routes come back null when the version is the cached one.
 */
const ACTIVE_ROUTES_QUERY = `
SELECT c.active_contract_version_id AS id,
       CASE WHEN c.active_contract_version_id IS NULL OR c.active_contract_version_id = $2 THEN NULL ELSE (
         SELECT coalesce(json_agg(json_build_object('method', r.method, 'routeTemplate', r.route_template, 'basePaths', r.base_paths) ORDER BY r.first), '[]'::json)
           FROM (SELECT o.method, o.route_template, min(o.position) AS first,
                        coalesce(array_agg(DISTINCT b.path ORDER BY b.path) FILTER (WHERE b.path IS NOT NULL), '{}') AS base_paths
                   FROM contract_operations o LEFT JOIN LATERAL unnest(o.base_paths) AS b(path) ON true
                  WHERE o.contract_version_id = c.active_contract_version_id AND o.protocol = $3
                  GROUP BY o.method, o.route_template
                  ORDER BY first
                  LIMIT $4) r
       ) END AS routes
  FROM connections c
 WHERE c.id = $1`;

/** Per-edge cache of the active routes per connection, bounded (least recently checked dropped first). */
export class ActiveRoutesCache {
  private readonly cached = new Map<string, ActiveRoutes>();

  constructor(private readonly pool: Pick<pg.Pool, 'query'>) {}

  /** HTTP protocols only: the route templates of queues and feeds are labels, not paths. */
  async of(connectionId: string, protocol: string): Promise<ActiveRoutes> {
    if (protocol !== 'http-api' && protocol !== 'http-webhook') return NO_CONTRACT;
    const known = this.cached.get(connectionId);
    const { rows } = await this.pool.query<{ id: string | null; routes: ContractRoute[] | null }>(ACTIVE_ROUTES_QUERY, [
      connectionId,
      known?.versionId ?? null,
      protocol,
      MAX_ROUTES + 1,
    ]);
    const row = rows[0];
    if (!row || row.id === null) {
      this.cached.delete(connectionId);
      return NO_CONTRACT;
    }
    let current = known;
    if (current === undefined || current.versionId !== row.id) {
      const all = row.routes ?? [];
      current = {
        versionId: row.id,
        routes: all.slice(0, MAX_ROUTES).map((route) => ({ ...route, basePaths: route.basePaths.slice(0, MAX_BASE_PATHS) })),
        truncated: all.length > MAX_ROUTES,
      };
    }
    this.cached.delete(connectionId);
    this.cached.set(connectionId, current);
    if (this.cached.size > MAX_CACHED_CONNECTIONS) this.cached.delete(this.cached.keys().next().value as string);
    return current;
  }
}
