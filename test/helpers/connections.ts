import { newId } from '../../shared/ids.js';
import type { BootstrapResult } from '../../management/admin/bootstrap.js';
import type { TestContext } from './context.js';

export interface ConnectionFixture {
  integrationId: string;
  connectionId: string;
  connectionKey: string;
  environmentId: string;
  mode: 'sandbox' | 'live';
  revision: string;
}

/**
 * Inserts a canonical Integration with one connection per requested mode, credential
 * `not_issued`, straight into PostgreSQL. No public route produces a `not_issued` connection
 * today (Integration creation issues the first credential at once), so SQL is the honest way
 * to get one. Revisions come from the one revision sequence, ids from `newId`.
 */
export async function insertConnections(
  ctx: TestContext,
  boot: BootstrapResult,
  modes: readonly ('sandbox' | 'live')[] = ['sandbox'],
): Promise<Record<'sandbox' | 'live', ConnectionFixture>> {
  const now = ctx.deps.clock.now();
  const integrationId = newId('wint_');
  await ctx.deps.pool.query(
    `INSERT INTO integrations (id, workspace_id, name, provider, direction, protocol, integration_key, revision, created_at)
     VALUES ($1, $2, 'Orders sync', 'Acme', 'outbound', 'http-api', $3, nextval('revision_seq')::text, $4)`,
    [integrationId, boot.workspace.id, newId('svc_int_'), now],
  );
  const result = {} as Record<'sandbox' | 'live', ConnectionFixture>;
  for (const mode of modes) {
    const environment = await ctx.deps.pool.query<{ id: string }>('SELECT id FROM environments WHERE workspace_id = $1 AND category = $2', [
      boot.workspace.id,
      mode,
    ]);
    if (!environment.rows[0]) throw new Error(`workspace has no ${mode} environment`);
    const connectionId = newId('int_');
    const connectionKey = newId('svc_conn_v1.');
    const { rows } = await ctx.deps.pool.query<{ revision: string }>(
      `INSERT INTO connections (id, integration_id, workspace_id, environment_id, mode, connection_key, revision, credential_status, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, nextval('revision_seq')::text, 'not_issued', $7) RETURNING revision`,
      [connectionId, integrationId, boot.workspace.id, environment.rows[0].id, mode, connectionKey, now],
    );
    result[mode] = { integrationId, connectionId, connectionKey, environmentId: environment.rows[0].id, mode, revision: rows[0].revision };
  }
  return result;
}

/** One `not_issued` connection in the chosen mode. */
export async function insertConnection(
  ctx: TestContext,
  boot: BootstrapResult,
  mode: 'sandbox' | 'live' = 'sandbox',
): Promise<ConnectionFixture> {
  return (await insertConnections(ctx, boot, [mode]))[mode];
}

/** The connection row as stored, to prove what a request did or did not change. */
export async function readConnectionRow(
  ctx: TestContext,
  connectionId: string,
): Promise<{ revision: string; credential_status: string; credential_epoch: string }> {
  const { rows } = await ctx.deps.pool.query('SELECT revision, credential_status, credential_epoch FROM connections WHERE id = $1', [
    connectionId,
  ]);
  return rows[0];
}
