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
 * shape's hash costs anything, and it is memoised per distinct shape (ingest/check/shapeHash.ts).
 *
 * Jobs written by older edges (a log record or stream entry without groups) are analysed as
 * before, through groupsOfBatches (analyzer/liveAnalysis.ts).
 */

/** One group of a job: its key (an ObservationGroup's), and which of the job's eventIds it holds. */
export interface JobGroup
  extends Pick<ObservationGroup, 'method' | 'routeTemplate' | 'payloadLocation' | 'statusCode' | 'schemaInspected' | 'shapeHash'> {
  /** Indexes into the job's `eventIds`, ascending. */
  items: number[];
}

/**
 * The groups as the job carries them (the log record head's `groups`, the stream entry's
 * `groups` field): text, seven space-separated fields a group, groups one after the other:
 *
 *   `<method> <routeTemplate> <payloadLocation> <statusCode> <0|1 inspected> <shape hash> <i,j,…>`
 *
 * No member holds a space (method and payload location are enums, a route template is printable
 * ASCII without spaces, 03 envelope table). The items are **indexes** into the job's `eventIds`,
 * not the ids again (a few bytes an item where an id is ~30). Text, not JSON objects: the edge
 * writes it into the log record and the stream as one string, built by concatenation, with no
 * object to serialise or parse on its event loop (a batch can hold as many groups as items).
 */
export type EncodedJobGroups = string;

/** A group's key as it starts its text (checkBatch.ts builds it once per item; it also keys the batch's groups). */
export const jobGroupKey = (g: Omit<JobGroup, 'items'>): string =>
  `${g.method} ${g.routeTemplate} ${g.payloadLocation} ${g.statusCode} ${g.schemaInspected ? 1 : 0} ${g.shapeHash}`;

/** The text of groups (see EncodedJobGroups). */
export const encodeJobGroups = (groups: readonly JobGroup[]): EncodedJobGroups =>
  groups.map((group) => `${jobGroupKey(group)} ${group.items.join(',')}`).join(' ');

const FIELDS = 7;
const HEX_SHA256 = /^[0-9a-f]{64}$/;
const STATUS = /^\d{1,3}$/;
const INDEX = /^(0|[1-9]\d{0,5})$/;

/**
 * A job's groups from their text. Undefined when absent or not exactly a partition of the job's
 * `eventCount` items: the job is then analysed from ClickHouse's rows, as one of an older edge.
 */
export function parseJobGroups(text: string | undefined, eventCount: number): JobGroup[] | undefined {
  if (text === undefined || text === '') return undefined;
  const fields = text.split(' ');
  if (fields.length % FIELDS !== 0) return undefined;
  const seen = new Uint8Array(eventCount);
  let covered = 0;
  const groups: JobGroup[] = [];
  for (let at = 0; at < fields.length; at += FIELDS) {
    const [method, routeTemplate, payloadLocation, status, inspected, shapeHash, itemList] = fields.slice(at, at + FIELDS);
    if (!method || !routeTemplate || !payloadLocation || !STATUS.test(status) || (inspected !== '0' && inspected !== '1')) return undefined;
    if (!HEX_SHA256.test(shapeHash)) return undefined;
    const items: number[] = [];
    for (const entry of itemList.split(',')) {
      if (!INDEX.test(entry)) return undefined;
      const item = Number(entry);
      if (item >= eventCount || seen[item] === 1) return undefined;
      seen[item] = 1;
      covered += 1;
      items.push(item);
    }
    groups.push({
      method,
      routeTemplate,
      payloadLocation,
      statusCode: Number(status),
      schemaInspected: inspected === '1',
      shapeHash,
      items,
    });
  }
  return covered === eventCount ? groups : undefined;
}

/** A job as far as building its groups goes (its groups parsed: AnalysisJobEntry). */
export interface GroupedJob extends BatchRef {
  eventIds: readonly string[];
  groups?: readonly JobGroup[];
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
