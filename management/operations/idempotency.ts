import type { FastifyRequest } from 'fastify';
import type pg from 'pg';
import { withTransaction } from '../../shared/db/transaction.js';
import { AppError, type ErrorCode } from '../../shared/errors/index.js';
import { fingerprint } from '../../shared/fingerprint.js';
import { recheckAuthority, type AuthorityLoss } from '../auth/apiKeyAuth.js';
import type { OperationActor } from '../auth/principal.js';
import type { CliScopeSuffix, WorkspaceScope } from '../auth/scopes.js';
import { recheckWorkspaceUser, type WorkspaceUserLoss } from '../auth/workspaceUserAuth.js';
import type { Deps } from '../deps.js';
import { reviewerMatches, reviewerOf, reviewerParams } from './actor.js';
import { auditActorOf, recordAudit } from './audit.js';
import type { RateSlot } from './rateWindow.js';

/** 8 to 128 printable, non-space ASCII characters (every document's Limits). */
export const IDEMPOTENCY_KEY_PATTERN = /^[\x21-\x7e]{8,128}$/;

export function readIdempotencyKey(request: FastifyRequest): string {
  const value = request.headers['idempotency-key'];
  if (typeof value !== 'string' || !IDEMPOTENCY_KEY_PATTERN.test(value)) throw new AppError('idempotency_key_required');
  return value;
}

/** What an operation's work produced: the first response, and the receipt kept for replays. */
export interface OperationOutcome {
  operationId: string;
  statusCode: number;
  /** The first response body; may carry a one-time secret. */
  response: Record<string, unknown>;
  /** The stored receipt: never a secret (01: receipts never hold a plaintext ingest token). */
  receipt: Record<string, unknown>;
  integrationId?: string | null;
  connectionId?: string | null;
  recordedRevision?: string | null;
  audit: { action: string; targetId: string | null; metadata?: Record<string, unknown> };
}

export interface OperationOptions {
  kind: string;
  /** The performer: an API key, or a console user acting as owner or admin of the workspace. */
  principal: OperationActor;
  /**
   * The scope an API key needs (a CLI token: `service:cli:` + it; a route only CLI tokens reach
   * may name a CLI-only scope such as `repairs:create`); a workspace user needs the owner or
   * admin role instead.
   */
  scope: WorkspaceScope | CliScopeSuffix;
  /**
   * The workspace authorization epoch the operation is made under, recorded on its row (03
   * Reviewed repairs 3: another authorization epoch cannot claim the receipt); unset, none is.
   */
  authEpoch?: string;
  idempotencyKey: string;
  /** The normalised request (route target and body); its fingerprint binds the key. */
  request: unknown;
  /** The catalogue code for an authorization epoch that moved during the operation. */
  epochChangedCode: ErrorCode;
  /** Builds a replay body (status 200) from the stored receipt and the current state. */
  replay: (stored: StoredOperation, db: pg.PoolClient) => Promise<Record<string, unknown>> | Record<string, unknown>;
  /** Runs after the final authority check, just before COMMIT (e.g. the Redis epoch bump). */
  beforeCommit?: (outcome: OperationOutcome) => Promise<void>;
  /**
   * Takes a slot of a rate limit for new work only: after the replay check (a retry is answered
   * whatever the rate), given back when the operation does not commit.
   */
  reserve?: () => Promise<RateSlot>;
}

/** What the work may need of the request: the fingerprint that binds its Idempotency-Key. */
export interface OperationRequest {
  requestFingerprint: string;
}

export interface StoredOperation {
  id: string;
  kind: string;
  api_key_id: string | null;
  user_id: string | null;
  cli_client_id: string | null;
  request_fingerprint: string;
  connection_id: string | null;
  integration_id: string | null;
  recorded_revision: string | null;
  receipt: Record<string, unknown>;
  auth_epoch: string | null;
  created_at: Date;
}

export interface OperationResponse {
  statusCode: number;
  body: Record<string, unknown>;
}

const OPERATION_COLUMNS =
  'id, kind, api_key_id, user_id, cli_client_id, request_fingerprint, connection_id, integration_id, recorded_revision, receipt, auth_epoch, created_at';

/** The operations columns that name the performer: the key, or the user (and the CLI client it acted through). */
function isPerformer(stored: StoredOperation, actor: OperationActor): boolean {
  const { apiKeyId, userId, cliClientId } = reviewerOf(actor);
  return stored.api_key_id === apiKeyId && stored.user_id === userId && stored.cli_client_id === cliClientId;
}

function recheckActor(
  db: pg.PoolClient,
  deps: Deps,
  actor: OperationActor,
  scope: WorkspaceScope | CliScopeSuffix,
): Promise<AuthorityLoss | WorkspaceUserLoss | null> {
  return actor.kind !== 'workspace_user'
    ? recheckAuthority(db, actor, scope, deps.clock.nowMs())
    : recheckWorkspaceUser(db, actor, deps.clock.now());
}

