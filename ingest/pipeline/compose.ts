import type pg from 'pg';
import type { Redis } from 'ioredis';
import type { ClickHouseClient } from '@clickhouse/client';
import type { Registry } from 'prom-client';
import type { Clock } from '../../shared/clock.js';
import type { Config } from '../../shared/config.js';
import { ANALYSIS_CONSUMER_GROUP, RedisKeys } from '../../shared/redis.js';
import { Admission } from '../admission/admission.js';
import { AdmissionResolver } from '../admission/resolver.js';
import { CredentialCache } from '../auth/credentials.js';
import { BatchChecker, createCheckPool } from '../check/checker.js';
import { MAX_BODY_BYTES } from '../common/edgeHttp.js';
import { IngestMetrics } from '../common/metrics.js';
import { insertObservationRows } from '../common/observationsTable.js';
import { ActiveRoutesCache } from '../contract/activeRoutes.js';
import { IntakePacer } from '../log/intakePacer.js';
import { Shipper } from '../log/shipper.js';
import { WriteAheadLog } from '../log/writeAheadLog.js';
import { SharedSlots } from '../offload/sharedSlots.js';
import { EdgeAuthentication } from './edgeAuthentication.js';
import { IngestPipeline } from './ingestPipeline.js';

/** What an edge adapter needs to build the pipeline. */
export interface EdgeDeps {
  config: Config;
  pool: Pick<pg.Pool, 'query'>;
  redis: Redis;
  clickhouse: ClickHouseClient;
  clock: Clock;
  metrics: Registry;
  /** The analysis stream (default `RedisKeys.analysisJobs`); tests point it elsewhere. */
  analysisStream?: string;
  /** Receives store outages and unexpected failures (answered 503/500 without detail). */
  logError?: (message: string, error: unknown) => void;
}

/**
 * The composition root of the edge (both adapters use it): builds each stage from the config and
 * the stores, then starts them in order: the admission scripts, the analysis consumer group
 * (BUSYGROUP ignored), the write-ahead log (opened and repaired) and the shipping of what it holds.
 */
export async function createIngestPipeline(deps: EdgeDeps): Promise<IngestPipeline> {
  const { config, redis, clock } = deps;
  const { ingest } = config;
  const metrics = new IngestMetrics(deps.metrics);
  const logError = deps.logError;
  const analysisStream = deps.analysisStream ?? RedisKeys.analysisJobs;

  const credentials = new CredentialCache({
    pool: deps.pool,
    redis,
    encryptionKey: config.secretEncryptionKey,
    onLoad: (result) => metrics.credentialLoads[result].inc(),
  });
  const admission = new Admission(redis, config);
  const resolver = new AdmissionResolver({
    admission,
    redis,
    clock,
    metrics,
    sweepIntervalMs: ingest.settleIntervalMs,
    deadlineMs: ingest.admissionDeadlineMs,
    ...(logError ? { logError } : {}),
  });
  const slots = ingest.sharedSlots > 0 ? new SharedSlots(ingest.sharedSlots) : null;
  if (slots !== null) metrics.slotsInUse = () => slots.count - slots.available;
  const checker = new BatchChecker(ingest.workerThreads > 0 ? createCheckPool(ingest.workerThreads, slots) : null);

  await admission.load();
  await redis.xgroup('CREATE', analysisStream, ANALYSIS_CONSUMER_GROUP, '0', 'MKSTREAM').catch((error: Error) => {
    if (!error.message.startsWith('BUSYGROUP')) throw error;
  });
  resolver.start();
  const log = await WriteAheadLog.open({
    dir: ingest.walDir,
    segmentBytes: ingest.walSegmentBytes,
    onRepair: (repair) =>
      logError?.(
        'write-ahead log repaired',
        new Error(`segment ${repair.segment} cut at ${repair.offset}: ${repair.reason}; ${repair.segmentsRemoved} later segments removed`),
      ),
  });
  // The pacer lets requests in as the shipper ships (ingest/log/intakePacer.ts).
  let pacer: IntakePacer | null = null;
  const shipper = new Shipper({
    log,
    admission,
    redis,
    analysisStream,
    analysisStreamMaxLen: ingest.analysisStreamMaxLen,
    insert: (body, signal) => insertObservationRows(deps.clickhouse, body, signal),
    insertTimeoutMs: ingest.insertTimeoutMs,
    maxInsertBytes: ingest.shipMaxBytes,
    intervalMs: ingest.shipIntervalMs,
    maxLogBytes: ingest.walMaxBytes,
    maxLogAgeMs: ingest.walMaxAgeMs,
    nowMs: () => Date.now(),
    onShipped: (_batches, rows, bytes, seconds) => {
      metrics.insertRows.observe(rows);
      metrics.insertSeconds.observe(seconds);
      pacer?.shipped(bytes);
    },
    onFailure: (error) => {
      metrics.insertFailures.inc();
      logError?.('write-ahead log shipping failed', error);
      pacer?.shipped(0);
    },
  });
  pacer = new IntakePacer(shipper, {
    paceBytes: ingest.walPaceBytes,
    maxWaitMs: ingest.walPaceMaxWaitMs,
    maxTokens: Math.max(ingest.shipMaxBytes, MAX_BODY_BYTES),
  });
  await shipper.start();

  const auth = new EdgeAuthentication(credentials, clock);
  const activeRoutes = new ActiveRoutesCache(deps.pool);
  return new IngestPipeline({
    auth,
    credentials,
    admission,
    resolver,
    activeRoutes,
    checker,
    slots,
    log,
    shipper,
    pacer,
    clock,
    metrics,
    ...(logError ? { logError } : {}),
  });
}
