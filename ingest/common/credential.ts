import type { KeyObject } from 'node:crypto';
import type { Direction, Protocol } from '../../shared/envelope/types.js';

/**
 * What the edge knows about one Connection key: the binding of 03 Authentication/Ingestion
 * (connection, mode, environment, tenant, Integration) and its current credential.
 */
export interface IngestCredential {
  connectionId: string;
  connectionKey: string;
  workspaceId: string;
  accountId: string;
  tenantId: string;
  environmentId: string;
  mode: 'sandbox' | 'live';
  /** The shared workflow id (`wint_`). */
  integrationId: string;
  /** The public Integration key (`svc_int_`) every envelope must name. */
  integrationKey: string;
  direction: Direction;
  protocol: Protocol;
  /**
   * False when no request may pass: no active credential, an archived workspace, or a deleted
   * connection or Integration (all answer 401).
   */
  usable: boolean;
  /** SHA-256 hex of the active ingest token, null when none is active. */
  tokenHash: string | null;
  /** The active ingest token as the HMAC key (00-decisions §4: kept sealed at rest). */
  hmacKey: KeyObject | null;
  /** The account's operator-set Sandbox allowance from PostgreSQL, used when Redis has no mirror. */
  sandboxAllowance: number | null;
  /** `cred_epoch:<connectionId>` as read from Redis before the PostgreSQL read ('' when unset). */
  epoch: string;
  loadedAt: number;
}

/** How a credential load ended: `shed` when it was refused without a read (too many waiting). */
export type CredentialLoadResult = 'found' | 'unknown' | 'failed' | 'shed';
