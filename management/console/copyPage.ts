import type { FastifyInstance } from 'fastify';
import { readConsoleConfigurationOperation } from '../configuration/console/consoleConfigurationService.js';
import { consoleWorkspacePage } from './consoleRoute.js';
import { SafeHtml } from './html.js';
import { readReviewOrArchived } from './reviewSnapshotView.js';
import { asWorkspaceManager } from './consoleWorkspace.js';
import { copyPageBody, operationPageBody, type ConfigurationStatus } from './copyView.js';
import { copyPageData, idList } from './setupData.js';

/** A "Preview again" link's selection: comma-separated ids. */
const ID_LIST = { type: 'string', maxLength: 4000, pattern: '^[A-Za-z0-9_,]*$' } as const;

/**
 * The configuration copy pages (02 "Configuration copy and compensation", issue 31): the source's
 * contract versions and rules to copy into an existing connection, previewed through the session
 * route POST /workspaces/{slug}/connections/{connectionId}/configuration-copy/preview; then one
 * page per operation (the session status read's service): the copy or reversal review with Apply,
 * or the receipt, a copy's with "Reverse this copy" (the compensation preview route).
 */
export default function copyPages(app: FastifyInstance): void {
  consoleWorkspacePage<{ source?: string; contracts?: string; rules?: string }>(
    app,
    'connections/:connectionId/configuration-copy',
    { query: { source: { type: 'string', maxLength: 64 }, contracts: ID_LIST, rules: ID_LIST } },
    async (request, ctx) => {
      let title = 'Copy configuration';
      const body = await asWorkspaceManager(app.deps, ctx, async (workspace) => {
        const data = await copyPageData(app.deps, workspace, request.params.connectionId, request.query.source, {
          contractVersionIds: idList(request.query.contracts),
          ruleIds: idList(request.query.rules),
        });
        const page = copyPageBody(data);
        title = page.title;
        return page.body;
      });
      return ctx.render({ title, nav: 'integrations', body });
    },
  );

  consoleWorkspacePage(app, 'configuration-operations/:operationId', {}, async (request, ctx) => {
    let title = 'Configuration copy';
    const body = await asWorkspaceManager(app.deps, ctx, async (workspace) => {
      const status = await readReviewOrArchived(
        async () =>
          (await readConsoleConfigurationOperation(
            app.deps,
            ctx.session,
            workspace.slug,
            request.params.operationId,
          )) as unknown as ConfigurationStatus,
      );
      if (status instanceof SafeHtml) return status;
      const page = operationPageBody(workspace.slug, status, workspace.status === 'active');
      title = page.title;
      return page.body;
    });
    return ctx.render({ title, nav: 'integrations', body });
  });
}
