import { withTransaction } from '../../shared/db/transaction.js';
import { AppError, type ErrorCode } from '../../shared/errors/index.js';
import { newSecret, sha256Hex } from '../../shared/secrets.js';
import type { SessionPrincipal } from '../auth/principal.js';
import type { Deps } from '../deps.js';
import { recordAudit } from '../operations/audit.js';
import { openCliClient, type TokenResponse } from './cliTokens.js';
import {
  type DeviceAuthorization,
  findByDeviceCodeForUpdate,
  findByUserCode,
  insertDeviceAuthorization,
  markExchanged,
  purgeDeviceAuthorizations,
  recordDecision,
  recordPoll,
} from './deviceAuthorizationStore.js';
import {
  DEVICE_CODE_LIFETIME_SECONDS,
  type OAuthClientProfile,
  oauthClientById,
  parseScope,
  POLL_INTERVAL_SECONDS,
  requireOAuthClient,
  SLOW_DOWN_STEP_SECONDS,
} from './rules.js';
import { findSetupConnection, mayApproveSetup, type SetupConnection } from './setupBindingStore.js';
import { displayUserCode, newUserCode, normaliseUserCode } from './userCode.js';
import { reserveDeviceCodeRequest, withUserCodeGuard } from './oauthThrottle.js';
import { hasIdForm } from '../../shared/ids.js';
import type { Queryable } from '../../shared/db/pool.js';

/** RFC 8628 §3.2 device authorization response. */
export interface DeviceAuthorizationResponse {
  device_code: string;
  user_code: string;
  verification_uri: string;
  verification_uri_complete: string;
  expires_in: number;
  interval: number;
}

/** Expired requests are deleted a day after they expire (until then a poll answers `expired_token`). */
const PURGE_AFTER_MS = 24 * 3600 * 1000;
/** Draws of a user code before giving up (a clash needs one of 20^8 codes to be live already). */
const USER_CODE_DRAWS = 5;

/**
 * `POST /oauth/device/code` (RFC 8628 §3.1, 00-decisions §3): a pending request for the scopes
 * asked, its device code (kept as SHA-256 only) and its user code. The verification page is the
 * console's `/device` (CONSOLE_ORIGIN: the page posts the consent with the session cookie, so it
 * must be on the console's origin). Each stored request takes a slot of the client address's
 * hourly budget (429 `rate_limited` past it); a refused request (wrong client, bad scope) none.
 * The setup tool's request names its connection (`connection_id`, an `int_` id, else 400
 * `invalid_request`); whether it exists is for the consent to find out, not an unauthenticated caller.
 * The CLI's `connection_id`, like any unknown parameter, is ignored.
 */
export async function requestDeviceAuthorization(
  deps: Deps,
  input: { client_id?: string; scope?: string; connection_id?: string },
  ip: string,
): Promise<DeviceAuthorizationResponse> {
  const client = requireOAuthClient(input.client_id);
  const scopes = parseScope(input.scope, client);
  let connectionId: string | null = null;
  if (client.bindsConnection) {
    if (input.connection_id === undefined || !hasIdForm(input.connection_id, 'int_')) throw new AppError('invalid_request');
    connectionId = input.connection_id;
  }
  const slot = await reserveDeviceCodeRequest(deps, ip);
  try {
    return await storeDeviceAuthorization(deps, client, scopes, connectionId);
  } catch (error) {
    await slot.release().catch(() => undefined);
    throw error;
  }
}

async function storeDeviceAuthorization(
  deps: Deps,
  client: OAuthClientProfile,
  scopes: string[],
  connectionId: string | null,
): Promise<DeviceAuthorizationResponse> {
  const now = deps.clock.now();
  await purgeDeviceAuthorizations(deps.pool, new Date(now.getTime() - PURGE_AFTER_MS));
  const deviceCode = newSecret(client.deviceCodePrefix);
  for (let draw = 0; draw < USER_CODE_DRAWS; draw++) {
    const userCode = newUserCode();
    const stored = await insertDeviceAuthorization(deps.pool, {
      deviceCodeHash: sha256Hex(deviceCode),
      userCode,
      oauthClientId: client.id,
      connectionId,
      scopes,
      intervalSeconds: POLL_INTERVAL_SECONDS,
      now,
      expiresAt: new Date(now.getTime() + DEVICE_CODE_LIFETIME_SECONDS * 1000),
    });
    if (!stored) continue;
    const verificationUri = `${deps.config.consoleOrigin}/device`;
    const shown = displayUserCode(userCode);
    return {
      device_code: deviceCode,
      user_code: shown,
      verification_uri: verificationUri,
      verification_uri_complete: `${verificationUri}?user_code=${shown}`,
      expires_in: DEVICE_CODE_LIFETIME_SECONDS,
      interval: POLL_INTERVAL_SECONDS,
    };
  }
  throw new AppError('service_unavailable');
}

