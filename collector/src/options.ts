// The options, checked once and turned into settings with every default applied.

import { DEFAULT_OBSERVATIONS_PER_MINUTE, DEFAULT_REQUESTS_PER_MINUTE } from './budget.js';
import { envelopeFragmentsOf } from './envelope.js';
import { createKeyedHasher, hashNamespaceOf, type KeyedHasher } from './keyedHash.js';
import { shapeLimitsOf, type ShapeLimits } from './shape.js';
import { ShapeCache } from './shapeCache.js';
import type { CollectorOptions, ConnectionCheckResult, Direction, Protocol } from './types.js';

export interface Settings {
  /** `<endpoint>/ingest` and `<endpoint>/v1/collector/connection`. */
  ingestUrl: URL;
  connectionUrl: URL;
  /** The endpoint's origin and path prefix (isOwnRequest). */
  origin: string;
  basePath: string;
  integrationKey: string;
  connectionKey: string;
  ingestToken: string;
  direction: Direction;
  protocol: Protocol;
  hash: KeyedHasher;
  hashNamespace: string;
  maxBatchSize: number;
  maxConcurrentUploads: number;
  flushIntervalMs: number;
  maxQueueSize: number;
  maxQueueBytes: number;
  maxInspectedBodyBytes: number;
  /** Undefined: the edge's budget (collector.ts). */
  maxObservationsPerMinute: number | undefined;
  maxRequestsPerMinute: number | undefined;
  /** Milliseconds since the epoch; never throws, always a finite number. */
  clock: () => number;
  shapeLimits: ShapeLimits;
  /** The last shape per operation (per collector). */
  shapes: ShapeCache;
  initialDelayMs: number;
  maxDelayMs: number;
  maxRetryAfterMs: number;
  requestTimeoutMs: number;
  redactionPolicyVersion: string;
  /** The envelope members that are the same for every observation of this collector. */
  envelopeFragments: { head: string; payloadTail: string };
  onConnectionCheck?: (result: ConnectionCheckResult) => void;
  connectionCheck: boolean;
  /** 0: the connection check is not repeated. */
  contractRefreshIntervalMs: number;
}

/** Printable ASCII without spaces, 1 to `max` characters (the edge's token rule). */
export const isToken = (value: unknown, max: number): value is string =>
  typeof value === 'string' && value.length >= 1 && value.length <= max && /^[\x21-\x7E]+$/.test(value);

const DIRECTIONS: readonly Direction[] = ['inbound', 'outbound'];
const PROTOCOLS: readonly Protocol[] = ['http-api', 'http-webhook', 'queue', 'scheduled-feed'];

/** A whole number from the options clamped into [min, max], or the default when absent or not a number. */
function int(value: unknown, fallback: number, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) return fallback;
  return Math.min(max, Math.max(min, Math.floor(value)));
}

export const MAX_BATCH_SIZE = 50;

/** The host's clock, read so that a throw or a non-number falls back to Date.now (never throws). */
function safeClock(clock: () => number): () => number {
  return () => {
    try {
      const now = clock();
      return typeof now === 'number' && Number.isFinite(now) ? now : Date.now();
    } catch {
      return Date.now();
    }
  };
}

