import type { FastifyInstance } from 'fastify';
import { readExpectedOutcomes } from '../rules/console/consoleRuleService.js';
import { consoleWorkspacePage } from './consoleRoute.js';
import { renderRulesPage } from './rulesView.js';

/**
 * GET /console/workspaces/{slug}/integrations/{connectionId}/rules: a connection's reconciliation
 * rules (02 expected outcomes), with Add and Remove posting to the console rule routes under the
 * displayed revision. A view over the read those routes' service makes (owner or admin; a foreign
 * connection: the catalogue's 404).
 */
export default function rulesPageRoute(app: FastifyInstance): void {
  consoleWorkspacePage<{ cursor?: string }>(
    app,
    'integrations/:connectionId/rules',
    { query: { cursor: { type: 'string', maxLength: 1000 } } },
    async (request, ctx) => {
      const query = request.query.cursor === undefined ? {} : { cursor: request.query.cursor };
      const view = await readExpectedOutcomes(app.deps, ctx.session, ctx.workspace.slug, request.params.connectionId, query);
      return ctx.render(renderRulesPage(view, ctx.workspace.slug));
    },
  );
}
