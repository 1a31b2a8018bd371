import type { FastifyInstance, FastifySchemaValidationError } from 'fastify';
import { AppError, type ErrorCode } from '../../shared/errors/index.js';
import { sessionAuth, sessionOf } from '../auth/sessionAuth.js';
import { workspaceSummarySchema } from './schemas.js';
import { createWorkspace, type CreateWorkspaceInput } from './workspaceService.js';

const FIELD_CODES: Record<string, ErrorCode> = {
  name: 'invalid_workspace_name',
  slug: 'invalid_workspace_slug',
  billingAccountId: 'invalid_billing_account_id',
};

/**
 * Each body field has its own spec code (01 Errors, workspace creation); an unknown field or a
 * body that is not an object has none, so it is the generic 400 `invalid_request`.
 */
function validationCode(errors: FastifySchemaValidationError[]): ErrorCode {
  const error = errors[0];
  const field =
    error?.keyword === 'required'
      ? String((error.params as { missingProperty?: unknown }).missingProperty)
      : ((error?.instancePath ?? '').split('/')[1] ?? '');
  return FIELD_CODES[field] ?? 'invalid_request';
}

/** POST /workspaces (01 Workspace console routes): 201 `{workspace}`, inactive, owner role. */
export default function createWorkspaceRoute(app: FastifyInstance): void {
  app.post<{ Body: CreateWorkspaceInput }>(
    '/workspaces',
    {
      onRequest: [sessionAuth()],
      attachValidation: true,
      config: {
        errors: [
          'invalid_workspace_name',
          'invalid_workspace_slug',
          'invalid_billing_account_id',
          'account_required',
          'account_not_found',
          'account_unavailable',
          'workspace_limit_reached',
          'workspace_slug_unavailable',
          'workspace_creation_rate_limited',
        ],
      },
      schema: {
        body: {
          type: 'object',
          additionalProperties: false,
          required: ['name'],
          properties: {
            name: { type: 'string' },
            slug: { type: 'string' },
            billingAccountId: { type: 'string' },
          },
        },
        response: { 201: { type: 'object', required: ['workspace'], properties: { workspace: workspaceSummarySchema } } },
      },
    },
    async (request, reply) => {
      if (request.validationError) throw new AppError(validationCode(request.validationError.validation));
      const workspace = await createWorkspace(app.deps, sessionOf(request), request.body);
      return reply.code(201).send({ workspace });
    },
  );
}