/** A request the consent page can still decide: pending and not expired. */
const isPending = (request: DeviceAuthorization | null, now: Date): request is DeviceAuthorization =>
  request?.status === 'pending' && request.expiresAt.getTime() > now.getTime();

/** The connection a setup request is for, as the consent page shows it (01 Authentication 4). */
export interface SetupConnectionView {
  id: string;
  workspace: string;
  workspaceIntegrationId: string;
  integrationName: string;
  environmentId: string;
  environmentName: string;
  mode: 'sandbox' | 'live';
}

/** What the consent page shows: the client and the exact permissions it asks for (03 Account CLI OAuth 2). */
export interface DeviceAuthorizationView {
  userCode: string;
  clientId: string;
  clientName: string;
  scopes: string[];
  expiresAt: string;
  /** Only for the setup tool: the one Integration and environment its tokens would be bound to. */
  connection?: SetupConnectionView;
}

/**
 * The connection of a setup request when `userId` may approve it (an owner or admin of its
 * workspace); 403 `forbidden` otherwise — a viewer, a non-member, a deleted connection or an
 * archived workspace alike, so the page tells nothing about a workspace the user cannot manage.
 * Null for a CLI request, which is bound to nothing.
 */
async function approvableConnection(db: Queryable, request: DeviceAuthorization, userId: string): Promise<SetupConnection | null> {
  if (request.connectionId === null) return null;
  const connection = await findSetupConnection(db, request.connectionId, userId);
  if (!mayApproveSetup(connection)) throw new AppError('forbidden');
  return connection;
}

const connectionView = (connection: SetupConnection): SetupConnectionView => ({
  id: connection.connectionId,
  workspace: connection.workspaceSlug,
  workspaceIntegrationId: connection.workspaceIntegrationId,
  integrationName: connection.integrationName,
  environmentId: connection.environmentId,
  environmentName: connection.environmentName,
  mode: connection.mode,
});

/**
 * `GET /oauth/device/authorization?user_code=…`: the pending request a user code names, for the
 * consent page. A code that names no pending request is 400 `invalid_grant` and counts against
 * the guessing limit. A setup request the user may not approve is 403 `forbidden` (a good code:
 * it does not count).
 */
export async function readDeviceAuthorization(
  deps: Deps,
  session: SessionPrincipal,
  rawUserCode: string,
  ip: string,
): Promise<DeviceAuthorizationView> {
  const now = deps.clock.now();
  return withUserCodeGuard(deps, { userId: session.userId, ip }, async () => {
    const userCode = normaliseUserCode(rawUserCode);
    const request = userCode === null ? null : await findByUserCode(deps.pool, userCode, false);
    if (!isPending(request, now)) return null;
    const client = oauthClientById(request.oauthClientId);
    const connection = await approvableConnection(deps.pool, request, session.userId);
    return {
      userCode: displayUserCode(request.userCode),
      clientId: client.id,
      clientName: client.name,
      scopes: request.scopes,
      expiresAt: request.expiresAt.toISOString(),
      ...(connection ? { connection: connectionView(connection) } : {}),
    };
  });
}

export type ConsentDecision = 'approve' | 'deny';

/**
 * `POST /oauth/device/consent`: the signed-in, verified user approves or denies the pending
 * request of a user code, once. Approval grants exactly the scopes the request named; the CLI
 * client is created when the device code is exchanged. A code that names no pending request
 * (unknown, expired, already decided) is 400 `invalid_grant` and counts against the guessing limit.
 * A setup request is decided only by an owner or admin of its connection's workspace (403
 * `forbidden` for anyone else, nothing written, the request stays pending); its audit row is
 * that workspace's.
 */
