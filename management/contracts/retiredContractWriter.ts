import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Queryable } from '../../shared/db/pool.js';
import { AppError } from '../../shared/errors/index.js';
import { hasIdForm } from '../../shared/ids.js';
import { sessionAuth, sessionOf } from '../auth/sessionAuth.js';

/** 01 Versioning 4: the retired writer keeps deprecation headers until removal after 30 November 2026. */
export const RETIRED_WRITER_SUNSET = 'Tue, 01 Dec 2026 00:00:00 GMT';

/** Runs first, so every answer of the route carries the headers, errors included. */
async function deprecationHeaders(_request: FastifyRequest, reply: FastifyReply): Promise<void> {
  reply.header('Deprecation', 'true');
  reply.header('Sunset', RETIRED_WRITER_SUNSET);
}

/**
 * The minimal body of the legacy writer: the `int_` id of the connection it targeted. Whatever
 * else an old client sends (document, version, activation flags) is accepted and ignored.
 */
const body = {
  type: 'object',
  required: ['integrationId'],
  properties: { integrationId: { type: 'string' } },
} as const;

/** True when the user owns or administers the workspace of this live connection. */
export async function isOwnedConnection(db: Queryable, connectionId: string, userId: string): Promise<boolean> {
  const { rows } = await db.query(
    `SELECT 1 FROM connections c
       JOIN integrations i ON i.id = c.integration_id
       JOIN workspace_members m ON m.workspace_id = c.workspace_id
      WHERE c.id = $1 AND m.user_id = $2 AND m.role IN ('owner', 'admin')
        AND c.deleted_at IS NULL AND i.deleted_at IS NULL`,
    [connectionId, userId],
  );
  return rows.length > 0;
}

/**
 * POST /contracts, the retired browser-session contract writer (01 Contract API): every otherwise
 * valid, owned request is 409 `canonical_lifecycle_required` and changes nothing: no version, no
 * activation, no audit. An unknown or unowned connection is 404 `integration_not_found`.
 */
export default async function retiredContractWriterRoute(app: FastifyInstance): Promise<void> {
  app.post<{ Body: { integrationId: string } }>(
    '/contracts',
    {
      onRequest: [deprecationHeaders, sessionAuth()],
      config: { validationError: 'invalid_contract', errors: ['canonical_lifecycle_required', 'integration_not_found'] },
      schema: { body },
    },
    async (request) => {
      const session = sessionOf(request);
      const { integrationId } = request.body;
      if (!hasIdForm(integrationId, 'int_') || !(await isOwnedConnection(app.deps.pool, integrationId, session.userId))) {
        throw new AppError('integration_not_found');
      }
      throw new AppError('canonical_lifecycle_required');
    },
  );
}
