import type { Queryable } from '../../shared/db/pool.js';
import { AppError } from '../../shared/errors/index.js';
import { sha256Hex } from '../../shared/secrets.js';
import type { SetupWorkspacePrincipal } from '../auth/principal.js';
import { findCurrentAccessToken } from './cliTokenStore.js';
import { SETUP_CLIENT } from './rules.js';
import { currentSetupBinding } from './setupBindingStore.js';

const BEARER = /^Bearer (\S+)$/;

/** A bearer that is a setup access token by its form (whether or not it is current). */
export const isSetupAccessTokenHeader = (authorizationHeader: string | undefined): boolean => {
  const match = BEARER.exec(authorizationHeader ?? '');
  return match !== null && SETUP_CLIENT.accessTokenForm.test(match[1]);
};

/**
 * The caller of `Authorization: Bearer svc_setup_at_…` (01 Authentication 4): a current access
 * token of an unrevoked setup grant whose workspace is active and whose approving user is still
 * an owner or admin there. Anything else is 401 `unauthenticated`: the binding is current-checked
 * on every request, as a key's workspace is (01 Authentication 7). A deleted bound connection
 * still authenticates (its routes answer their 404, and a deletion's replay and receipt stay
 * readable by the grant that made it).
 */
export async function authenticateSetupAccessToken(
  db: Queryable,
  authorizationHeader: string | undefined,
  nowMs: number,
  admittedScope: string,
): Promise<SetupWorkspacePrincipal> {
  const match = BEARER.exec(authorizationHeader ?? '');
  if (!match || !SETUP_CLIENT.accessTokenForm.test(match[1])) throw new AppError('unauthenticated');
  const grant = await findCurrentAccessToken(db, SETUP_CLIENT.id, sha256Hex(match[1]), new Date(nowMs));
  const connection = grant ? await currentSetupBinding(db, grant) : null;
  if (!grant || !connection) throw new AppError('unauthenticated');
  const { rows } = await db.query<{ tenant_id: string; account_id: string; model: 'canonical' | 'legacy'; auth_epoch: string }>(
    'SELECT tenant_id, account_id, model, auth_epoch FROM workspaces WHERE id = $1',
    [connection.workspaceId],
  );
  const workspace = rows[0];
  return {
    kind: 'setup',
    userId: grant.userId,
    clientId: grant.clientId,
    setupScopes: grant.scopes,
    admittedScope,
    workspaceId: connection.workspaceId,
    tenantId: workspace.tenant_id,
    accountId: workspace.account_id,
    model: workspace.model,
    scopes: [],
    authEpoch: String(workspace.auth_epoch),
    connectionId: connection.connectionId,
    workspaceIntegrationId: connection.workspaceIntegrationId,
    environmentId: connection.environmentId,
  };
}
