import type { Redis } from 'ioredis';
import { RedisKeys, type AnalysisJob } from '../shared/redis.js';
import { parseJobGroups, type JobGroup } from '../shared/analysis/jobGroups.js';

/** An analysis job as the ingest edge writes it, with its stream entry id and its groups parsed. */
export interface AnalysisJobEntry extends Omit<AnalysisJob, 'groups'> {
  id: string;
  /** Absent for jobs of older edges (and groups that do not fit the eventIds): their rows are read back. */
  groups?: JobGroup[];
}

type RawEntry = [id: string, fields: string[] | null];

/** A stream entry as a job; null when it is not one (deleted under a pending reference, or malformed). */
function toJob([id, fields]: RawEntry): AnalysisJobEntry | null {
  if (fields === null) return null;
  const values = new Map<string, string>();
  for (let i = 0; i + 1 < fields.length; i += 2) values.set(fields[i], fields[i + 1]);
  const receivedAtMs = Number(values.get('receivedAtMs'));
  const connectionId = values.get('connectionId');
  const batchId = values.get('batchId');
  if (!connectionId || !batchId || !Number.isSafeInteger(receivedAtMs)) return null;
  const eventIds = (values.get('eventIds') ?? '').split(',').filter(Boolean);
  const job: AnalysisJobEntry = {
    id,
    connectionId,
    batchId,
    receivedAtMs,
    workspaceId: values.get('workspaceId') ?? '',
    mode: values.get('mode') ?? '',
    eventIds,
  };
  // Entries of older edges have no groups (nor one that does not fit its eventIds): their rows are read back.
  const groups = parseJobGroups(values.get('groups'), eventIds.length);
  if (groups !== undefined) job.groups = groups;
  return job;
}

export interface Delivery {
  /** Every entry id delivered, to acknowledge once handled (malformed ones included). */
  ids: string[];
  jobs: AnalysisJobEntry[];
}

function delivery(entries: RawEntry[]): Delivery {
  const jobs: AnalysisJobEntry[] = [];
  for (const entry of entries) {
    const job = toJob(entry);
    if (job !== null) jobs.push(job);
  }
  return { ids: entries.map(([id]) => id), jobs };
}

/**
 * The analyzer's side of the `analysis:jobs` stream (consumer group `analyzers`). Blocking reads
 * use connections of their own, so the shared client's commands never queue behind them.
 * Entries are acknowledged only after their results are committed, and deleted as they are
 * acknowledged, so the stream holds only work not yet done.
 */
export class JobStream {
  private claimCursor = '0-0';

  constructor(
    private readonly redis: Redis,
    private readonly stream: string,
    private readonly group: string,
    readonly consumer: string,
  ) {}

  /** Creates the group (and the stream) when missing; the edge does the same at its start. */
  async ensureGroup(): Promise<void> {
    await this.redis.xgroup('CREATE', this.stream, this.group, '0', 'MKSTREAM').catch((error: Error) => {
      if (!String(error.message).includes('BUSYGROUP')) throw error;
    });
  }

  /** New entries for this consumer, waiting up to blockMs for the first, on `reader` (a connection that nothing else waits on). */
  async read(reader: Redis, count: number, blockMs: number): Promise<Delivery> {
    const reply = (await reader.xreadgroup(
      'GROUP',
      this.group,
      this.consumer,
      'COUNT',
      count,
      'BLOCK',
      blockMs,
      'STREAMS',
      this.stream,
      '>',
    )) as [string, RawEntry[]][] | null;
    return delivery(reply?.[0]?.[1] ?? []);
  }

  /**
   * Entries another consumer took and has not acknowledged for minIdleMs (it died or hangs):
   * XAUTOCLAIM moves them to this consumer. Walks the pending list a page per call.
   */
  async claim(minIdleMs: number, count: number): Promise<Delivery> {
    const [next, entries, deleted] = (await this.redis.xautoclaim(
      this.stream,
      this.group,
      this.consumer,
      minIdleMs,
      this.claimCursor,
      'COUNT',
      count,
    )) as [string, RawEntry[], string[]?];
    this.claimCursor = next;
    // Entries trimmed while pending come back as deleted ids (Redis 7): acknowledge them away.
    if (deleted && deleted.length > 0) await this.ack(deleted);
    return delivery(entries);
  }

  /**
   * Acknowledges and deletes handled entries (the stream keeps only unfinished work), after
   * taking their analysed batches out of `RedisKeys.unanalysedBatches` (stream time). In that
   * order: a crash in between redelivers entries whose analysis is already committed (a no-op),
   * never leaves an analysed batch holding stream time back. The set is another key than the
   * stream (another slot of a Redis Cluster), hence not in the same MULTI.
   */
  async ack(ids: readonly string[], batchIds: readonly string[] = []): Promise<void> {
    if (ids.length === 0) return;
    if (batchIds.length > 0) await this.redis.zrem(RedisKeys.unanalysedBatches, ...batchIds);
    await this.redis
      .multi()
      .xack(this.stream, this.group, ...ids)
      .xdel(this.stream, ...ids)
      .exec();
  }

  /** Entries delivered and not yet acknowledged, and entries not yet delivered (lag). */
  async backlog(): Promise<{ pending: number; lag: number | null }> {
    const groups = (await this.redis.xinfo('GROUPS', this.stream)) as (string | number | null)[][];
    for (const fields of groups) {
      const info = new Map<string, string | number | null>();
      for (let i = 0; i + 1 < fields.length; i += 2) info.set(String(fields[i]), fields[i + 1]);
      if (info.get('name') === this.group) {
        const lag = info.get('lag');
        return { pending: Number(info.get('pending') ?? 0), lag: lag === null || lag === undefined ? null : Number(lag) };
      }
    }
    return { pending: 0, lag: null };
  }
}
