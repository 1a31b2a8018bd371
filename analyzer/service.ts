import { hostname } from 'node:os';
import type pg from 'pg';
import type { Redis } from 'ioredis';
import type { ClickHouseClient } from '@clickhouse/client';
import type { Registry } from 'prom-client';
import type { Clock } from '../shared/clock.js';
import type { AnalyzerConfig } from '../shared/config.js';
import { ANALYSIS_CONSUMER_GROUP, RedisKeys } from '../shared/redis.js';
import { loadShapes } from '../shared/analysis/observationGroups.js';
import { isClickHouseOverload } from '../shared/clickhouse/client.js';
import { ComparePool } from './comparePool.js';
import { ContractCache } from './contractCache.js';
import { JobStream, type AnalysisJobEntry, type Delivery } from './jobStream.js';
import { analyseJobs, type AnalysisDeps } from './liveAnalysis.js';
import { analyzerMetrics } from './metrics.js';
import { ReanalysisReadRefused, runNextReanalysis } from './reanalysis.js';
import { applyRuleChanges } from './ruleChanges.js';
import { FIRE_BATCH, fireDueDeadlines, type RuleFiringDeps } from './ruleFiring.js';
import { StreamTime } from './streamTime.js';
import { claimRepair, loadRepairTask, recordRepairResult } from './repairJobs.js';
import { RepairPool } from './repairPool.js';
import { RepairWakeup } from './repairWakeup.js';

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
/** A reanalysis whose read went past ClickHouse's limits is tried again by this process after this long. */
export const REANALYSIS_DEFER_MS = 5 * 60_000;

