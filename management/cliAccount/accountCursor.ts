import { AppError, type ErrorCode } from '../../shared/errors/index.js';
import { openSignedCursor, signCursor } from '../pagination/signedCursor.js';

/**
 * The account lists of the CLI (03 Account routes): each has its own cursor domain, and a cursor
 * carries the user it was issued to, so it continues only that user's list on that route.
 */
export type AccountList = 'workspaces' | 'sessions';

const LISTS: Record<AccountList, { domain: string; error: ErrorCode }> = {
  workspaces: { domain: 'cli-workspace-list-cursor/v1', error: 'invalid_workspace_query' },
  sessions: { domain: 'cli-session-list-cursor/v1', error: 'invalid_cli_session_query' },
};

interface CursorPayload {
  v: 1;
  user: string;
  after: string;
}

/** An opaque cursor: the last id of the page, bound to the user and the list. */
export function encodeAccountCursor(secret: Buffer, list: AccountList, userId: string, after: string): string {
  const payload: CursorPayload = { v: 1, user: userId, after };
  return signCursor(secret, LISTS[list].domain, payload);
}

/**
 * The id after which to list, or the list's query error (400 `invalid_workspace_query`,
 * `invalid_cli_session_query`; 03 has no cursor code of its own for them) for a malformed,
 * tampered or foreign cursor, or one of another user or list.
 */
export function decodeAccountCursor(secret: Buffer, list: AccountList, userId: string, raw: string): string {
  const payload = openSignedCursor(secret, LISTS[list].domain, raw) as Partial<CursorPayload> | null;
  if (payload === null || typeof payload !== 'object' || payload.v !== 1 || payload.user !== userId || typeof payload.after !== 'string') {
    throw new AppError(LISTS[list].error);
  }
  return payload.after;
}
