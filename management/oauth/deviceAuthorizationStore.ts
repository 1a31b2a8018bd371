import type { Queryable } from '../../shared/db/pool.js';

export type DeviceAuthorizationStatus = 'pending' | 'approved' | 'denied' | 'exchanged';

/** A device authorization request (migrations/postgres/1732000014000_cli_oauth.sql); never the device code itself. */
export interface DeviceAuthorization {
  deviceCodeHash: string;
  userCode: string;
  /** The public client that asked (rules.ts `CLI_CLIENT`, `SETUP_CLIENT`). */
  oauthClientId: string;
  /** The connection a setup tool's request names; null for the CLI. */
  connectionId: string | null;
  scopes: string[];
  status: DeviceAuthorizationStatus;
  userId: string | null;
  intervalSeconds: number;
  lastPolledAt: Date | null;
  expiresAt: Date;
}

interface Row {
  device_code_hash: string;
  user_code: string;
  oauth_client_id: string;
  connection_id: string | null;
  scopes: string[];
  status: DeviceAuthorizationStatus;
  user_id: string | null;
  interval_seconds: number;
  last_polled_at: Date | null;
  expires_at: Date;
}

const COLUMNS =
  'device_code_hash, user_code, oauth_client_id, connection_id, scopes, status, user_id, interval_seconds, last_polled_at, expires_at';

const fromRow = (row: Row): DeviceAuthorization => ({
  deviceCodeHash: row.device_code_hash,
  userCode: row.user_code,
  oauthClientId: row.oauth_client_id,
  connectionId: row.connection_id,
  scopes: row.scopes,
  status: row.status,
  userId: row.user_id,
  intervalSeconds: row.interval_seconds,
  lastPolledAt: row.last_polled_at,
  expiresAt: row.expires_at,
});

/** Stores a new pending request; false when its user code is taken (the caller draws another). */
export async function insertDeviceAuthorization(
  db: Queryable,
  input: {
    deviceCodeHash: string;
    userCode: string;
    oauthClientId: string;
    connectionId: string | null;
    scopes: string[];
    intervalSeconds: number;
    now: Date;
    expiresAt: Date;
  },
): Promise<boolean> {
  const { rowCount } = await db.query(
    `INSERT INTO oauth_device_authorizations
       (device_code_hash, user_code, oauth_client_id, connection_id, scopes, status, interval_seconds, created_at, expires_at)
     VALUES ($1, $2, $3, $4, $5, 'pending', $6, $7, $8)
     ON CONFLICT DO NOTHING`,
    [
      input.deviceCodeHash,
      input.userCode,
      input.oauthClientId,
      input.connectionId,
      input.scopes,
      input.intervalSeconds,
      input.now,
      input.expiresAt,
    ],
  );
  return rowCount === 1;
}

/**
 * Deletes requests that expired before `before`, at most 100 a call (each new request sweeps a
 * few): their user codes become free again, and a poll with their device code is `invalid_grant`.
 */
export async function purgeDeviceAuthorizations(db: Queryable, before: Date): Promise<void> {
  await db.query(
    `DELETE FROM oauth_device_authorizations
      WHERE device_code_hash IN (SELECT device_code_hash FROM oauth_device_authorizations WHERE expires_at < $1 LIMIT 100)`,
    [before],
  );
}

export async function findByUserCode(db: Queryable, userCode: string, lock: boolean): Promise<DeviceAuthorization | null> {
  const { rows } = await db.query<Row>(
    `SELECT ${COLUMNS} FROM oauth_device_authorizations WHERE user_code = $1${lock ? ' FOR UPDATE' : ''}`,
    [userCode],
  );
  return rows[0] ? fromRow(rows[0]) : null;
}

/** The request of a device code, locked: polls of one code are taken one at a time. */
export async function findByDeviceCodeForUpdate(db: Queryable, deviceCodeHash: string): Promise<DeviceAuthorization | null> {
  const { rows } = await db.query<Row>(`SELECT ${COLUMNS} FROM oauth_device_authorizations WHERE device_code_hash = $1 FOR UPDATE`, [
    deviceCodeHash,
  ]);
  return rows[0] ? fromRow(rows[0]) : null;
}

export async function recordDecision(
  db: Queryable,
  input: { deviceCodeHash: string; status: 'approved' | 'denied'; userId: string; now: Date },
): Promise<void> {
  await db.query(
    `UPDATE oauth_device_authorizations SET status = $2, user_id = $3, decided_at = $4 WHERE device_code_hash = $1 AND status = 'pending'`,
    [input.deviceCodeHash, input.status, input.userId, input.now],
  );
}

/** A poll of a pending request: when it came, and the interval from now on. */
export async function recordPoll(db: Queryable, input: { deviceCodeHash: string; intervalSeconds: number; now: Date }): Promise<void> {
  await db.query('UPDATE oauth_device_authorizations SET last_polled_at = $2, interval_seconds = $3 WHERE device_code_hash = $1', [
    input.deviceCodeHash,
    input.now,
    input.intervalSeconds,
  ]);
}

/** The approved request became CLI client `cliClientId`: its device code is spent. */
export async function markExchanged(db: Queryable, input: { deviceCodeHash: string; cliClientId: string }): Promise<void> {
  await db.query(
    `UPDATE oauth_device_authorizations SET status = 'exchanged', cli_client_id = $2 WHERE device_code_hash = $1 AND status = 'approved'`,
    [input.deviceCodeHash, input.cliClientId],
  );
}
