import type { FastifyInstance } from 'fastify';
import type { Deps } from '../deps.js';
import { listConnectionIncidents, readConnectionIncident, type IncidentListPage } from '../incidents/incidentReads.js';
import type { IncidentDetailView } from '../incidents/incidentStore.js';
import { listIncidentProposals } from '../repairs/repairReads.js';
import type { ProposalListItem } from '../repairs/repairStore.js';
import { consoleWorkspacePage } from './consoleRoute.js';
import { asWorkspaceManager, type ConsoleWorkspace, requiredQuery } from './consoleWorkspace.js';
import { chooseConnectionBody, incidentBody, incidentsBody } from './incidentsView.js';

/** Incidents a page lists at once (the CLI's default page). */
export const CONSOLE_INCIDENT_PAGE = 25;

export interface IncidentsQuery {
  integration?: string;
  status?: string;
  cursor?: string;
}

export interface IncidentsPageData {
  workspace: ConsoleWorkspace;
  connectionId: string;
  query: IncidentsQuery;
  page: IncidentListPage;
}

export interface IncidentPageData {
  workspace: ConsoleWorkspace;
  connectionId: string;
  incident: IncidentDetailView;
  /** The incident's repair proposals, newest first (the first page of the CLI's list). */
  proposals: ProposalListItem[];
}

/** Repair proposals the incident page lists (the CLI list's default page). */
export const CONSOLE_REPAIR_PAGE = 25;

/**
 * One page of a connection's incidents, newest first: the CLI's connection read (its `status`
 * filter and errors), with the console's own cursors.
 */
export async function incidentsPageData(deps: Deps, workspace: ConsoleWorkspace, query: IncidentsQuery): Promise<IncidentsPageData> {
  const connectionId = requiredQuery(query.integration, 'connection_required');
  const page = await listConnectionIncidents(
    deps,
    workspace.actor.workspaceId,
    connectionId,
    { status: query.status, cursor: query.cursor, limit: String(CONSOLE_INCIDENT_PAGE) },
    'console',
  );
  return { workspace, connectionId, query, page };
}

/** One incident of the connection, with its findings and evidence (the CLI's detail read) and its repairs. */
export async function incidentPageData(
  deps: Deps,
  workspace: ConsoleWorkspace,
  integration: string | undefined,
  incidentId: string,
): Promise<IncidentPageData> {
  const connectionId = requiredQuery(integration, 'connection_required');
  const incident = await readConnectionIncident(deps, workspace.actor.workspaceId, connectionId, incidentId);
  const proposals = await listIncidentProposals(
    deps,
    { workspaceId: workspace.actor.workspaceId, connectionId, incidentId: incident.id },
    { limit: String(CONSOLE_REPAIR_PAGE) },
  );
  return { workspace, connectionId, incident, proposals: proposals.items };
}

const ID = { type: 'string', maxLength: 64 } as const;

/**
 * GET /console/workspaces/{slug}/incidents?integration=int_…[&status][&cursor]: a connection's
 * incidents, newest first, paged (without `integration`: where to choose one); GET /console/workspaces/{slug}/incidents/{incidentId}?integration=int_…:
 * one incident with its findings and evidence. A foreign or unknown connection or incident is the
 * reads' catalogue 404.
 */
export default function incidentsPages(app: FastifyInstance): void {
  consoleWorkspacePage<IncidentsQuery>(
    app,
    'incidents',
    { query: { integration: ID, status: { type: 'string', pattern: '^(open|resolved)$' }, cursor: { type: 'string', maxLength: 2048 } } },
    async (request, ctx) => {
      const body = await asWorkspaceManager(app.deps, ctx, async (workspace) =>
        request.query.integration === undefined
          ? chooseConnectionBody(workspace.slug)
          : incidentsBody(await incidentsPageData(app.deps, workspace, request.query)),
      );
      return ctx.render({ title: 'Incidents', nav: 'integrations', body });
    },
  );
  consoleWorkspacePage<{ integration?: string }>(app, 'incidents/:incidentId', { query: { integration: ID } }, async (request, ctx) => {
    let title = 'Incident';
    const body = await asWorkspaceManager(app.deps, ctx, async (workspace) => {
      const data = await incidentPageData(app.deps, workspace, request.query.integration, request.params.incidentId ?? '');
      title = titleOf(data.incident.kind);
      return incidentBody(data);
    });
    return ctx.render({ title, nav: 'integrations', body });
  });
}

const KIND_TITLES: Record<string, string> = {
  'schema-drift': 'Schema drift',
  'unknown-operation': 'Unknown operation',
  'transport-errors': 'Transport errors',
  'expected-outcome-missing': 'Expected outcome missing',
};

/** The page title of an incident kind. */
export function titleOf(kind: string): string {
  return KIND_TITLES[kind] ?? kind;
}
