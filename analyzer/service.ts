import { hostname } from 'node:os';
import type pg from 'pg';
import type { Redis } from 'ioredis';
import type { ClickHouseClient } from '@clickhouse/client';
import type { Registry } from 'prom-client';
import type { Clock } from '../shared/clock.js';
import type { AnalyzerConfig } from '../shared/config.js';
import { ANALYSIS_CONSUMER_GROUP, RedisKeys } from '../shared/redis.js';
import { loadShapes } from '../shared/analysis/observationGroups.js';
import { ComparePool } from './comparePool.js';
import { ContractCache } from './contractCache.js';
import { JobStream, type Delivery } from './jobStream.js';
import { analyseJobs, type AnalysisDeps } from './liveAnalysis.js';
import { analyzerMetrics } from './metrics.js';
import { runNextReanalysis } from './reanalysis.js';
import { applyRuleChanges } from './ruleChanges.js';
import { FIRE_BATCH, fireDueDeadlines, type RuleFiringDeps } from './ruleFiring.js';
import { StreamTime } from './streamTime.js';

export interface AnalyzerDeps {
  config: AnalyzerConfig;
  pool: pg.Pool;
  redis: Redis;
  clickhouse: ClickHouseClient;
  clock: Clock;
  metrics: Registry;
  /** Defaults to `analysis:jobs`. */
  stream?: string;
  log?: (line: string) => void;
}

const READ_BLOCK_MS = 1000;
const IDLE_RETRY_MS = 1000;
const PRUNE_INTERVAL_MS = 60_000;
const PRUNE_BATCH = 10_000;

/** Waits ms, or less when `stopped` aborts first. */
function sleep(ms: number, stopped: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    const wake = () => { clearTimeout(timer); resolve(); };
    const timer = setTimeout(() => { stopped.removeEventListener('abort', wake); resolve(); }, ms);
    stopped.addEventListener('abort', wake, { once: true });
  });
}

/**
 * The analyzer: live analysis of the job stream, claims of entries left by dead consumers,
 * reanalysis from the outbox, reconciliation deadlines at stream time, and pruning of batch markers. Any number of processes may run
 * against the same stores: the consumer group gives each entry to one consumer, the outbox rows
 * and connections are locked while their results commit.
 */
export class Analyzer {
  readonly stream: JobStream;
  private readonly compare: ComparePool;
  private readonly live: AnalysisDeps;
  private readonly firing: RuleFiringDeps;
  private readonly metrics: ReturnType<typeof analyzerMetrics>;
  private running = false;
  private readonly stopping = new AbortController();
  private readonly loops: Promise<void>[] = [];
  private readonly readers: Redis[] = [];
  private readonly log: (line: string) => void;

