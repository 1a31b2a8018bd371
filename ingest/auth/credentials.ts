import { createSecretKey, type KeyObject } from 'node:crypto';
import type pg from 'pg';
import type { Redis } from 'ioredis';
import type { Direction, Protocol } from '../../shared/envelope/types.js';
import { AppError } from '../../shared/errors/index.js';
import { RedisKeys } from '../../shared/redis.js';
import { decryptSecret } from '../../shared/secrets.js';
import { LoadQueue } from './loadQueue.js';
import { UnknownKeys } from './unknownKeys.js';
import type { CredentialLoadResult, IngestCredential } from '../common/credential.js';

interface BindingRow {
  id: string;
  connection_key: string;
  workspace_id: string;
  environment_id: string;
  mode: 'sandbox' | 'live';
  credential_status: string;
  connection_deleted: boolean;
  integration_id: string;
  integration_key: string;
  direction: Direction;
  protocol: Protocol;
  integration_deleted: boolean;
  tenant_id: string;
  account_id: string;
  workspace_status: string;
  sandbox_monthly_allowance: number | null;
  token_hash: string | null;
  token_sealed: string | null;
}

const BINDING_QUERY = `
  SELECT c.id, c.connection_key, c.workspace_id, c.environment_id, c.mode, c.credential_status,
         c.deleted_at IS NOT NULL AS connection_deleted,
         i.id AS integration_id, i.integration_key, i.direction, i.protocol, i.deleted_at IS NOT NULL AS integration_deleted,
         w.tenant_id, w.account_id, w.status AS workspace_status, a.sandbox_monthly_allowance,
         cr.token_hash, cr.token_sealed
    FROM connections c
    JOIN integrations i ON i.id = c.integration_id
    JOIN workspaces w ON w.id = c.workspace_id
    JOIN accounts a ON a.id = w.account_id
    LEFT JOIN credentials cr ON cr.connection_id = c.id AND cr.status = 'active'
   WHERE c.id = $1`;

/** The sealed token could not be opened (wrong SECRET_ENCRYPTION_KEY): a configuration fault, answered 500. */
export class CredentialDecryptError extends Error {}

function openToken(sealed: string, key: Buffer): KeyObject {
  try {
    return createSecretKey(Buffer.from(decryptSecret(sealed, key), 'utf8'));
  } catch {
    throw new CredentialDecryptError('the ingest token cannot be decrypted with SECRET_ENCRYPTION_KEY');
  }
}

export interface CredentialCacheOptions {
  pool: Pick<pg.Pool, 'query'>;
  redis: Redis;
  encryptionKey: Buffer;
  /** A cached binding older than this is read again (a backstop for changes that move no epoch). */
  maxAgeMs?: number;
  /** How long an unknown Connection key is remembered as unknown. */
  unknownTtlMs?: number;
  maxEntries?: number;
  /** Unknown Connection keys remembered at most. */
  maxUnknownEntries?: number;
  /** The bounded queue of loads (default: CREDENTIAL_LOAD_LIMITS). */
  queue?: LoadQueue;
  onLoad?: (result: CredentialLoadResult) => void;
}

/** Retry-After of a load refused because too many wait (a 503 `service_unavailable`). */
export const LOAD_SHED_RETRY_AFTER_SECONDS = 1;

/**
 * The edge's in-process credential cache. A binding is read from PostgreSQL once and kept with
 * the Redis credential epoch seen just before that read; the admission script compares that epoch
 * with the current one on every batch, so a rotated, revoked or archived credential fails on the
 * very next request without a lookup on the hot path. Failed checks against a cached binding call
 * `refresh`, which costs one Redis read and reloads only when the epoch moved.
 */
export class CredentialCache {
  private readonly entries = new Map<string, IngestCredential>();
  private readonly unknown: UnknownKeys;
  private readonly loading = new Map<string, Promise<IngestCredential | null>>();
  private readonly queue: LoadQueue;
  private readonly maxAgeMs: number;
  private readonly maxEntries: number;

  constructor(private readonly options: CredentialCacheOptions) {
    this.maxAgeMs = options.maxAgeMs ?? 300_000;
    this.maxEntries = options.maxEntries ?? 100_000;
    this.unknown = new UnknownKeys(options.unknownTtlMs ?? 10_000, options.maxUnknownEntries ?? 10_000);
    this.queue = options.queue ?? new LoadQueue();
  }

