import type { FastifyInstance } from 'fastify';
import { readConnectionCoverage, type ConnectionCoverage } from '../connections/getConnectionCoverage.js';
import type { AppDeps } from '../deps.js';
import { readConnectionAnalytics } from '../observations/observationAnalytics.js';
import { usagePeriodOf } from '../../shared/usagePeriod.js';
import { workspaceUsage, type WorkspaceUsage } from '../usage/usageService.js';
import { consoleWorkspacePage } from './consoleRoute.js';
import { asWorkspaceManager, type ConsoleWorkspace } from './consoleWorkspace.js';
import { coverageBody, usageBody } from './usageView.js';

export interface DailyCount {
  /** The UTC day's start (ISO 8601). */
  start: string;
  count: number;
}

export interface UsagePageData {
  workspace: ConsoleWorkspace;
  usage: WorkspaceUsage;
  /** The chosen connection's accepted observations per UTC day of the month so far, or null when none is chosen. */
  daily: { connectionId: string; days: DailyCount[] } | null;
}

export interface CoveragePageData {
  workspace: ConsoleWorkspace;
  coverage: ConnectionCoverage;
}

/**
 * The month's usage of the workspace (the service of GET /v1/usage) and, for one connection, its
 * observations per UTC day of the month (the service of GET /v1/connections/{id}/analytics, bucket `day`).
 */
export async function usagePageData(deps: AppDeps, workspace: ConsoleWorkspace, connectionId: string | undefined): Promise<UsagePageData> {
  if (connectionId === undefined) return { workspace, usage: await workspaceUsage(deps, workspace.actor), daily: null };
  // The counters (Redis, PostgreSQL) and the month's daily counts (ClickHouse) are read at once.
  const now = deps.clock.now();
  const [usage, analytics] = await Promise.all([
    workspaceUsage(deps, workspace.actor),
    readConnectionAnalytics(deps, workspace.actor, connectionId, {
      from: usagePeriodOf(now).periodStart.toISOString(),
      to: now.toISOString(),
      bucket: 'day',
    }),
  ]);
  return {
    workspace,
    usage,
    daily: {
      connectionId: analytics.connectionId,
      days: analytics.buckets.map((bucket) => ({ start: bucket.start, count: bucket.count })),
    },
  };
}

/** The field coverage of one connection over the coverage read's default window (the last 30 days). */
export async function coveragePageData(deps: AppDeps, workspace: ConsoleWorkspace, connectionId: string): Promise<CoveragePageData> {
  return { workspace, coverage: await readConnectionCoverage(deps, workspace.actor.workspaceId, connectionId, {}) };
}

/**
 * GET /console/workspaces/{slug}/usage[?integration=int_…]: the month's usage, with the chosen
 * connection's observations per day as a server-rendered SVG bar chart;
 * GET /console/workspaces/{slug}/connections/{connectionId}/coverage: a connection's field coverage.
 */
export default function usagePages(app: FastifyInstance): void {
  consoleWorkspacePage<{ integration?: string }>(
    app,
    'usage',
    { query: { integration: { type: 'string', maxLength: 64 } } },
    async (request, ctx) => {
      const body = await asWorkspaceManager(app.deps, ctx, async (workspace) =>
        usageBody(await usagePageData(app.deps, workspace, request.query.integration)),
      );
      return ctx.render({ title: 'Usage', nav: 'usage', body });
    },
  );
  consoleWorkspacePage(app, 'connections/:connectionId/coverage', {}, async (request, ctx) => {
    const body = await asWorkspaceManager(app.deps, ctx, async (workspace) =>
      coverageBody(await coveragePageData(app.deps, workspace, request.params.connectionId ?? '')),
    );
    return ctx.render({ title: 'Field coverage', nav: 'integrations', body });
  });
}