/** Waits ms, or less when `stopped` aborts first. */
function sleep(ms: number, stopped: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    const wake = () => {
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(() => {
      stopped.removeEventListener('abort', wake);
      resolve();
    }, ms);
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
  private readonly repairs: RepairPool | null;
  private readonly repairWakeup: RepairWakeup;
  private readonly live: AnalysisDeps;
  private readonly firing: RuleFiringDeps;
  private readonly metrics: ReturnType<typeof analyzerMetrics>;
  private running = false;
  private readonly stopping = new AbortController();
  private readonly loops: Promise<void>[] = [];
  private readonly readers: Redis[] = [];
  private readonly log: (line: string) => void;
  /** Outbox ids of reanalyses this process defers (their read went past ClickHouse's limits), with when to try again. */
  private readonly deferredReanalyses = new Map<string, number>();

  constructor(private readonly deps: AnalyzerDeps) {
    const consumer = `${hostname()}-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
    this.stream = new JobStream(deps.redis, deps.stream ?? RedisKeys.analysisJobs, ANALYSIS_CONSUMER_GROUP, consumer);
    this.metrics = analyzerMetrics(deps.metrics);
    this.compare = new ComparePool(
      deps.config.workerThreads,
      deps.config.memoEntries,
      (locators) => loadShapes(deps.clickhouse, locators),
      this.metrics,
    );
    this.live = {
      pool: deps.pool,
      clickhouse: deps.clickhouse,
      clock: deps.clock,
      contracts: new ContractCache(deps.pool),
      compare: this.compare,
      metrics: this.metrics,
    };
    const streamTime = new StreamTime(deps.redis, deps.clock, {
      graceMs: deps.config.ruleGraceMs,
    });
    // Repairs are rare and each is bounded (1,000 fixtures): one thread keeps them off the event
    // loop without taking a core from live analysis.
    this.repairs = deps.config.repairs === 'enabled' ? new RepairPool(Math.min(1, deps.config.workerThreads)) : null;
    this.repairWakeup = new RepairWakeup(deps.pool);
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
    const repairs = this.repairs;
    if (repairs) {
      await this.repairWakeup.start();
      this.loops.push(
        this.loop(
          'repairs',
          () => this.repairRound(repairs),
          (ms) => this.repairWakeup.wait(ms, this.stopping.signal),
        ),
      );
    }
  }

  /** Stops taking work and waits for the rounds in progress (their entries are acknowledged or stay pending). */
  async stop(): Promise<void> {
    this.running = false;
    this.stopping.abort();
    this.repairWakeup.stop();
    await Promise.allSettled(this.loops);
    for (const reader of this.readers) reader.disconnect();
    await this.compare.close();
    await this.repairs?.close();
  }

  private async loop(
    name: string,
    round: () => Promise<number>,
    pause: (ms: number) => Promise<void> = (ms) => sleep(ms, this.stopping.signal),
  ): Promise<void> {
    while (this.running) {
      try {
        const waitMs = await round();
        if (waitMs > 0 && this.running) await pause(waitMs);
      } catch (error) {
        this.log(`analyzer ${name}: ${(error as Error).message}`);
        if (this.running) await sleep(IDLE_RETRY_MS, this.stopping.signal);
      }
    }
  }

  private async handle(delivery: Delivery): Promise<void> {
    if (delivery.ids.length === 0) return;
    await this.deps.clock.sync();
    try {
      await analyseJobs(this.live, delivery.jobs);
    } catch (error) {
      if (!isClickHouseOverload(error) || new Set(delivery.jobs.map((job) => job.connectionId)).size < 2) throw error;
      return this.handleByConnection(delivery);
    }
    await this.stream.ack(
      delivery.ids,
      delivery.jobs.map((job) => job.batchId),
    );
    this.metrics.jobs.inc({ outcome: 'analysed' }, delivery.jobs.length);
    if (delivery.ids.length > delivery.jobs.length)
      this.metrics.jobs.inc({ outcome: 'malformed' }, delivery.ids.length - delivery.jobs.length);
  }

  /**
   * A round's read went past ClickHouse's limits: its connections are analysed one by one, so a
   * tenant whose read keeps failing leaves only its own entries pending (claimed and tried again
   * after claimIdleMs, nothing lost) and every other tenant's jobs commit.
   */
  private async handleByConnection(delivery: Delivery): Promise<void> {
    const jobIds = new Set(delivery.jobs.map((job) => job.id));
    const malformed = delivery.ids.filter((id) => !jobIds.has(id));
    if (malformed.length > 0) {
      await this.stream.ack(malformed);
      this.metrics.jobs.inc({ outcome: 'malformed' }, malformed.length);
    }
    const byConnection = new Map<string, AnalysisJobEntry[]>();
    for (const job of delivery.jobs) byConnection.set(job.connectionId, [...(byConnection.get(job.connectionId) ?? []), job]);
    for (const [connectionId, jobs] of byConnection) {
      try {
        await analyseJobs(this.live, jobs);
      } catch (error) {
        if (!isClickHouseOverload(error)) throw error;
        this.log(`analyzer: ${jobs.length} jobs of connection ${connectionId} left pending: ${(error as Error).message}`);
        this.metrics.jobs.inc({ outcome: 'read_refused' }, jobs.length);
        continue;
      }
      await this.stream.ack(
        jobs.map((job) => job.id),
        jobs.map((job) => job.batchId),
      );
      this.metrics.jobs.inc({ outcome: 'analysed' }, jobs.length);
    }
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

  /**
   * A reanalysis whose read goes past ClickHouse's limits stays pending and is deferred by this
   * process for REANALYSIS_DEFER_MS, so the jobs behind it in the outbox (other tenants') run.
   */
  private async reanalysisRound(): Promise<number> {
    await this.deps.clock.sync();
    const nowMs = Date.now();
    for (const [id, untilMs] of this.deferredReanalyses) if (untilMs <= nowMs) this.deferredReanalyses.delete(id);
    try {
      const ran = await runNextReanalysis(this.live, [...this.deferredReanalyses.keys()]);
      return ran ? 0 : this.deps.config.reanalysisPollMs;
    } catch (error) {
      if (!(error instanceof ReanalysisReadRefused)) throw error;
      this.deferredReanalyses.set(error.jobId, nowMs + REANALYSIS_DEFER_MS);
      this.metrics.reanalyses.inc({ outcome: 'deferred' });
      this.log(`analyzer reanalysis: deferred: ${error.message}`);
      return 0;
    }
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

  /**
   * Generates and validates one repair proposal (analyzer/repairJobs.ts) on the repair thread.
   * A worker that throws leaves the proposal to be claimed again when its lease ends.
   */
  private async repairRound(repairs: RepairPool): Promise<number> {
    await this.deps.clock.sync();
    const { config } = this.deps;
    const claimed = await claimRepair(this.deps.pool, this.deps.clock.now(), config.repairLeaseMs);
    if (claimed === null) return config.repairPollMs;
    if (claimed === 'exhausted') {
      this.metrics.repairs.inc({ outcome: 'exhausted' });
      return 0;
    }
    if (config.holdRepairs) {
      this.log(`analyzer repairs: holding ${claimed.id} (ANALYZER_TEST_HOLD_REPAIRS)`);
      await new Promise<void>((resolve) => this.stopping.signal.addEventListener('abort', () => resolve(), { once: true }));
      return 0;
    }
    const result = await repairs.run(await loadRepairTask(this.deps.pool, claimed));
    await this.deps.clock.sync();
    this.metrics.repairs.inc({ outcome: await recordRepairResult(this.deps.pool, claimed, result, this.deps.clock.now()) });
    return 0;
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
