import type { Queryable } from '../../shared/db/pool.js';
import type { OperationActor } from '../auth/principal.js';

export interface AuditEvent {
  workspaceId: string | null;
  actorType: 'api_key' | 'user' | 'operator' | 'system';
  actorId: string | null;
  /**
   * The CLI client (`clic_…`) a user acted through (an account CLI access token); recorded as
   * `actorClientId` in the metadata, as the CLI's own account routes record it.
   */
  actorClientId?: string;
  action: string;
  targetId: string | null;
  /** Never a secret: tokens, keys and hashes stay out of audit metadata. */
  metadata?: Record<string, unknown>;
  at: Date;
}

/** Writes one audit row; callers pass their transaction so it commits with the change. */
export async function recordAudit(db: Queryable, event: AuditEvent): Promise<void> {
  await db.query(
    `INSERT INTO audit_events (workspace_id, actor_type, actor_id, action, target_id, metadata, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7)`,
    [
      event.workspaceId,
      event.actorType,
      event.actorId,
      event.action,
      event.targetId,
      JSON.stringify(
        event.actorClientId === undefined ? (event.metadata ?? {}) : { ...event.metadata, actorClientId: event.actorClientId },
      ),
      event.at,
    ],
  );
}

/**
 * The audit actor of an operation's performer: an API key, or a user — through the console, or
 * through a CLI client or a setup grant, whose id goes with it (issue 28 item 7: one shape for every CLI write).
 */
export function auditActorOf(actor: OperationActor): Pick<AuditEvent, 'actorType' | 'actorId' | 'actorClientId'> {
  if (actor.kind === 'api_key') return { actorType: 'api_key', actorId: actor.keyId };
  if (actor.kind === 'cli' || actor.kind === 'setup') return { actorType: 'user', actorId: actor.userId, actorClientId: actor.clientId };
  return { actorType: 'user', actorId: actor.userId };
}
