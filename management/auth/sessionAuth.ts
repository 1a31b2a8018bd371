import { createHmac } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { AppError } from '../../shared/errors/index.js';
import { constantTimeEqual, sha256Hex } from '../../shared/secrets.js';
import { rejectPausedWrite } from '../maintenance.js';
import type { SessionPrincipal } from './principal.js';
import { declareAuth } from './requirement.js';

const SESSION_TOKEN_PATTERN = /^svc_sess_[A-Za-z0-9_-]{43}$/;
const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** The CSRF token of a session: an HMAC of its id, so nothing extra is stored (00-decisions §2). */
export function csrfTokenFor(sessionId: string, key: Buffer): string {
  return createHmac('sha256', key).update(`csrf:${sessionId}`).digest('base64url');
}

async function loadSession(request: FastifyRequest): Promise<SessionPrincipal | null> {
  const { pool, clock } = request.server.deps;
  const token = request.cookies?.session;
  if (!token || !SESSION_TOKEN_PATTERN.test(token)) return null;
  const { rows } = await pool.query(
    `SELECT s.id, s.user_id, u.email, u.email_verified_at
       FROM sessions s JOIN users u ON u.id = s.user_id
      WHERE s.token_hash = $1 AND s.revoked_at IS NULL AND s.expires_at > $2`,
    [sha256Hex(token), clock.now()],
  );
  const row = rows[0];
  if (!row) return null;
  return { kind: 'session', sessionId: row.id, userId: row.user_id, email: row.email, emailVerified: row.email_verified_at !== null };
}

/**
 * Browser-session writes need a same-origin `Origin` or the session's `X-CSRF-Token`
 * (00-decisions §2); anything else is 403 `forbidden`.
 */
function checkCsrf(request: FastifyRequest, session: SessionPrincipal): void {
  if (!WRITE_METHODS.has(request.method)) return;
  const { config } = request.server.deps;
  const origin = request.headers.origin;
  if (typeof origin === 'string' && origin === config.consoleOrigin) return;
  const token = request.headers['x-csrf-token'];
  if (typeof token === 'string' && constantTimeEqual(token, csrfTokenFor(session.sessionId, config.secretEncryptionKey))) return;
  throw new AppError('forbidden');
}

/**
 * onRequest hook of login and sign-up, which have no session to carry a CSRF token: a browser's
 * cross-site post (login CSRF, signing the victim in as the attacker) names another origin and is
 * 403 `forbidden`, the answer of the session check above. No `Origin` at all is a client that is
 * not a browser posting cross-site (curl, scripts) and stays accepted.
 */
export const rejectForeignOrigin = declareAuth(
  async function rejectForeignOrigin(request: FastifyRequest): Promise<void> {
    const origin = request.headers.origin;
    if (origin !== undefined && origin !== request.server.deps.config.consoleOrigin) throw new AppError('forbidden');
  },
  { kind: 'foreignOriginCheck' },
);

/**
 * onRequest hook for console routes: a current session (401), CSRF for writes (403), a verified
 * e-mail unless `allowUnverified` (403 `email_verification_required`), then the write pause.
 */
export function sessionAuth(options: { allowUnverified?: boolean } = {}) {
  return declareAuth(
    async function authenticate(request: FastifyRequest): Promise<void> {
      await request.server.deps.clock.sync();
      const session = await loadSession(request);
      if (!session) throw new AppError('unauthenticated');
      checkCsrf(request, session);
      if (!options.allowUnverified && !session.emailVerified) throw new AppError('email_verification_required');
      request.session = session;
      await rejectPausedWrite(request);
    },
    { kind: 'session', allowUnverified: options.allowUnverified === true },
  );
}

/**
 * The request's current session, or null: for the console pages, which show a sign-in form where
 * a JSON route answers 401. Reads only; a page's forms post to routes that run `sessionAuth`.
 */
export async function currentSession(request: FastifyRequest): Promise<SessionPrincipal | null> {
  await request.server.deps.clock.sync();
  return loadSession(request);
}

export function sessionOf(request: FastifyRequest): SessionPrincipal {
  if (!request.session) throw new Error('route is missing sessionAuth');
  return request.session;
}
