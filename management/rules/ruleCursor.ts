import { AppError } from '../../shared/errors/index.js';
import { hasIdForm } from '../../shared/ids.js';
import { isCursorTimestamp, openSignedCursor, signCursor } from '../pagination/signedCursor.js';
import type { RuleListPosition } from './ruleStore.js';

interface CursorPayload {
  v: 1;
  conn: string;
  rev: string;
  at: string;
  id: string;
}

const DOMAIN = 'rule-list-cursor/v1';

/** An opaque cursor bound to one connection and the configuration revision its page was read at. */
export function encodeRuleCursor(secret: Buffer, connectionId: string, revision: string, after: RuleListPosition): string {
  const payload: CursorPayload = { v: 1, conn: connectionId, rev: revision, at: after.createdAt.toISOString(), id: after.id };
  return signCursor(secret, DOMAIN, payload);
}

function isPayload(value: unknown): value is CursorPayload {
  if (typeof value !== 'object' || value === null) return false;
  const payload = value as Record<string, unknown>;
  return (
    payload.v === 1
    && typeof payload.conn === 'string'
    && typeof payload.rev === 'string'
    && isCursorTimestamp(payload.at)
    && hasIdForm(payload.id, 'rule_')
  );
}

/**
 * 02 Rules: a malformed or tampered cursor, or one of another connection, is 400
 * `invalid_rule_cursor`; one read at an older configuration revision is 409 `rule_cursor_stale`
 * (the list changed under it: a fresh list is needed).
 */
export function decodeRuleCursor(secret: Buffer, raw: string, connectionId: string, revision: string): RuleListPosition {
  const payload = openSignedCursor(secret, DOMAIN, raw);
  if (!isPayload(payload) || payload.conn !== connectionId) throw new AppError('invalid_rule_cursor');
  if (payload.rev !== revision) throw new AppError('rule_cursor_stale');
  return { createdAt: new Date(payload.at), id: payload.id };
}
