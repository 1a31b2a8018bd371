import type { FastifyInstance } from 'fastify';
import { consoleWorkspacePage } from './consoleRoute.js';
import { activationReviewData, contractsPageData } from './contractsData.js';
import { renderActivationReview, renderContractsPage } from './contractsView.js';

/**
 * The contract pages (issue 31): a connection's versions with their breaking changes against the
 * active one and the import form, and one version's activation review (precondition, dry-run
 * impact, breaking changes, then Activate or Roll back). Views over the services of the console's
 * contract routes (management/contracts/console/), which their forms post to. The frame
 * (consoleWorkspacePage) handles the session and the membership; a foreign connection or version
 * is the services' catalogue 404.
 */
export default function contractsPageRoutes(app: FastifyInstance): void {
  consoleWorkspacePage<{ cursor?: string }>(
    app,
    'integrations/:connectionId/contracts',
    { query: { cursor: { type: 'string', maxLength: 1000 } } },
    async (request, ctx) => {
      const data = await contractsPageData(app.deps, ctx.session, ctx.workspace.slug, request.params.connectionId, request.query.cursor);
      return ctx.render(renderContractsPage(data));
    },
  );

  consoleWorkspacePage(app, 'integrations/:connectionId/contracts/:contractVersionId', {}, async (request, ctx) => {
    const { connectionId, contractVersionId } = request.params;
    const data = await activationReviewData(app.deps, ctx.session, ctx.workspace.slug, connectionId, contractVersionId);
    return ctx.render(renderActivationReview(data));
  });
}
