import type { FastifyInstance } from 'fastify';
import { compileContract } from '../../shared/analysis/compile.js';
import { loadOperations } from '../../shared/analysis/contractOperations.js';
import { fieldCoverage, observedPointers } from '../../shared/analysis/coverage.js';
import { groupsOfWindow } from '../../shared/analysis/observationGroups.js';
import { analysisWindow } from '../../shared/analysis/reanalysisPlan.js';
import type { SchemaShape } from '../../shared/analysis/types.js';
import { principalOf } from '../auth/apiKeyAuth.js';
import { workspaceAuth } from '../auth/workspaceAuth.js';
import { parseTimeRange } from '../observations/observationQuery.js';
import type { AppDeps } from '../deps.js';
import { loadWorkspaceConnection } from './workspaceConnection.js';

const coverageResponse = {
  type: 'object',
  required: ['connectionId', 'contractVersionId', 'from', 'to', 'operations'],
  properties: {
    connectionId: { type: 'string' },
    contractVersionId: { type: ['string', 'null'] },
    from: { type: 'string' },
    to: { type: 'string' },
    operations: {
      type: 'array',
      items: {
        type: 'object',
        required: ['operationKey', 'observations', 'declaredProperties', 'unobservedProperties', 'uncheckedProperties', 'truncated'],
        properties: {
          operationKey: { type: 'string' },
          observations: { type: 'integer' },
          inspectedObservations: { type: 'integer' },
          declaredProperties: { type: 'integer' },
          unobservedProperties: { type: 'array', items: { type: 'string' } },
          uncheckedProperties: { type: 'array', items: { type: 'string' } },
          truncated: { type: 'boolean' },
        },
      },
    },
  },
} as const;

/**
 * GET /v1/connections/{connectionId}/coverage?from&to: per operation of the active contract, how
 * many observations of the window matched it and which declared properties (JSON Pointers, array
 * items as `-`) none of their inspected shapes showed. Optional fields that never appear make
 * runtime validation pass vacuously; this read shows them, and the places whose schema the
 * import left unchecked (`uncheckedProperties`, `""` for the whole payload). Work follows the window's distinct
 * shapes (one row per shape from ClickHouse); the lists stop at MAX_COVERAGE_PROPERTIES declared
 * properties per operation (`truncated`). Default window: the last 30 days.
 */
export default async function getConnectionCoverageRoute(app: FastifyInstance): Promise<void> {
  app.get<{ Params: { connectionId: string }; Querystring: { from?: string; to?: string } }>(
    '/v1/connections/:connectionId/coverage',
    {
      onRequest: [workspaceAuth('observations:read', { cli: 'allow' })],
      config: { validationError: 'connection_not_found', errors: ['connection_not_found'] },
      schema: {
        params: { type: 'object', required: ['connectionId'], properties: { connectionId: { type: 'string' } } },
        response: { 200: coverageResponse },
      },
    },
    async (request, reply) => {
      const { connectionId } = request.params;
      return reply.send(await readConnectionCoverage(app.deps, principalOf(request).workspaceId, connectionId, request.query));
    },
  );
}

export interface ConnectionCoverage {
  connectionId: string;
  contractVersionId: string | null;
  from: string;
  to: string;
  operations: {
    operationKey: string;
    observations: number;
    inspectedObservations: number;
    declaredProperties: number;
    unobservedProperties: string[];
    uncheckedProperties: string[];
    truncated: boolean;
  }[];
}

/** The coverage of one connection of the workspace (the route's answer, also the console's coverage page). */
export async function readConnectionCoverage(
  deps: AppDeps,
  workspaceId: string,
  connectionId: string,
  query: { from?: string; to?: string },
): Promise<ConnectionCoverage> {
  const range = parseTimeRange(query.from, query.to, 'invalid_evidence_query');
  const connection = await loadWorkspaceConnection(deps.pool, workspaceId, connectionId);
  const { fromMs, toMs } = analysisWindow(deps.clock.nowMs(), range);
  const versionId = connection.activeContractVersionId;
  // The contract's operations (PostgreSQL) and the window's shapes (ClickHouse) are read at once.
  const [operations, groups] =
    versionId === null
      ? [[], []]
      : await Promise.all([loadOperations(deps.pool, versionId), groupsOfWindow(deps.clickhouse, connection.id, fromMs, toMs)]);
  const contract = compileContract(operations);
  const matched = new Map<string, { observations: number; inspected: number; seen: Set<string> }>(
    operations.map((operation) => [operation.id, { observations: 0, inspected: 0, seen: new Set<string>() }]),
  );
  if (operations.length > 0) {
    for (const group of groups) {
      const operation = contract.match(group);
      if (operation === null) continue;
      const entry = matched.get(operation.id)!;
      entry.observations += group.count;
      if (!group.schemaInspected) continue;
      entry.inspected += group.count;
      observedPointers(JSON.parse(group.shape!) as SchemaShape, entry.seen);
    }
  }
  return {
    connectionId: connection.id,
    contractVersionId: versionId,
    from: new Date(fromMs).toISOString(),
    to: new Date(toMs).toISOString(),
    operations: operations.map((operation) => {
      const entry = matched.get(operation.id)!;
      const fields = fieldCoverage(contract.schemaOf(operation));
      return {
        operationKey: operation.operationKey,
        observations: entry.observations,
        inspectedObservations: entry.inspected,
        declaredProperties: fields.declared.length,
        unobservedProperties: fields.declared.filter((pointer) => !entry.seen.has(pointer)),
        uncheckedProperties: fields.unchecked,
        truncated: fields.truncated,
      };
    }),
  };
}
