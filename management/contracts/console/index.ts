// Issue 31: the console's contract routes (browser session). The Contract API is for workspace
// API keys and CLI tokens (01); these session adapters run its own services (contractReads,
// contractRegistration, contractActivation, the impact dry-run) with the signed-in owner or admin
// as the caller, so imports, lifecycle moves, rate limits, revisions and audit are the same. The
// retired writer `POST /contracts` stays retired: these are canonical routes of one connection.

import type { FastifyInstance } from 'fastify';
import { sessionAuth, sessionOf } from '../../auth/sessionAuth.js';
import { activeWorkspaceManager, requireWorkspaceManager } from '../../auth/workspaceUserAuth.js';
import { withWorkspaceSlug } from '../../workspaces/schemas.js';
import { ACTIVATION_ERRORS } from '../activateContract.js';
import { type ActivationInput, activateContract } from '../contractActivation.js';
import { reserveContractWrite } from '../contractRateLimit.js';
import { type ContractListQuery, listContracts, readContract } from '../contractReads.js';
import { type RegistrationInput, registerContract } from '../contractRegistration.js';
import { REGISTRATION_ERRORS } from '../registerContract.js';
import { contractImpact, impactResponse } from '../getContractImpact.js';
import { requireReanalysisAvailable } from '../reanalysis.js';
import {
  activationBody,
  activationResponse,
  listQuery,
  listResponse,
  registrationBody,
  registrationResponse,
  singleResponse,
} from '../schemas.js';

const COLLECTION = '/workspaces/:workspaceSlug/integrations/:connectionId/contracts';

const connectionParams = withWorkspaceSlug({ required: ['connectionId'], properties: { connectionId: { type: 'string' } } });
const versionParams = withWorkspaceSlug({
  required: ['connectionId', 'contractVersionId'],
  properties: { connectionId: { type: 'string' }, contractVersionId: { type: 'string' } },
});
const impactQuery = {
  type: 'object',
  additionalProperties: false,
  properties: { from: { type: 'string' }, to: { type: 'string' } },
} as const;

/** The session's errors before the contract's: an unknown workspace or a non-member (404), a viewer (403). */
const MANAGER_ERRORS = ['workspace_not_found', 'forbidden'] as const;

interface ConnectionPath {
  workspaceSlug: string;
  connectionId: string;
}
interface VersionPath extends ConnectionPath {
  contractVersionId: string;
}

/**
 * GET and POST …/contracts, GET …/contracts/{id}, GET …/contracts/{id}/impact and POST
 * …/contracts/{id}/activate under `/workspaces/{workspaceSlug}/integrations/{connectionId}`: owner
 * or admin. Reads stay open in an archived workspace (the services then answer as for any legacy
 * or archived caller); writes need an active one (409 `workspace_unavailable`).
 */
export default async function consoleContractRoutes(app: FastifyInstance): Promise<void> {
  app.get<{ Params: ConnectionPath; Querystring: ContractListQuery }>(
    COLLECTION,
    {
      onRequest: [sessionAuth()],
      config: {
        validationError: 'invalid_contract_query',
        errors: [
          ...MANAGER_ERRORS,
          'integration_not_found',
          'invalid_contract_query',
          'invalid_contract_cursor',
          'workspace_modes_unavailable',
        ],
      },
      schema: { params: connectionParams, querystring: listQuery, response: { 200: listResponse } },
    },
    async (request, reply) => {
      const { actor } = await requireWorkspaceManager(app.deps.pool, sessionOf(request), request.params.workspaceSlug);
      return reply.send(await listContracts(app.deps, actor, request.params.connectionId, request.query));
    },
  );

  app.post<{ Params: ConnectionPath; Body: RegistrationInput }>(
    COLLECTION,
    {
      onRequest: [sessionAuth()],
      config: {
        validationError: 'invalid_contract',
        errors: [...MANAGER_ERRORS, 'workspace_unavailable', ...REGISTRATION_ERRORS],
      },
      schema: { params: connectionParams, body: registrationBody, response: { 201: registrationResponse } },
    },
    async (request, reply) => {
      const actor = await activeWorkspaceManager(app.deps.pool, sessionOf(request), request.params.workspaceSlug);
      await reserveContractWrite(app.deps, actor, 'registration');
      return reply.code(201).send(await registerContract(app.deps, actor, request.params.connectionId, request.body));
    },
  );

  app.get<{ Params: VersionPath }>(
    `${COLLECTION}/:contractVersionId`,
    {
      onRequest: [sessionAuth()],
      config: {
        validationError: 'contract_not_found',
        errors: [...MANAGER_ERRORS, 'integration_not_found', 'contract_not_found', 'workspace_modes_unavailable'],
      },
      schema: { params: versionParams, response: { 200: singleResponse } },
    },
    async (request, reply) => {
      const { workspaceSlug, connectionId, contractVersionId } = request.params;
      const { actor } = await requireWorkspaceManager(app.deps.pool, sessionOf(request), workspaceSlug);
      return reply.send({ contract: await readContract(app.deps, actor, connectionId, contractVersionId) });
    },
  );

  app.get<{ Params: VersionPath; Querystring: { from?: string; to?: string } }>(
    `${COLLECTION}/:contractVersionId/impact`,
    {
      onRequest: [sessionAuth()],
      config: {
        validationError: 'invalid_contract_query',
        errors: [...MANAGER_ERRORS, 'integration_not_found', 'contract_not_found', 'invalid_contract_query', 'workspace_modes_unavailable'],
      },
      schema: { params: versionParams, querystring: impactQuery, response: { 200: impactResponse } },
    },
    async (request, reply) => {
      const { workspaceSlug, connectionId, contractVersionId } = request.params;
      const { actor } = await requireWorkspaceManager(app.deps.pool, sessionOf(request), workspaceSlug);
      return reply.send(await contractImpact(app.deps, actor, connectionId, contractVersionId, request.query));
    },
  );

  app.post<{ Params: VersionPath; Body: ActivationInput }>(
    `${COLLECTION}/:contractVersionId/activate`,
    {
      // As the /v1 route: reanalysis availability before the write pause (sessionAuth checks both the session and the pause).
      onRequest: [requireReanalysisAvailable, sessionAuth()],
      config: {
        validationError: 'invalid_contract_activation',
        errors: [...MANAGER_ERRORS, 'workspace_unavailable', ...ACTIVATION_ERRORS],
      },
      schema: { params: versionParams, body: activationBody, response: { 200: activationResponse } },
    },
    async (request, reply) => {
      const { workspaceSlug, connectionId, contractVersionId } = request.params;
      const actor = await activeWorkspaceManager(app.deps.pool, sessionOf(request), workspaceSlug);
      await reserveContractWrite(app.deps, actor, 'activation');
      return reply.send(await activateContract(app.deps, actor, connectionId, contractVersionId, request.body));
    },
  );
}