export async function decideDeviceAuthorization(
  deps: Deps,
  session: SessionPrincipal,
  input: { user_code: string; decision: ConsentDecision },
  ip: string,
): Promise<ConsentDecision> {
  const now = deps.clock.now();
  return withUserCodeGuard(deps, { userId: session.userId, ip }, async () => {
    const userCode = normaliseUserCode(input.user_code);
    if (userCode === null) return null;
    return withTransaction(deps.pool, async (db) => {
      const request = await findByUserCode(db, userCode, true);
      if (!isPending(request, now)) return null;
      const connection = await approvableConnection(db, request, session.userId);
      const setup = connection !== null;
      const verb = input.decision === 'approve' ? 'approve' : 'deny';
      await recordDecision(db, {
        deviceCodeHash: request.deviceCodeHash,
        status: input.decision === 'approve' ? 'approved' : 'denied',
        userId: session.userId,
        now,
      });
      await recordAudit(db, {
        workspaceId: connection?.workspaceId ?? null,
        actorType: 'user',
        actorId: session.userId,
        action: setup ? `setup_authorization.${verb}` : `cli_authorization.${verb}`,
        targetId: connection?.connectionId ?? null,
        metadata: { clientId: request.oauthClientId, scopes: request.scopes },
        at: now,
      });
      return input.decision;
    });
  });
}

/**
 * `grant_type=urn:ietf:params:oauth:grant-type:device_code` (RFC 8628 §3.4, §3.5), one poll:
 * - exchanged already: `invalid_grant` (tokens are issued once);
 * - denied: `access_denied`; past its 10 minutes: `expired_token`;
 * - pending: `authorization_pending`, or `slow_down` when it comes sooner than the interval after
 *   the previous poll, which then grows by 5 s for good;
 * - approved: a new CLI client and its tokens, and the device code is spent.
 * A poll's record (its time, the grown interval) commits even when the answer is an error.
 */
export async function exchangeDeviceCode(deps: Deps, input: { client_id?: string; device_code?: string }): Promise<TokenResponse> {
  const client = requireOAuthClient(input.client_id);
  if (input.device_code === undefined) throw new AppError('invalid_request');
  if (!client.deviceCodeForm.test(input.device_code)) throw new AppError('invalid_grant');
  const deviceCodeHash = sha256Hex(input.device_code);
  const now = deps.clock.now();
  const outcome = await withTransaction(deps.pool, async (db): Promise<TokenResponse | ErrorCode> => {
    const request = await findByDeviceCodeForUpdate(db, deviceCodeHash);
    // Another client's device code is not this client's to poll.
    if (!request || request.oauthClientId !== client.id || request.status === 'exchanged') return 'invalid_grant';
    if (request.status === 'denied') return 'access_denied';
    if (request.expiresAt.getTime() <= now.getTime()) return 'expired_token';
    if (request.status === 'pending') {
      const tooSoon = request.lastPolledAt !== null && now.getTime() - request.lastPolledAt.getTime() < request.intervalSeconds * 1000;
      const intervalSeconds = request.intervalSeconds + (tooSoon ? SLOW_DOWN_STEP_SECONDS : 0);
      await recordPoll(db, { deviceCodeHash, intervalSeconds, now });
      return tooSoon ? 'slow_down' : 'authorization_pending';
    }
    // Approved, so decided by a user (the table's CHECK).
    if (request.userId === null) return 'invalid_grant';
    // A setup grant is bound at the exchange to the connection its approver may still manage.
    let binding: { workspaceId: string; connectionId: string } | null = null;
    if (request.connectionId !== null) {
      const connection = await findSetupConnection(db, request.connectionId, request.userId);
      if (!mayApproveSetup(connection)) return 'access_denied';
      binding = { workspaceId: connection.workspaceId, connectionId: connection.connectionId };
    }
    const { clientId, tokens } = await openCliClient(db, { client, userId: request.userId, scopes: request.scopes, binding, now });
    await markExchanged(db, { deviceCodeHash, cliClientId: clientId });
    return tokens;
  });
  if (typeof outcome === 'string') throw new AppError(outcome);
  return outcome;
}
