import type { FastifyInstance } from 'fastify';
import { AppError } from '../../shared/errors/index.js';
import { currentSession } from '../auth/sessionAuth.js';
import { readExpectedOutcomes } from '../rules/console/consoleRuleService.js';
import { renderSignInPage } from './contractsView.js';
import { renderRulesPage } from './rulesView.js';

const pathString = { type: 'string', maxLength: 200 } as const;

/**
 * GET /console/workspaces/{slug}/integrations/{connectionId}/rules: a connection's reconciliation
 * rules (02 expected outcomes), with Add and Remove posting to the console rule routes under the
 * displayed revision. A view over the read those routes' service makes (owner or admin; a foreign
 * workspace or connection: the catalogue's 404).
 */
export default function rulesPageRoute(app: FastifyInstance): void {
  app.get<{ Params: { workspaceSlug: string; connectionId: string }; Querystring: { cursor?: string } }>(
    '/console/workspaces/:workspaceSlug/integrations/:connectionId/rules',
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
      if (!session) return reply.send(renderSignInPage('Reconciliation rules'));
      if (!session.emailVerified) throw new AppError('email_verification_required');
      const { workspaceSlug, connectionId } = request.params;
      const query = request.query.cursor === undefined ? {} : { cursor: request.query.cursor };
      const view = await readExpectedOutcomes(app.deps, session, workspaceSlug, connectionId, query);
      return reply.send(renderRulesPage(view, workspaceSlug));
    },
  );
}
