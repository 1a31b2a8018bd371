import type { FastifyInstance } from 'fastify';
import { readConsoleSetup } from '../connectionSetup/console/consoleSetupService.js';
import type { Mode } from '../connections/connectionStore.js';
import { consoleWorkspacePage } from './consoleRoute.js';
import { SafeHtml } from './html.js';
import { readReviewOrArchived } from './reviewSnapshotView.js';
import { asWorkspaceManager } from './consoleWorkspace.js';
import { idList, setupPageData } from './setupData.js';
import { setupPageBody, setupReviewBody, type SetupStatus } from './setupView.js';

/** A "Preview again" link's selection: comma-separated ids. */
const ID_LIST = { type: 'string', maxLength: 4000, pattern: '^[A-Za-z0-9_,]*$' } as const;

/**
 * The second-mode setup pages (02 "Second-mode setup", issue 31): an Integration's missing slot,
 * with the other mode's contract versions and rules to copy, previewed through the session route
 * POST /workspaces/{slug}/integrations/{workspaceIntegrationId}/connections/preview; then the
 * review page of the operation (the session status read's service), whose Apply posts to
 * …/connection-setup/{operationId}/apply and shows the new token once.
 */
export default function setupPages(app: FastifyInstance): void {
  consoleWorkspacePage<{ mode?: Mode; contracts?: string; rules?: string }>(
    app,
    'integrations/:workspaceIntegrationId/setup',
    { query: { mode: { type: 'string', pattern: '^(sandbox|live)$' }, contracts: ID_LIST, rules: ID_LIST } },
    async (request, ctx) => {
      let title = 'Set up a connection';
      const body = await asWorkspaceManager(app.deps, ctx, async (workspace) => {
        const data = await setupPageData(app.deps, workspace, request.params.workspaceIntegrationId, request.query.mode, {
          contractVersionIds: idList(request.query.contracts),
          ruleIds: idList(request.query.rules),
        });
        const page = setupPageBody(data);
        title = page.title;
        return page.body;
      });
      return ctx.render({ title, nav: 'integrations', body });
    },
  );

  consoleWorkspacePage(app, 'connection-setup/:operationId', {}, async (request, ctx) => {
    let title = 'Connection setup';
    const body = await asWorkspaceManager(app.deps, ctx, async (workspace) => {
      const status = await readReviewOrArchived(
        async () => (await readConsoleSetup(app.deps, ctx.session, workspace.slug, request.params.operationId)) as unknown as SetupStatus,
      );
      if (status instanceof SafeHtml) return status;
      const page = setupReviewBody(workspace.slug, status);
      title = page.title;
      return page.body;
    });
    return ctx.render({ title, nav: 'integrations', body });
  });
}
