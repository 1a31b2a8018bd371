import type { BootstrapResult } from '../../management/admin/bootstrap.js';
import type { TestContext } from './context.js';

type AuthorityLoss = [label: string, lose: (ctx: TestContext, boot: BootstrapResult) => Promise<unknown>, status: number, error: string];

const onKey = (sql: string) => (ctx: TestContext, boot: BootstrapResult) => ctx.deps.pool.query(sql, [boot.apiKey.id]);
const onWorkspace = (sql: string) => (ctx: TestContext, boot: BootstrapResult) => ctx.deps.pool.query(sql, [boot.workspace.id]);

/**
 * The ways a workspace API key loses its authority (Authentication 3: rechecked inside the
 * operation's transaction), each with the answer of the operation it happens during; the moved
 * authorization epoch answers the operation's own code. `lose` runs on another pool connection,
 * so the change commits while the operation's transaction is open.
 */
export function apiKeyAuthorityLosses(epochChangedCode: string): AuthorityLoss[] {
  return [
    ['the key is revoked', onKey('UPDATE api_keys SET revoked_at = now() WHERE id = $1'), 403, 'insufficient_scope'],
    ['the key expires', onKey("UPDATE api_keys SET expires_at = now() - interval '1 second' WHERE id = $1"), 403, 'insufficient_scope'],
    [
      'the key loses integrations:manage',
      onKey("UPDATE api_keys SET scopes = '{integrations:read}' WHERE id = $1"),
      403,
      'insufficient_scope',
    ],
    [
      'the authorization epoch moves',
      onWorkspace('UPDATE workspaces SET auth_epoch = auth_epoch + 1 WHERE id = $1'),
      409,
      epochChangedCode,
    ],
    [
      'the workspace is archived',
      onWorkspace("UPDATE workspaces SET status = 'archived', archived_at = now() WHERE id = $1"),
      409,
      'workspace_unavailable',
    ],
  ];
}
