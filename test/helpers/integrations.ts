import { newId } from '../../shared/ids.js';
import { callWithKey, newIdempotencyKey, type TestContext } from './context.js';

export interface CreateIntegrationInput {
  mode: 'sandbox' | 'live';
  name?: string;
  provider?: string;
  direction?: 'inbound' | 'outbound';
  protocol?: 'http-api' | 'http-webhook' | 'scheduled-feed' | 'queue';
  idempotencyKey?: string;
}

/** The 201 body of POST /v1/integrations (01 "Create an Integration and its first connection"). */
export interface CreatedIntegration {
  operationId: string;
  replayed: false;
  credentialRecoveryRequired: false;
  integration: { id: string; connectionId: string; mode: 'sandbox' | 'live'; environmentId: string };
  collectorConfiguration: { integrationKey: string; connectionKey: string; ingestToken: string };
}

/**
 * Creates an Integration and its first connection through the public route with a workspace API
 * key carrying `integrations:manage`, and returns the parsed 201 body (ingest token included).
 * Throws with the response when the route does not answer 201.
 */
export async function createIntegration(ctx: TestContext, apiKey: string, input: CreateIntegrationInput): Promise<CreatedIntegration> {
  const res = await callWithKey(ctx, apiKey, 'POST', '/v1/integrations', {
    idempotencyKey: input.idempotencyKey ?? newIdempotencyKey(),
    body: {
      mode: input.mode,
      name: input.name ?? 'Orders sync',
      provider: input.provider ?? 'Acme',
      direction: input.direction ?? 'outbound',
      protocol: input.protocol ?? 'http-api',
    },
  });
  if (res.statusCode !== 201) throw new Error(`POST /v1/integrations answered ${res.statusCode}: ${res.body}`);
  return res.json() as CreatedIntegration;
}

/**
 * Adds a connection (credential `not_issued`) to an existing Integration in the workspace's
 * environment of the given category, straight in SQL: second-mode setup and legacy connections
 * have their own flows, and reads only need the rows. Returns the new `int_` id.
 */
export async function insertSlotConnection(
  ctx: TestContext,
  input: { workspaceId: string; integrationId: string; category: 'sandbox' | 'live' | 'development' | 'staging' | 'production' },
): Promise<{ connectionId: string; environmentId: string; mode: 'sandbox' | 'live'; revision: string }> {
  const environment = await ctx.deps.pool.query<{ id: string; mode: 'sandbox' | 'live' }>(
    'SELECT id, mode FROM environments WHERE workspace_id = $1 AND category = $2',
    [input.workspaceId, input.category],
  );
  if (!environment.rows[0]) throw new Error(`workspace has no ${input.category} environment`);
  const connectionId = newId('int_');
  const { rows } = await ctx.deps.pool.query<{ revision: string }>(
    `INSERT INTO connections (id, integration_id, workspace_id, environment_id, mode, connection_key, revision, credential_status, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, nextval('revision_seq')::text, 'not_issued', $7) RETURNING revision`,
    [
      connectionId,
      input.integrationId,
      input.workspaceId,
      environment.rows[0].id,
      environment.rows[0].mode,
      newId('svc_conn_v1.'),
      ctx.deps.clock.now(),
    ],
  );
  return { connectionId, environmentId: environment.rows[0].id, mode: environment.rows[0].mode, revision: rows[0].revision };
}

/** Inserts a bare Integration row (no connection) in SQL, e.g. for legacy workspaces or bulk pages. */
export async function insertIntegrationRow(ctx: TestContext, workspaceId: string, name = 'Legacy orders'): Promise<string> {
  const id = newId('wint_');
  await ctx.deps.pool.query(
    `INSERT INTO integrations (id, workspace_id, name, provider, direction, protocol, integration_key, revision, created_at)
     VALUES ($1, $2, $3, 'Acme', 'inbound', 'http-webhook', $4, nextval('revision_seq')::text, $5)`,
    [id, workspaceId, name, newId('svc_int_'), ctx.deps.clock.now()],
  );
  return id;
}
