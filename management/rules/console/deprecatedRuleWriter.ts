import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../../shared/errors/index.js';
import { hasIdForm } from '../../../shared/ids.js';
import { sessionAuth, sessionOf } from '../../auth/sessionAuth.js';
import { isOwnedConnection } from '../../contracts/retiredContractWriter.js';
import { connectionParams, noQuery } from '../schemas.js';

/** Runs first, so every answer of the route carries it, errors included. */
async function deprecationHeader(_request: FastifyRequest, reply: FastifyReply): Promise<void> {
  reply.header('Deprecation', 'true');
}

/**
 * Whatever rule definition an old console sends (or none) is accepted and ignored: nothing is
 * written. `properties: {}` keeps it from reading as an open document that the route would store
 * and check itself (plugins/storableStrings.ts), so unstorable strings get the route's 400.
 */
const anyBody = { anyOf: [{ type: 'null' }, { type: 'object', properties: {} }] } as const;

/**
 * POST /integrations/{connectionId}/reconciliation-rules, the deprecated browser-session rule
 * writer (02 Console rule routes): every request on a connection the user owns or administers is
 * 409 `canonical_lifecycle_required` and writes nothing (no rule, revision, receipt or audit);
 * rules change only under a reviewed revision (`…/expected-outcomes` or `/v1`). An unknown or
 * unowned connection is 404 `connection_not_found`.
 */
export default async function deprecatedRuleWriterRoute(app: FastifyInstance): Promise<void> {
  app.post<{ Params: { connectionId: string } }>(
    '/integrations/:connectionId/reconciliation-rules',
    {
      onRequest: [deprecationHeader, sessionAuth()],
      config: { validationError: 'invalid_rule_request', errors: ['canonical_lifecycle_required', 'connection_not_found'] },
      schema: { params: connectionParams, querystring: noQuery, body: anyBody },
    },
    async (request) => {
      const { connectionId } = request.params;
      if (!hasIdForm(connectionId, 'int_') || !(await isOwnedConnection(app.deps.pool, connectionId, sessionOf(request).userId))) {
        throw new AppError('connection_not_found');
      }
      throw new AppError('canonical_lifecycle_required');
    },
  );
}
