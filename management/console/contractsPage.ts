import type { FastifyInstance } from 'fastify';
import { AppError } from '../../shared/errors/index.js';
import { currentSession } from '../auth/sessionAuth.js';
import { activationReviewData, contractsPageData } from './contractsData.js';
import { renderActivationReview, renderContractsPage, renderSignInPage } from './contractsView.js';

const BASE = '/console/workspaces/:workspaceSlug/integrations/:connectionId/contracts';
const pathString = { type: 'string', maxLength: 200 } as const;

/**
 * The contract pages (issue 31): a connection's versions with their breaking changes against the
 * active one and the import form, and one version's activation review (precondition, dry-run
 * impact, breaking changes, then Activate or Roll back). Views over the services of the console's
 * contract routes (management/contracts/console/), which their forms post to. Without a session,
 * a sign-in form; a foreign workspace, connection or version is the catalogue's 404.
 */
export default function contractsPageRoutes(app: FastifyInstance): void {
  app.get<{ Params: { workspaceSlug: string; connectionId: string }; Querystring: { cursor?: string } }>(
    BASE,
    {
      config: { errors: [] },
      schema: {
        hide: true,
        params: {
          type: 'object',
          additionalProperties: false,
          required: ['workspaceSlug', 'connectionId'],
          properties: { workspaceSlug: pathString, connectionId: pathString },
        },
        querystring: { type: 'object', additionalProperties: false, properties: { cursor: { type: 'string', maxLength: 1000 } } },
      },
    },
    async (request, reply) => {
      const session = await currentSession(request);
      reply.type('text/html; charset=utf-8');
      if (!session) return reply.send(renderSignInPage('Contracts'));
      // As the routes the page calls (sessionAuth): nothing of a workspace before the e-mail is verified.
      if (!session.emailVerified) throw new AppError('email_verification_required');
      const { workspaceSlug, connectionId } = request.params;
      const data = await contractsPageData(app.deps, session, workspaceSlug, connectionId, request.query.cursor);
      return reply.send(renderContractsPage(data));
    },
  );

  app.get<{ Params: { workspaceSlug: string; connectionId: string; contractVersionId: string } }>(
    `${BASE}/:contractVersionId`,
    {
      config: { errors: [] },
      schema: {
        hide: true,
        params: {
          type: 'object',
          additionalProperties: false,
          required: ['workspaceSlug', 'connectionId', 'contractVersionId'],
          properties: { workspaceSlug: pathString, connectionId: pathString, contractVersionId: pathString },
        },
        querystring: { type: 'object', additionalProperties: false, properties: {} },
      },
    },
    async (request, reply) => {
      const session = await currentSession(request);
      reply.type('text/html; charset=utf-8');
      if (!session) return reply.send(renderSignInPage('Contract version'));
      if (!session.emailVerified) throw new AppError('email_verification_required');
      const { workspaceSlug, connectionId, contractVersionId } = request.params;
      const data = await activationReviewData(app.deps, session, workspaceSlug, connectionId, contractVersionId);
      return reply.send(renderActivationReview(data));
    },
  );
}