function authorityError(loss: AuthorityLoss | WorkspaceUserLoss, epochChangedCode: ErrorCode): AppError {
  if (loss === 'key') return new AppError('insufficient_scope');
  if (loss === 'session') return new AppError('unauthenticated');
  if (loss === 'role') return new AppError('forbidden');
  if (loss === 'workspace') return new AppError('workspace_unavailable');
  return new AppError(epochChangedCode);
}

/**
 * The one idempotency and receipt mechanism (issue: foundation, item 4). In one transaction:
 * serialise on (workspace, key); replay the original receipt for an identical request by the
 * same performer (API key or console user), or refuse with `idempotency_conflict`; otherwise
 * re-check authority, do the work, store the receipt and the audit row, re-check authority again
 * and commit. Any failure rolls back every write (and gives back the rate slot that new work
 * took, `reserve`).
 */
export async function runOperation(
  deps: Deps,
  options: OperationOptions,
  work: (db: pg.PoolClient, request: OperationRequest) => Promise<OperationOutcome>,
): Promise<OperationResponse> {
  const { principal } = options;
  const requestFingerprint = fingerprint({ kind: options.kind, request: options.request });
  let slot: RateSlot | undefined;
  try {
    return await withTransaction(deps.pool, (db) => attempt(db));
  } catch (error) {
    await slot?.release().catch(() => undefined);
    throw error;
  }

  async function attempt(db: pg.PoolClient): Promise<OperationResponse> {
    // A space separates the parts: neither holds one, and PostgreSQL text cannot carry NUL.
    await db.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`${principal.workspaceId} ${options.idempotencyKey}`]);
    const existing = await db.query<StoredOperation>(
      `SELECT ${OPERATION_COLUMNS} FROM operations WHERE workspace_id = $1 AND idempotency_key = $2`,
      [principal.workspaceId, options.idempotencyKey],
    );
    const stored = existing.rows[0];
    if (stored) {
      if (stored.kind !== options.kind || stored.request_fingerprint !== requestFingerprint || !isPerformer(stored, principal)) {
        throw new AppError('idempotency_conflict');
      }
      return { statusCode: 200, body: await options.replay(stored, db) };
    }
    if (options.reserve) {
      // A retried transaction gives back the slot of the attempt before it.
      await slot?.release();
      slot = undefined;
      slot = await options.reserve();
    }

    const before = await recheckActor(db, deps, principal, options.scope);
    if (before) throw authorityError(before, options.epochChangedCode);

    const outcome = await work(db, { requestFingerprint });
    const now = deps.clock.now();
    const performer = reviewerOf(principal);
    await db.query(
      `INSERT INTO operations (id, kind, workspace_id, api_key_id, user_id, idempotency_key, request_fingerprint,
                               integration_id, connection_id, recorded_revision, status_code, receipt, created_at, cli_client_id, auth_epoch)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)`,
      [
        outcome.operationId,
        options.kind,
        principal.workspaceId,
        performer.apiKeyId,
        performer.userId,
        options.idempotencyKey,
        requestFingerprint,
        outcome.integrationId ?? null,
        outcome.connectionId ?? null,
        outcome.recordedRevision ?? null,
        outcome.statusCode,
        JSON.stringify(outcome.receipt),
        now,
        performer.cliClientId,
        options.authEpoch ?? null,
      ],
    );
    await recordAudit(db, {
      workspaceId: principal.workspaceId,
      ...auditActorOf(principal),
      action: outcome.audit.action,
      targetId: outcome.audit.targetId,
      metadata: { operationId: outcome.operationId, ...outcome.audit.metadata },
      at: now,
    });

    await deps.hooks?.beforeAuthorityRecheck?.(options.kind);
    const after = await recheckActor(db, deps, principal, options.scope);
    if (after) throw authorityError(after, options.epochChangedCode);
    await options.beforeCommit?.(outcome);
    return { statusCode: outcome.statusCode, body: outcome.response };
  }
}

/**
 * Reads a stored receipt by id for the performer that made it (the same API key, or the same
 * console user); anything else, another actor of the same workspace included, is 404.
 */
export async function readOwnOperation(
  deps: Deps,
  principal: OperationActor,
  operationId: string,
  kinds: readonly string[],
): Promise<StoredOperation> {
  const { rows } = await deps.pool.query<StoredOperation>(
    `SELECT ${OPERATION_COLUMNS} FROM operations WHERE id = $1 AND workspace_id = $2 AND kind = ANY($3) AND ${reviewerMatches(4)}`,
    [operationId, principal.workspaceId, kinds, ...reviewerParams(reviewerOf(principal))],
  );
  if (!rows[0]) throw new AppError('operation_not_found');
  return rows[0];
}
