import type { FastifyInstance } from 'fastify';
import { readConnectionCoverage, type ConnectionCoverage } from '../connections/getConnectionCoverage.js';
import type { AppDeps } from '../deps.js';
import { readConnectionAnalytics } from '../observations/observationAnalytics.js';
import { workspaceUsage, type WorkspaceUsage } from '../usage/usageService.js';
import { consoleWorkspace, type ConsoleWorkspace, signedOut, slugParams } from './consoleWorkspace.js';
import { renderCoveragePage, renderUsagePage } from './usageView.js';

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
 * observations per day of the month (the service of GET /v1/connections/{id}/analytics, bucket `day`).
 */
export async function usagePageData(deps: AppDeps, workspace: ConsoleWorkspace, connectionId: string | undefined): Promise<UsagePageData> {
  const usage = await workspaceUsage(deps, workspace.actor);
  if (connectionId === undefined) return { workspace, usage, daily: null };
  const analytics = await readConnectionAnalytics(deps, workspace.actor, connectionId, {
    from: usage.periodStart,
    to: new Date(deps.clock.nowMs()).toISOString(),
    bucket: 'day',
  });
  return {
    workspace,
    usage,
    daily: {
      connectionId: analytics.connectionId,
      days: analytics.buckets.map((bucket) => ({ start: bucket.start, count: bucket.count })),
    },
  };
}

/** The field coverage of one connection over the default window (the last 30 days). */
export async function coveragePageData(deps: AppDeps, workspace: ConsoleWorkspace, connectionId: string): Promise<CoveragePageData> {
  return { workspace, coverage: await readConnectionCoverage(deps, workspace.actor.workspaceId, connectionId, {}) };
}

const coverageParams = {
  ...slugParams,
  required: [...slugParams.required, 'connectionId'],
  properties: { ...slugParams.properties, connectionId: { type: 'string', maxLength: 64 } },
} as const;

/**
 * GET /console/{workspaceSlug}/usage[?integration=int_…]: the month's usage, with the chosen
 * connection's observations per day as a server-rendered SVG bar chart;
 * GET /console/{workspaceSlug}/connections/{connectionId}/coverage: a connection's field coverage.
 */
export default function usagePageRoutes(app: FastifyInstance): void {
  app.get<{ Params: { workspaceSlug: string }; Querystring: { integration?: string } }>(
    '/console/:workspaceSlug/usage',
    {
      config: { validationError: 'invalid_evidence_query', errors: ['workspace_not_found', 'forbidden', 'connection_not_found'] },
      schema: {
        hide: true,
        params: slugParams,
        querystring: { type: 'object', additionalProperties: false, properties: { integration: { type: 'string', maxLength: 64 } } },
      },
    },
    async (request, reply) => {
      const workspace = await consoleWorkspace(request, request.params.workspaceSlug);
      if (!workspace) return signedOut(reply);
      const data = await usagePageData(app.deps, workspace, request.query.integration);
      return reply.type('text/html; charset=utf-8').send(renderUsagePage(data));
    },
  );
  app.get<{ Params: { workspaceSlug: string; connectionId: string } }>(
    '/console/:workspaceSlug/connections/:connectionId/coverage',
    {
      config: { validationError: 'connection_not_found', errors: ['workspace_not_found', 'forbidden', 'connection_not_found'] },
      schema: { hide: true, params: coverageParams, querystring: { type: 'object', additionalProperties: false, properties: {} } },
    },
    async (request, reply) => {
      const workspace = await consoleWorkspace(request, request.params.workspaceSlug);
      if (!workspace) return signedOut(reply);
      const data = await coveragePageData(app.deps, workspace, request.params.connectionId);
      return reply.type('text/html; charset=utf-8').send(renderCoveragePage(data));
    },
  );
}
