import type { FastifyInstance } from 'fastify';
import { AppError } from '../../shared/errors/index.js';
import { sessionAuth, sessionOf } from '../auth/sessionAuth.js';
import { loadWorkspaceConnection } from '../connections/workspaceConnection.js';
import { requireCanonicalWorkspace } from '../workspaces/rules.js';
import { findManagedWorkspaceBySlug } from './credentialStore.js';

const params = {
  type: 'object',
  required: ['workspaceSlug', 'connectionId'],
  properties: { workspaceSlug: { type: 'string' }, connectionId: { type: 'string' } },
  additionalProperties: false,
} as const;

/**
 * The legacy browser credential mutation routes (01: canonical connections reject them with 409
 * `canonical_credential_required`). Their paths are not in the spec; ours are
 * POST /workspaces/{workspaceSlug}/integrations/{connectionId}/credentials/{issue|rotate|revoke}
 * (docs/decisions/integrations.md). They change nothing: canonical credentials move only through /v1.
 */
export default async function legacyCredentialMutation(app: FastifyInstance): Promise<void> {
  for (const action of ['issue', 'rotate', 'revoke'] as const) {
    app.post<{ Params: { workspaceSlug: string; connectionId: string } }>(
      `/workspaces/:workspaceSlug/integrations/:connectionId/credentials/${action}`,
      {
        onRequest: [sessionAuth()],
        config: { errors: ['canonical_credential_required', 'connection_not_found', 'workspace_modes_unavailable', 'workspace_not_found'] },
        schema: { params },
      },
      async (request) => {
        const session = sessionOf(request);
        const workspace = await findManagedWorkspaceBySlug(app.deps.pool, request.params.workspaceSlug, session.userId);
        if (!workspace) throw new AppError('workspace_not_found');
        await loadWorkspaceConnection(app.deps.pool, workspace.id, request.params.connectionId);
        // Every connection is canonical: a legacy workspace has no way to gain one (Integration
        // creation refuses legacy workspaces), and no legacy credential writer exists in this build.
        requireCanonicalWorkspace(workspace);
        throw new AppError('canonical_credential_required');
      },
    );
  }
}