  constructor(private readonly deps: AnalyzerDeps) {
    const consumer = `${hostname()}-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
    this.stream = new JobStream(deps.redis, deps.stream ?? RedisKeys.analysisJobs, ANALYSIS_CONSUMER_GROUP, consumer);
    this.metrics = analyzerMetrics(deps.metrics);
    this.compare = new ComparePool(deps.config.workerThreads, deps.config.memoEntries, (locators) => loadShapes(deps.clickhouse, locators), this.metrics);
    this.live = {
      pool: deps.pool, clickhouse: deps.clickhouse, clock: deps.clock, contracts: new ContractCache(deps.pool), compare: this.compare, metrics: this.metrics,
    };
    const streamTime = new StreamTime(deps.redis, deps.clock, {
      graceMs: deps.config.ruleGraceMs,
    });
    this.firing = { pool: deps.pool, clickhouse: deps.clickhouse, clock: deps.clock, streamTime, graceMs: deps.config.ruleGraceMs };
    this.log = deps.log ?? ((line) => process.stderr.write(`${line}\n`));
  }

  async start(): Promise<void> {
    await this.stream.ensureGroup();
    this.running = true;
    for (let i = 0; i < this.deps.config.concurrency; i++) {
      const reader = this.deps.redis.duplicate();
      await reader.connect();
      this.readers.push(reader);
      this.loops.push(this.loop('read', () => this.readRound(reader)));
    }
    this.loops.push(this.loop('claim', () => this.claimRound()));
    this.loops.push(this.loop('reanalysis', () => this.reanalysisRound()));
    this.loops.push(this.loop('rules', () => this.ruleRound()));
    this.loops.push(this.loop('prune', () => this.pruneRound()));
  }

  /** Stops taking work and waits for the rounds in progress (their entries are acknowledged or stay pending). */
  async stop(): Promise<void> {
    this.running = false;
    this.stopping.abort();
    await Promise.allSettled(this.loops);
    for (const reader of this.readers) reader.disconnect();
    await this.compare.close();
  }

  private async loop(name: string, round: () => Promise<number>): Promise<void> {
    while (this.running) {
      try {
        const waitMs = await round();
        if (waitMs > 0 && this.running) await sleep(waitMs, this.stopping.signal);
      } catch (error) {
        this.log(`analyzer ${name}: ${(error as Error).message}`);
        if (this.running) await sleep(IDLE_RETRY_MS, this.stopping.signal);
      }
    }
  }

  private async handle(delivery: Delivery): Promise<void> {
    if (delivery.ids.length === 0) return;
    await this.deps.clock.sync();
    await analyseJobs(this.live, delivery.jobs);
    await this.stream.ack(delivery.ids, delivery.jobs.map((job) => job.batchId));
    this.metrics.jobs.inc({ outcome: 'analysed' }, delivery.jobs.length);
    if (delivery.ids.length > delivery.jobs.length) this.metrics.jobs.inc({ outcome: 'malformed' }, delivery.ids.length - delivery.jobs.length);
  }

  private async readRound(reader: Redis): Promise<number> {
    const delivery = await this.stream.read(reader, this.deps.config.batchJobs, READ_BLOCK_MS);
    const started = Date.now();
    await this.handle(delivery);
    // A full round means a backlog: go on at once. Otherwise let jobs gather for the next one.
    if (delivery.ids.length >= this.deps.config.batchJobs || delivery.ids.length === 0) return 0;
    return Math.max(0, this.deps.config.roundIntervalMs - (Date.now() - started));
  }

  private async claimRound(): Promise<number> {
    const delivery = await this.stream.claim(this.deps.config.claimIdleMs, this.deps.config.batchJobs);
    await this.handle(delivery);
    const { lag } = await this.stream.backlog();
    this.metrics.backlog.set(lag ?? 0);
    return delivery.ids.length > 0 ? 0 : Math.min(this.deps.config.claimIdleMs / 2, 5000);
  }

  private async reanalysisRound(): Promise<number> {
    await this.deps.clock.sync();
    const ran = await runNextReanalysis(this.live);
    return ran ? 0 : this.deps.config.reanalysisPollMs;
  }

  private async ruleRound(): Promise<number> {
    await this.deps.clock.sync();
    const changes = await applyRuleChanges(this.deps.pool, this.deps.clock);
    const { taken, fired, opened, streamLagMs } = await fireDueDeadlines(this.firing);
    if (streamLagMs !== undefined) this.metrics.ruleStreamLag.set(streamLagMs / 1000);
    this.metrics.ruleDeadlines.inc({ outcome: 'fired' }, fired);
    this.metrics.findings.inc({ kind: 'expected-outcome-missing' }, fired);
    this.metrics.incidentsOpened.inc(opened);
    this.metrics.ruleDeadlines.inc({ outcome: 'cleared' }, taken - fired);
    return taken >= FIRE_BATCH || changes > 0 ? 0 : this.deps.config.rulePollMs;
  }

  private async pruneRound(): Promise<number> {
    const cutoff = new Date(this.deps.clock.nowMs() - this.deps.config.batchMarkerRetentionSeconds * 1000);
    const { rowCount } = await this.deps.pool.query(
      'DELETE FROM analysed_batches WHERE batch_id IN (SELECT batch_id FROM analysed_batches WHERE analysed_at < $1 LIMIT $2)',
      [cutoff, PRUNE_BATCH],
    );
    // A full batch means more are due: go on at once (in bounded statements) until they are gone.
    return (rowCount ?? 0) >= PRUNE_BATCH ? 0 : PRUNE_INTERVAL_MS;
  }
}
