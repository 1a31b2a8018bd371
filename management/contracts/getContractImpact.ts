import type { FastifyInstance } from 'fastify';
import { compileContract } from '../../shared/analysis/compile.js';
import { loadOperations } from '../../shared/analysis/contractOperations.js';
import type { IncidentAggregate } from '../../shared/analysis/incidentAggregate.js';
import { inlineCompare } from '../../shared/analysis/inlineCompare.js';
import { analysisWindow, openIncidentsOf, planReanalysis } from '../../shared/analysis/reanalysisPlan.js';
import { AppError } from '../../shared/errors/index.js';
import { principalOf } from '../auth/apiKeyAuth.js';
import { workspaceAuth } from '../auth/workspaceAuth.js';
import { parseTimeRange } from '../observations/observationQuery.js';
import { requireCanonicalWorkspace } from '../workspaces/rules.js';
import { loadContractConnection, requireVersionIdForm } from './contractConnection.js';
import { findVersion } from './contractStore.js';
import { versionParams } from './schemas.js';
import type { AppDeps } from '../deps.js';
import type { ContractCaller } from './contractConnection.js';

const findingSchema = {
  type: 'object',
  required: ['kind', 'path', 'expected', 'observed', 'observationCount'],
  properties: {
    kind: { type: 'string' },
    path: { type: 'string' },
    expected: { type: 'string' },
    observed: { type: 'string' },
    forbidden: { type: 'boolean' },
    observationCount: { type: 'integer' },
  },
} as const;

const incidentChange = {
  type: 'object',
  required: ['incidentId', 'kind', 'operationKey', 'affectedRecords'],
  properties: {
    incidentId: { type: 'string' },
    kind: { type: 'string' },
    operationKey: { type: 'string' },
    affectedRecords: { type: 'integer' },
  },
} as const;

export const impactResponse = {
  type: 'object',
  required: ['contractVersionId', 'activeContractVersionId', 'from', 'to', 'resolves', 'continues', 'opens'],
  properties: {
    contractVersionId: { type: 'string' },
    activeContractVersionId: { type: ['string', 'null'] },
    from: { type: 'string' },
    to: { type: 'string' },
    resolves: { type: 'array', items: incidentChange },
    continues: { type: 'array', items: incidentChange },
    opens: {
      type: 'array',
      items: {
        type: 'object',
        required: ['kind', 'operationKey', 'affectedRecords', 'findings'],
        properties: {
          kind: { type: 'string' },
          operationKey: { type: 'string' },
          affectedRecords: { type: 'integer' },
          findings: { type: 'array', items: findingSchema },
        },
      },
    },
  },
} as const;

const findingsOf = (aggregate: IncidentAggregate) =>
  [...aggregate.findings.values()]
    .map(({ finding, count }) => ({ ...finding, observationCount: count }))
    .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : a.kind < b.kind ? -1 : 1));

/** 01 "Contract impact" body: what activating the version would do to the open incidents. */
export type ContractImpact = Awaited<ReturnType<typeof contractImpact>>;

/**
 * What activating `contractVersionId` would do, computed exactly as the analyzer's reanalysis
 * computes it, changing nothing: the `/v1` route's and the console's (management/contracts/console/).
 */
export async function contractImpact(
  deps: AppDeps,
  principal: ContractCaller,
  integrationId: string,
  contractVersionId: string,
  query: { from?: string; to?: string },
) {
  requireCanonicalWorkspace(principal);
  const range = parseTimeRange(query.from, query.to, 'invalid_contract_query');
  const window = analysisWindow(deps.clock.nowMs(), range);
  const connection = await loadContractConnection(deps.pool, principal, integrationId);
  requireVersionIdForm(contractVersionId);
  const version = await findVersion(deps.pool, connection.id, contractVersionId);
  if (!version) throw new AppError('contract_not_found');
  const compiled = compileContract(await loadOperations(deps.pool, version.id));
  const plan = await planReanalysis(
    deps.clickhouse,
    connection.id,
    { versionId: version.id, match: (observed) => compiled.match(observed) },
    window,
    await openIncidentsOf(deps.pool, connection.id, { lock: false }),
    inlineCompare(compiled),
  );
  return {
    contractVersionId: version.id,
    activeContractVersionId: connection.activeContractVersionId,
    from: new Date(window.fromMs).toISOString(),
    to: new Date(window.toMs).toISOString(),
    resolves: plan.resolved.map((incident) => ({
      incidentId: incident.id,
      kind: incident.kind,
      operationKey: incident.operationKey,
      affectedRecords: incident.affectedRecords,
    })),
    continues: plan.continued.map(({ incident, aggregate }) => ({
      incidentId: incident.id,
      kind: incident.kind,
      operationKey: incident.operationKey,
      affectedRecords: aggregate.count,
    })),
    opens: plan.opened.map((aggregate) => ({
      kind: aggregate.kind,
      operationKey: aggregate.operationKey,
      affectedRecords: aggregate.count,
      findings: findingsOf(aggregate),
    })),
  };
}

/**
 * GET /v1/integrations/{integrationId}/contracts/{contractVersionId}/impact?from&to: what
 * activating the version would do to the connection's open incidents, computed exactly as the
 * analyzer's reanalysis computes it (shared/analysis/reanalysisPlan.ts) over the stored traffic of
 * the window (default: the reanalysis window, the last 30 days), and changing nothing.
 */
export default async function getContractImpactRoute(app: FastifyInstance): Promise<void> {
  app.get<{ Params: { integrationId: string; contractVersionId: string }; Querystring: { from?: string; to?: string } }>(
    '/v1/integrations/:integrationId/contracts/:contractVersionId/impact',
    {
      onRequest: [workspaceAuth('contracts:read', { cli: 'allow' })],
      config: {
        validationError: 'contract_not_found',
        errors: ['integration_not_found', 'contract_not_found', 'workspace_modes_unavailable'],
      },
      schema: { params: versionParams, response: { 200: impactResponse } },
    },
    async (request, reply) => {
      const { integrationId, contractVersionId } = request.params;
      return reply.send(await contractImpact(app.deps, principalOf(request), integrationId, contractVersionId, request.query));
    },
  );
}
