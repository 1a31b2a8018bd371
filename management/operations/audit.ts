import type { Queryable } from '../../shared/db/pool.js';

export interface AuditEvent {
  workspaceId: string | null;
  actorType: 'api_key' | 'user' | 'operator' | 'system';
  actorId: string | null;
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
    [event.workspaceId, event.actorType, event.actorId, event.action, event.targetId, JSON.stringify(event.metadata ?? {}), event.at],
  );
}