/** The settings, or what is wrong with the options (the collector then sends nothing). */
export function settingsOf(options: CollectorOptions): { settings: Settings } | { error: string } {
  if (typeof options !== 'object' || options === null) return { error: 'options must be an object' };
  const problems: string[] = [];
  let base: URL | undefined;
  try {
    base = new URL(String(options.endpoint));
    if (base.protocol !== 'http:' && base.protocol !== 'https:') problems.push('endpoint must be an http or https URL');
    if (base.username || base.password) problems.push('endpoint must not carry credentials');
  } catch {
    problems.push('endpoint must be an absolute http or https URL');
  }
  if (!isToken(options.integrationKey, 128)) problems.push('integrationKey must be 1 to 128 printable characters');
  if (!isToken(options.connectionKey, 512)) problems.push('connectionKey must be a non-empty printable string');
  if (!isToken(options.ingestToken, 512)) problems.push('ingestToken must be a non-empty printable string');
  if (!DIRECTIONS.includes(options.direction)) problems.push(`direction must be one of ${DIRECTIONS.join(', ')}`);
  if (!PROTOCOLS.includes(options.protocol)) problems.push(`protocol must be one of ${PROTOCOLS.join(', ')}`);
  if (options.protocol === 'http-api' && options.direction !== 'outbound') problems.push('protocol http-api is outbound');
  if (options.protocol === 'http-webhook' && options.direction !== 'inbound') problems.push('protocol http-webhook is inbound');
  const shapeLimits = shapeLimitsOf(options.shapeLimits);
  const hashNamespace = hashNamespaceOf(options.hashNamespace);
  if (hashNamespace === null) problems.push('hashNamespace must be 1 to 125 printable characters without spaces');
  const key = options.hashKey;
  if (key !== undefined && !((typeof key === 'string' || key instanceof Uint8Array) && key.length > 0))
    problems.push('hashKey must be a non-empty string or Uint8Array');
  const redactionPolicyVersion = options.redactionPolicyVersion ?? 'collector-1';
  if (!isToken(redactionPolicyVersion, 64)) problems.push('redactionPolicyVersion must be 1 to 64 printable characters without spaces');
  if (options.onConnectionCheck !== undefined && typeof options.onConnectionCheck !== 'function')
    problems.push('onConnectionCheck must be a function');
  if (options.clock !== undefined && typeof options.clock !== 'function') problems.push('clock must be a function');
  if (problems.length > 0 || base === undefined || hashNamespace === null) return { error: problems.join('; ') };

  const basePath = base.pathname.replace(/\/+$/, '');
  const at = (path: string) => new URL(`${base.protocol}//${base.host}${basePath}${path}`);
  const retry = options.retry ?? {};
  const initialDelayMs = int(retry.initialDelayMs, 500, 1, 3_600_000);
  return {
    settings: {
      ingestUrl: at('/ingest'),
      connectionUrl: at('/v1/collector/connection'),
      origin: base.origin,
      basePath,
      integrationKey: options.integrationKey,
      connectionKey: options.connectionKey,
      ingestToken: options.ingestToken,
      direction: options.direction,
      protocol: options.protocol,
      hash: createKeyedHasher(key),
      hashNamespace,
      maxBatchSize: int(options.maxBatchSize, MAX_BATCH_SIZE, 1, MAX_BATCH_SIZE),
      maxConcurrentUploads: int(options.maxConcurrentUploads, 4, 1, 16),
      flushIntervalMs: int(options.flushIntervalMs, 1_000, 1, 3_600_000),
      maxQueueSize: int(options.maxQueueSize, 10_000, 1, 10_000_000),
      maxQueueBytes: int(options.maxQueueBytes, 64 * 1024 * 1024, 1024 * 1024, 4 * 1024 * 1024 * 1024),
      maxInspectedBodyBytes: int(options.maxInspectedBodyBytes, 256 * 1024, 0, 64 * 1024 * 1024),
      maxObservationsPerMinute:
        options.maxObservationsPerMinute === undefined
          ? undefined
          : int(options.maxObservationsPerMinute, DEFAULT_OBSERVATIONS_PER_MINUTE, 0, 1_000_000_000),
      maxRequestsPerMinute:
        options.maxRequestsPerMinute === undefined
          ? undefined
          : int(options.maxRequestsPerMinute, DEFAULT_REQUESTS_PER_MINUTE, 0, 1_000_000_000),
      // Read through `Date` at each call (not a captured Date.now): a faked Date is seen.
      clock: options.clock === undefined ? () => Date.now() : safeClock(options.clock),
      shapeLimits,
      shapes: new ShapeCache(shapeLimits),
      initialDelayMs,
      maxDelayMs: int(retry.maxDelayMs, 30_000, initialDelayMs, 3_600_000),
      maxRetryAfterMs: int(retry.maxRetryAfterMs, 300_000, 0, 24 * 3_600_000),
      requestTimeoutMs: int(options.requestTimeoutMs, 10_000, 1, 600_000),
      redactionPolicyVersion,
      envelopeFragments: envelopeFragmentsOf(options.integrationKey, options.direction, options.protocol, redactionPolicyVersion),
      ...(options.onConnectionCheck ? { onConnectionCheck: options.onConnectionCheck } : {}),
      connectionCheck: options.connectionCheck !== false,
      contractRefreshIntervalMs:
        options.contractRefreshIntervalMs === 0 ? 0 : int(options.contractRefreshIntervalMs, 60_000, 1_000, 24 * 3_600_000),
    },
  };
}
