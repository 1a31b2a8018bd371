import type { Deps } from '../deps.js';
import { withTransaction } from '../../shared/db/transaction.js';
import { isUniqueViolation } from '../../shared/db/sqlstate.js';
import { AppError } from '../../shared/errors/index.js';
import { newSecret, sha256Hex } from '../../shared/secrets.js';
import { hashPassword, NO_USER_PASSWORD_HASH, verifyPassword } from '../accounts/passwords.js';
import { createSession, findUserByEmail, insertUser, type UserRecord } from '../accounts/users.js';
import { csrfTokenFor } from '../auth/sessionAuth.js';
import { recordAudit } from '../operations/audit.js';
import { reserveLoginAttempt, reserveSignupAttempt } from './authThrottle.js';
import { validEmail, validPassword, validUserName } from './rules.js';

/** Verification links stay valid for 24 hours. */
export const VERIFICATION_TTL_MS = 24 * 3600 * 1000;
const VERIFICATION_TOKEN_PATTERN = /^svc_ver_[A-Za-z0-9_-]{43}$/;

/**
 * 00-decisions §3 signup: a scrypt-hashed password, an unverified user, a verification token of
 * which only the SHA-256 is stored, and the mail carrying it in `email_outbox` (the operator CLI
 * `mail` prints it). One transaction, so a taken e-mail writes nothing.
 */
export async function signup(deps: Deps, input: { email: string; password: string; name: string }, clientIp: string): Promise<UserRecord> {
  const email = validEmail(input.email);
  const password = validPassword(input.password);
  const name = validUserName(input.name);
  // Every attempt that reaches scrypt counts, a taken e-mail (409) too: that answer names used addresses.
  const attempt = await reserveSignupAttempt(deps, clientIp);
  const passwordHash = await hashPassword(password).catch(async (error: unknown) => {
    await attempt.release();
    throw error;
  });
  const now = deps.clock.now();
  return withTransaction(deps.pool, async (db) => {
    let user: UserRecord;
    try {
      user = await insertUser(db, { email, name, passwordHash, verified: false, now });
    } catch (error) {
      if (isUniqueViolation(error, 'users_email_key')) throw new AppError('email_unavailable');
      throw error;
    }
    const token = newSecret('svc_ver_');
    await db.query('INSERT INTO email_verifications (token_hash, user_id, expires_at) VALUES ($1, $2, $3)', [
      sha256Hex(token),
      user.id,
      new Date(now.getTime() + VERIFICATION_TTL_MS),
    ]);
    const link = `${deps.config.consoleOrigin}/console/verify-email?token=${encodeURIComponent(token)}`;
    await db.query(`INSERT INTO email_outbox (user_id, to_email, kind, body, created_at) VALUES ($1, $2, 'email_verification', $3, $4)`, [
      user.id,
      email,
      JSON.stringify({ subject: 'Verify your e-mail address', link, token }),
      now,
    ]);
    await recordAudit(db, { workspaceId: null, actorType: 'user', actorId: user.id, action: 'user.signup', targetId: user.id, at: now });
    return user;
  });
}

/** Consumes a verification token once; unknown, used and expired tokens are all the same 400. */
export async function verifyEmail(deps: Deps, token: string): Promise<UserRecord> {
  if (!VERIFICATION_TOKEN_PATTERN.test(token)) throw new AppError('invalid_verification_token');
  const now = deps.clock.now();
  return withTransaction(deps.pool, async (db) => {
    const found = await db.query<{ user_id: string }>(
      `SELECT user_id FROM email_verifications
        WHERE token_hash = $1 AND used_at IS NULL AND expires_at > $2 FOR UPDATE`,
      [sha256Hex(token), now],
    );
    const userId = found.rows[0]?.user_id;
    if (!userId) throw new AppError('invalid_verification_token');
    await db.query('UPDATE email_verifications SET used_at = $2 WHERE token_hash = $1', [sha256Hex(token), now]);
    const { rows } = await db.query<{ id: string; email: string; name: string }>(
      'UPDATE users SET email_verified_at = COALESCE(email_verified_at, $2) WHERE id = $1 RETURNING id, email, name',
      [userId, now],
    );
    await recordAudit(db, {
      workspaceId: null,
      actorType: 'user',
      actorId: userId,
      action: 'user.email_verified',
      targetId: userId,
      at: now,
    });
    return { id: rows[0].id, email: rows[0].email, name: rows[0].name, emailVerified: true };
  });
}

export interface LoginResult {
  user: UserRecord;
  sessionToken: string;
  csrfToken: string;
  expiresAt: Date;
}

/**
 * Wrong e-mail and wrong password are one answer, 401 `unauthenticated`, after one scrypt run each
 * and one failed-login slot each of the e-mail and the client address (429 `rate_limited` past them).
 */
export async function login(deps: Deps, input: { email: string; password: string }, clientIp: string): Promise<LoginResult> {
  const email = input.email.trim();
  const attempt = await reserveLoginAttempt(deps, { email, ip: clientIp });
  let failed = false;
  try {
    // A control character (NUL included) can be in no stored address: look nothing up, but still hash.
    const user = /[\u0000-\u001f\u007f]/.test(email) ? null : await findUserByEmail(deps.pool, email);
    const matches = await verifyPassword(input.password, user?.passwordHash ?? NO_USER_PASSWORD_HASH);
    if (!user || !matches) {
      failed = true;
      throw new AppError('unauthenticated');
    }
    const now = deps.clock.now();
    const session = await withTransaction(deps.pool, async (db) => {
      const created = await createSession(db, user.id, now, deps.config.sessionTtlSeconds);
      await recordAudit(db, {
        workspaceId: null,
        actorType: 'user',
        actorId: user.id,
        action: 'session.create',
        targetId: created.id,
        at: now,
      });
      return created;
    });
    return {
      user: { id: user.id, email: user.email, name: user.name, emailVerified: user.emailVerified },
      sessionToken: session.token,
      csrfToken: csrfTokenFor(session.id, deps.config.secretEncryptionKey),
      expiresAt: session.expiresAt,
    };
  } finally {
    // Only a wrong guess keeps its slots; a success, a full scrypt queue or a store failure is none.
    if (!failed) await attempt.release().catch(() => undefined);
  }
}

export async function logout(deps: Deps, session: { sessionId: string; userId: string }): Promise<void> {
  const now = deps.clock.now();
  await withTransaction(deps.pool, async (db) => {
    await db.query('UPDATE sessions SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL', [session.sessionId, now]);
    await recordAudit(db, {
      workspaceId: null,
      actorType: 'user',
      actorId: session.userId,
      action: 'session.revoke',
      targetId: session.sessionId,
      at: now,
    });
  });
}
