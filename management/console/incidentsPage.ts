import type { FastifyInstance } from 'fastify';
import type { Deps } from '../deps.js';
import { listConnectionIncidents, readConnectionIncident, type IncidentListPage } from '../incidents/incidentReads.js';
import type { IncidentDetailView } from '../incidents/incidentStore.js';
import { consoleWorkspace, type ConsoleWorkspace, signedOut, slugParams } from './consoleWorkspace.js';
import { renderIncidentPage, renderIncidentsPage } from './incidentsView.js';

/** Incidents a page lists at once (the CLI's default page). */
export const CONSOLE_INCIDENT_PAGE = 25;

export interface IncidentsPageData {
  workspace: ConsoleWorkspace;
  connectionId: string;
  status: 'open' | 'resolved' | null;
  page: IncidentListPage;
}

export interface IncidentPageData {
  workspace: ConsoleWorkspace;
  connectionId: string;
  incident: IncidentDetailView;
}

/** One page of a connection's incidents: the CLI's connection read, with the console's own cursors. */
export async function incidentsPageData(
  deps: Deps,
  workspace: ConsoleWorkspace,
  query: { integration: string; status?: 'open' | 'resolved'; cursor?: string },
): Promise<IncidentsPageData> {
  const page = await listConnectionIncidents(
    deps,
    workspace.actor.workspaceId,
    query.integration,
    { status: query.status, cursor: query.cursor, limit: String(CONSOLE_INCIDENT_PAGE) },
    'console',
  );
  return { workspace, connectionId: query.integration, status: query.status ?? null, page };
}

/** One incident of the connection, with its findings and evidence (the CLI's detail read). */
export async function incidentPageData(
  deps: Deps,
  workspace: ConsoleWorkspace,
  connectionId: string,
  incidentId: string,
): Promise<IncidentPageData> {
  const incident = await readConnectionIncident(deps, workspace.actor.workspaceId, connectionId, incidentId);
  return { workspace, connectionId, incident };
}

const listQuery = {
  type: 'object',
  required: ['integration'],
  additionalProperties: false,
  properties: {
    integration: { type: 'string', maxLength: 64 },
    status: { type: 'string', enum: ['open', 'resolved'] },
    cursor: { type: 'string', maxLength: 2048 },
  },
} as const;

const detailQuery = {
  type: 'object',
  required: ['integration'],
  additionalProperties: false,
  properties: { integration: { type: 'string', maxLength: 64 } },
} as const;

const detailParams = {
  ...slugParams,
  required: [...slugParams.required, 'incidentId'],
  properties: { ...slugParams.properties, incidentId: { type: 'string', maxLength: 64 } },
} as const;

/**
 * GET /console/{workspaceSlug}/incidents?integration=int_…[&status][&cursor]: a connection's
 * incidents, newest first, paged; GET /console/{workspaceSlug}/incidents/{incidentId}?integration=int_…:
 * one incident with its findings and the ids of its evidence. A foreign or unknown connection or
 * incident is the catalogue 404.
 */
export default function incidentsPageRoutes(app: FastifyInstance): void {
  app.get<{ Params: { workspaceSlug: string }; Querystring: { integration: string; status?: 'open' | 'resolved'; cursor?: string } }>(
    '/console/:workspaceSlug/incidents',
    {
      config: {
        validationError: 'invalid_incident_query',
        errors: ['workspace_not_found', 'forbidden', 'connection_required', 'connection_not_found', 'invalid_incident_cursor'],
      },
      schema: { hide: true, params: slugParams, querystring: listQuery },
    },
    async (request, reply) => {
      const workspace = await consoleWorkspace(request, request.params.workspaceSlug);
      if (!workspace) return signedOut(reply);
      const data = await incidentsPageData(app.deps, workspace, request.query);
      return reply.type('text/html; charset=utf-8').send(renderIncidentsPage(data));
    },
  );
  app.get<{ Params: { workspaceSlug: string; incidentId: string }; Querystring: { integration: string } }>(
    '/console/:workspaceSlug/incidents/:incidentId',
    {
      config: {
        validationError: 'invalid_incident_query',
        errors: ['workspace_not_found', 'forbidden', 'connection_required', 'connection_not_found', 'incident_not_found'],
      },
      schema: { hide: true, params: detailParams, querystring: detailQuery },
    },
    async (request, reply) => {
      const workspace = await consoleWorkspace(request, request.params.workspaceSlug);
      if (!workspace) return signedOut(reply);
      const data = await incidentPageData(app.deps, workspace, request.query.integration, request.params.incidentId);
      return reply.type('text/html; charset=utf-8').send(renderIncidentPage(data));
    },
  );
}
