import { EVIDENCE_LIMIT, type BatchRef, type ObservationGroup } from './observationGroups.js';

/**
 * The groups of an analysis job: the edge groups a batch's new items by what analysis depends on
 * (the key of observationGroups.ts) when it checks them, and the job carries those groups, so that
 * live analysis need not read the batch's rows back from ClickHouse to group them.
 *
 * Why: that read-back (groupsOfBatches) was ClickHouse's largest cost under load. Profiled on the
 * ingest-cpu bench (issue 32): 70 queries read 7.2 M rows for 504 K envelopes, 6.4 s of ClickHouse
 * CPU, ~12.7 µs per envelope, against ~5.3 µs for the inserts themselves (target: ≤ 12 µs in
 * total). The edge has every member of the key in hand when it serialises the row; only the
 * shape's hash costs anything, and it is memoised per distinct shape (ingest/check/checkBatch.ts).
 *
 * Jobs written by older edges (a log record or stream entry without groups) are analysed as
 * before, through groupsOfBatches (analyzer/liveAnalysis.ts).
 */

/** One group of a job: its key, and which of the job's eventIds it holds. */
export interface JobGroup {
  method: string;
  routeTemplate: string;
  payloadLocation: string;
  statusCode: number;
  schemaInspected: boolean;
  /** Lowercase hex SHA-256 of the stored schemaShape text: ClickHouse's `lower(hex(shape_hash))`. */
  shapeHash: string;
  /**
   * Indexes into the job's `eventIds` (ascending), rather than the ids again: a few bytes an item
   * instead of the id's ~30, in the log record and the stream entry alike.
   */
  items: number[];
}

/** A job as far as building its groups goes. */
export interface GroupedJob extends BatchRef {
  eventIds: readonly string[];
  groups?: readonly JobGroup[];
}

/** The key members of a group, joined (a separator no member holds: they are validated tokens). */
export const jobGroupKey = (g: Omit<JobGroup, 'items'>): string =>
  `${g.method}\n${g.routeTemplate}\n${g.payloadLocation}\n${g.statusCode}\n${g.schemaInspected ? 1 : 0}\n${g.shapeHash}`;

const HEX_SHA256 = /^[0-9a-f]{64}$/;

/**
 * A job's groups from their JSON text (a stream entry's `groups` field, JSON.stringify of
 * JobGroup[]). Undefined when absent or not exactly a partition of the job's `eventCount` items:
 * the job is then analysed from ClickHouse's rows, as one of an older edge.
 */
export function parseJobGroups(text: string | undefined, eventCount: number): JobGroup[] | undefined {
  if (text === undefined) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!Array.isArray(value)) return undefined;
  const seen = new Uint8Array(eventCount);
  let covered = 0;
  const groups: JobGroup[] = [];
  for (const entry of value as Partial<Record<keyof JobGroup, unknown>>[]) {
    if (typeof entry !== 'object' || entry === null) return undefined;
    const { method, routeTemplate, payloadLocation, statusCode, schemaInspected, shapeHash, items } = entry;
    if (
      typeof method !== 'string'
      || typeof routeTemplate !== 'string'
      || typeof payloadLocation !== 'string'
      || typeof statusCode !== 'number'
      || !Number.isInteger(statusCode)
      || typeof schemaInspected !== 'boolean'
      || typeof shapeHash !== 'string'
      || !HEX_SHA256.test(shapeHash)
      || !Array.isArray(items)
    )
      return undefined;
    for (const item of items as unknown[]) {
      if (typeof item !== 'number' || !Number.isInteger(item) || item < 0 || item >= eventCount || seen[item] === 1) return undefined;
      seen[item] = 1;
      covered += 1;
    }
    groups.push({ method, routeTemplate, payloadLocation, statusCode, schemaInspected, shapeHash, items: items as number[] });
  }
  return covered === eventCount ? groups : undefined;
}

interface Building {
  group: ObservationGroup;
  ids: Set<string>;
}

/**
 * The ObservationGroups of jobs that carry groups, as groupsOfBatches would read them from
 * ClickHouse for the same batches: groups of one connection and key merged across the jobs,
 * count = distinct eventIds, first/last = the earliest and latest receipt of the batches in it,
 * up to EVIDENCE_LIMIT distinct eventIds, sorted; no shape text (loadShapes fetches those the
 * comparison memo lacks). Jobs without groups are left out (the caller reads theirs).
 */
export function groupsOfJobs(jobs: readonly GroupedJob[]): ObservationGroup[] {
  const byKey = new Map<string, Building>();
  for (const job of jobs) {
    if (job.groups === undefined) continue;
    for (const carried of job.groups) {
      if (carried.items.length === 0) continue;
      const key = `${job.connectionId}\n${jobGroupKey(carried)}`;
      let building = byKey.get(key);
      if (building === undefined) {
        building = {
          group: {
            connectionId: job.connectionId,
            method: carried.method,
            routeTemplate: carried.routeTemplate,
            payloadLocation: carried.payloadLocation,
            statusCode: carried.statusCode,
            schemaInspected: carried.schemaInspected,
            shapeHash: carried.shapeHash,
            shape: null,
            count: 0,
            firstReceivedAtMs: job.receivedAtMs,
            lastReceivedAtMs: job.receivedAtMs,
            eventIds: [],
          },
          ids: new Set(),
        };
        byKey.set(key, building);
      }
      const { group, ids } = building;
      group.firstReceivedAtMs = Math.min(group.firstReceivedAtMs, job.receivedAtMs);
      group.lastReceivedAtMs = Math.max(group.lastReceivedAtMs, job.receivedAtMs);
      for (const item of carried.items) ids.add(job.eventIds[item]);
    }
  }
  const groups: ObservationGroup[] = [];
  for (const { group, ids } of byKey.values()) {
    group.count = ids.size;
    const evidence: string[] = [];
    for (const id of ids) {
      if (evidence.length === EVIDENCE_LIMIT) break;
      evidence.push(id);
    }
    group.eventIds = evidence.sort();
    groups.push(group);
  }
  return groups;
}
