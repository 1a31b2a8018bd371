import type { FastifyInstance } from 'fastify';
import type { ErrorCode } from '../../shared/errors/index.js';
import { rejectPausedWrite } from '../maintenance.js';
import { readIdempotencyKey } from '../operations/idempotency.js';
import { deletionActorOf, deletionAuth, requireDeletionBinding } from './deletionAuth.js';
import { confirmDeletion } from './deletionConfirm.js';
import { previewDeletion } from './deletionService.js';
import { connectionTarget, integrationTarget, type DeletionTarget } from './deletionViews.js';
import { confirmBody, connectionParams, integrationParams, noQuery, previewBody, receiptSchema, reviewSchema } from './schemas.js';

/** The two targets of a reviewed deletion: the whole Integration, or one of its connections. */
export type DeletionKind = 'integration' | 'connection';

type DeletionParams = { workspaceIntegrationId: string; connectionId?: string };

const PATHS: Record<DeletionKind, string> = {
  integration: '/v1/integrations/:workspaceIntegrationId',
  connection: '/v1/integrations/:workspaceIntegrationId/connections/:connectionId',
};

const PARAMS = { integration: integrationParams, connection: connectionParams };

function targetOf(kind: DeletionKind, params: DeletionParams): DeletionTarget {
  return kind === 'integration'
    ? integrationTarget(params.workspaceIntegrationId)
    : connectionTarget(params.workspaceIntegrationId, params.connectionId ?? '');
}

/**
 * 03 "Integration deletion" codes of a preview beyond its hooks and schemas, and a setup token's
 * answer for a target it is not bound to (deletionAuth.ts; the reference lists it under 403).
 */
const PREVIEW_ERRORS: readonly ErrorCode[] = ['integration_scope_mismatch', 'not_found', 'workspace_unavailable'];

/** 03 "Integration deletion" codes of a confirmation, plus the keyed routes' conventions and the setup binding. */
const CONFIRM_ERRORS: readonly ErrorCode[] = [
  'integration_scope_mismatch',
  'not_found',
  'confirmation_mismatch',
  'deletion_preview_expired',
  'deletion_preview_stale',
  'operation_mismatch',
  'idempotency_key_required',
  'idempotency_conflict',
  'workspace_unavailable',
];

/** POST …/deletion-preview: 201 review; nothing is deleted. */
export function registerDeletionPreview(app: FastifyInstance, kind: DeletionKind): void {
  app.post<{ Params: DeletionParams; Body: Record<string, never> }>(
    `${PATHS[kind]}/deletion-preview`,
    {
      onRequest: [deletionAuth(), rejectPausedWrite],
      config: { validationError: 'invalid_integration_deletion', errors: PREVIEW_ERRORS },
      schema: { params: PARAMS[kind], querystring: noQuery, body: previewBody, response: { 201: reviewSchema } },
    },
    async (request, reply) => {
      requireDeletionBinding(request, request.params);
      const review = await previewDeletion(app.deps, deletionActorOf(request), targetOf(kind, request.params));
      return reply.code(201).send(review);
    },
  );
}

/** POST …/deletion: 201 the receipt of the first confirmation, 200 its replay. */
export function registerDeletionConfirmation(app: FastifyInstance, kind: DeletionKind): void {
  app.post<{ Params: DeletionParams; Body: { operationId: string; confirmName: string; fingerprint: string } }>(
    `${PATHS[kind]}/deletion`,
    {
      onRequest: [deletionAuth(), rejectPausedWrite],
      // The Idempotency-Key header is checked before the body, as on every keyed route.
      preValidation: async (request) => {
        readIdempotencyKey(request);
      },
      config: { validationError: 'invalid_integration_deletion', errors: CONFIRM_ERRORS },
      schema: { params: PARAMS[kind], querystring: noQuery, body: confirmBody, response: { 200: receiptSchema, 201: receiptSchema } },
    },
    async (request, reply) => {
      requireDeletionBinding(request, request.params);
      const result = await confirmDeletion(app.deps, deletionActorOf(request), targetOf(kind, request.params), {
        ...request.body,
        idempotencyKey: readIdempotencyKey(request),
      });
      return reply.code(result.statusCode).send(result.body);
    },
  );
}