  /** The binding of a Connection key (cached), or null when no connection has that key. */
  get(connectionKey: string): Promise<IngestCredential | null> | IngestCredential | null {
    const cached = this.entries.get(connectionKey);
    const now = Date.now();
    if (cached && now - cached.loadedAt < this.maxAgeMs) return cached;
    if (this.unknown.has(connectionKey, now)) return null;
    return this.load(connectionKey, cached);
  }

  /** Reads the binding again (the epoch moved). */
  reload(credential: IngestCredential): Promise<IngestCredential | null> {
    return this.load(credential.connectionKey, credential);
  }

  /**
   * The current binding when the cached one may be out of date: reloads only when the Redis
   * epoch differs from the cached one. Used before refusing a request on cached data.
   */
  async refresh(credential: IngestCredential): Promise<IngestCredential | null> {
    const epoch = (await this.options.redis.get(RedisKeys.credentialEpoch(credential.accountId, credential.connectionId))) ?? '';
    return epoch === credential.epoch ? credential : this.reload(credential);
  }

  /**
   * `known`: the connection's id and account when this key was seen before (they never change);
   * its load goes ahead of those of never-seen keys. Too many waiting → 503 with Retry-After.
   */
  private load(
    connectionKey: string,
    known: Pick<IngestCredential, 'connectionId' | 'accountId'> | undefined,
  ): Promise<IngestCredential | null> {
    const running = this.loading.get(connectionKey);
    if (running) return running;
    const queued = this.queue.run(known ? 'known' : 'unknown', () => this.counted(connectionKey, known));
    if (queued === null) {
      this.options.onLoad?.('shed');
      return Promise.reject(new AppError('service_unavailable', { retryAfterSeconds: LOAD_SHED_RETRY_AFTER_SECONDS }));
    }
    const promise = queued.finally(() => this.loading.delete(connectionKey));
    this.loading.set(connectionKey, promise);
    return promise;
  }

  private async counted(
    connectionKey: string,
    known: Pick<IngestCredential, 'connectionId' | 'accountId'> | undefined,
  ): Promise<IngestCredential | null> {
    try {
      const credential = await this.read(connectionKey, known);
      this.options.onLoad?.(credential === null ? 'unknown' : 'found');
      return credential;
    } catch (error) {
      this.options.onLoad?.('failed');
      throw error;
    }
  }

  private async read(
    connectionKey: string,
    known: Pick<IngestCredential, 'connectionId' | 'accountId'> | undefined,
  ): Promise<IngestCredential | null> {
    const { pool, redis } = this.options;
    const ids =
      known
      ?? (
        await pool.query<{ connectionId: string; accountId: string }>(
          'SELECT c.id AS "connectionId", w.account_id AS "accountId" FROM connections c JOIN workspaces w ON w.id = c.workspace_id WHERE c.connection_key = $1',
          [connectionKey],
        )
      ).rows[0];
    if (ids === undefined) return this.forget(connectionKey);
    const id = ids.connectionId;
    // The epoch is read before the binding: a change committing after this read bumps the epoch
    // again after its commit, so the admission script sees the difference on the next batch.
    const epoch = (await redis.get(RedisKeys.credentialEpoch(ids.accountId, id))) ?? '';
    const row = (await pool.query<BindingRow>(BINDING_QUERY, [id])).rows[0];
    if (!row) return this.forget(connectionKey);
    const usable =
      row.credential_status === 'active'
      && row.token_hash !== null
      && row.token_sealed !== null
      && row.workspace_status === 'active'
      && !row.connection_deleted
      && !row.integration_deleted;
    const credential: IngestCredential = {
      connectionId: row.id,
      connectionKey: row.connection_key,
      workspaceId: row.workspace_id,
      accountId: row.account_id,
      tenantId: row.tenant_id,
      environmentId: row.environment_id,
      mode: row.mode,
      integrationId: row.integration_id,
      integrationKey: row.integration_key,
      direction: row.direction,
      protocol: row.protocol,
      usable,
      tokenHash: usable ? row.token_hash : null,
      hmacKey: usable ? openToken(row.token_sealed!, this.options.encryptionKey) : null,
      sandboxAllowance: row.sandbox_monthly_allowance === null ? null : Number(row.sandbox_monthly_allowance),
      epoch,
      loadedAt: Date.now(),
    };
    this.entries.delete(connectionKey);
    if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(connectionKey, credential);
    return credential;
  }

  private forget(connectionKey: string): null {
    this.entries.delete(connectionKey);
    this.unknown.add(connectionKey, Date.now());
    return null;
  }
}
