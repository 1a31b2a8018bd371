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

const SPACE = 0x20;
const COMMA = 0x2c;
const ZERO = 0x30;
const NINE = 0x39;
const HEX_LENGTH = 64;
/** An item index has at most six digits (`0`, or no leading zero). */
const INDEX_DIGITS = 6;

const isDigit = (code: number) => code >= ZERO && code <= NINE;
const isLowerHex = (code: number) => isDigit(code) || (code >= 0x61 && code <= 0x66);

/**
 * A job's groups from their text. Undefined when absent or not exactly a partition of the job's
 * `eventCount` items: the job is then analysed from ClickHouse's rows, as one of an older edge.
 *
 * Read by scanning the text in place, not by splitting it: a batch carries up to one group per
 * item, and splitting made seven strings and an array per group, whose allocation and collection
 * were a large part of the analyzer's time per envelope. Accepts exactly what the grammar above
 * allows: seven non-empty fields a group, a status of one to three digits, `0` or `1`, a lowercase
 * hex SHA-256, and comma-separated indexes below `eventCount`, each item once.
 */
export function parseJobGroups(text: string | undefined, eventCount: number): JobGroup[] | undefined {
  if (text === undefined || text === '') return undefined;
  const seen = new Uint8Array(eventCount);
  let covered = 0;
  const groups: JobGroup[] = [];
  let at = 0;
  while (at < text.length) {
    const methodEnd = text.indexOf(' ', at);
    const routeEnd = methodEnd > at ? text.indexOf(' ', methodEnd + 1) : -1;
    const locationEnd = routeEnd > methodEnd + 1 ? text.indexOf(' ', routeEnd + 1) : -1;
    const statusEnd = locationEnd > routeEnd + 1 ? text.indexOf(' ', locationEnd + 1) : -1;
    if (statusEnd === -1 || statusEnd - locationEnd - 1 < 1 || statusEnd - locationEnd - 1 > 3) return undefined;
    let statusCode = 0;
    for (let i = locationEnd + 1; i < statusEnd; i++) {
      const code = text.charCodeAt(i);
      if (!isDigit(code)) return undefined;
      statusCode = statusCode * 10 + code - ZERO;
    }
    const inspected = text.charCodeAt(statusEnd + 1);
    if ((inspected !== ZERO && inspected !== ZERO + 1) || text.charCodeAt(statusEnd + 2) !== SPACE) return undefined;
    const hashStart = statusEnd + 3;
    const hashEnd = hashStart + HEX_LENGTH;
    if (text.charCodeAt(hashEnd) !== SPACE) return undefined;
    for (let i = hashStart; i < hashEnd; i++) if (!isLowerHex(text.charCodeAt(i))) return undefined;
    const nextGroup = text.indexOf(' ', hashEnd + 1);
    const itemsEnd = nextGroup === -1 ? text.length : nextGroup;
    const items: number[] = [];
    let start = hashEnd + 1;
    for (let i = start; i <= itemsEnd; i++) {
      if (i < itemsEnd && text.charCodeAt(i) !== COMMA) continue;
      const digits = i - start;
      if (digits < 1 || digits > INDEX_DIGITS || (digits > 1 && text.charCodeAt(start) === ZERO)) return undefined;
      let item = 0;
      for (let j = start; j < i; j++) {
        const code = text.charCodeAt(j);
        if (!isDigit(code)) return undefined;
        item = item * 10 + code - ZERO;
      }
      if (item >= eventCount || seen[item] === 1) return undefined;
      seen[item] = 1;
      covered += 1;
      items.push(item);
      start = i + 1;
    }
    groups.push({
      method: text.slice(at, methodEnd),
      routeTemplate: text.slice(methodEnd + 1, routeEnd),
      payloadLocation: text.slice(routeEnd + 1, locationEnd),
      statusCode,
      schemaInspected: inspected === ZERO + 1,
      shapeHash: text.slice(hashStart, hashEnd),
      items,
    });
    // A space after the items starts another group; one that ends the text leaves a field empty.
    if (itemsEnd === text.length - 1) return undefined;
    at = itemsEnd + 1;
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
  /** The eventIds of its items, in the order the jobs list them (repeats possible across jobs). */
  ids: string[];
}

/**
 * The first 28 bits of a hex SHA-256, as a small integer: a Map hashes that at once, where it
 * reads a string key whole. Two shapes that share it are told apart by sameKey.
 */
function hashPrefix(shapeHash: string): number {
  let prefix = 0;
  for (let i = 0; i < 7; i++) {
    const code = shapeHash.charCodeAt(i);
    prefix = prefix * 16 + (code <= NINE ? code - ZERO : code - 0x57);
  }
  return prefix;
}

const sameKey = (group: ObservationGroup, carried: JobGroup) =>
  group.shapeHash === carried.shapeHash
  && group.method === carried.method
  && group.routeTemplate === carried.routeTemplate
  && group.payloadLocation === carried.payloadLocation
  && group.statusCode === carried.statusCode
  && group.schemaInspected === carried.schemaInspected;

/**
 * The group's count (distinct ids) and evidence: up to EVIDENCE_LIMIT distinct ids, the first
 * ones listed, sorted. Sorting all and dropping repeats gives that whenever they fit; a Set in
 * list order only when there are more.
 */
function countAndEvidence(ids: string[]): { count: number; evidence: string[] } {
  if (ids.length > EVIDENCE_LIMIT) {
    const distinct = new Set(ids);
    return { count: distinct.size, evidence: [...distinct].slice(0, EVIDENCE_LIMIT).sort() };
  }
  const sorted = ids.sort();
  let distinct = 0;
  for (const id of sorted) if (distinct === 0 || id !== sorted[distinct - 1]) sorted[distinct++] = id;
  sorted.length = distinct;
  return { count: distinct, evidence: sorted };
}

/**
 * The ObservationGroups of jobs that carry groups, as groupsOfBatches would read them from
 * ClickHouse for the same batches: groups of one connection and key merged across the jobs,
 * count = distinct eventIds, first/last = the earliest and latest receipt of the batches in it,
 * up to EVIDENCE_LIMIT distinct eventIds, sorted; no shape text (loadShapes fetches those the
 * comparison memo lacks). Jobs without groups are left out (the caller reads theirs).
 *
 * Groups are found by connection, then the first bits of the shape hash, then the whole key
 * compared field by field: a Map keyed by the key's text made that text and hashed all of it for
 * every group of every job (one per item in a batch of distinct shapes).
 */
export function groupsOfJobs(jobs: readonly GroupedJob[]): ObservationGroup[] {
  const byConnection = new Map<string, Map<number, Building[]>>();
  const built: Building[] = [];
  for (const job of jobs) {
    if (job.groups === undefined) continue;
    let byShape = byConnection.get(job.connectionId);
    if (byShape === undefined) {
      byShape = new Map();
      byConnection.set(job.connectionId, byShape);
    }
    for (const carried of job.groups) {
      if (carried.items.length === 0) continue;
      const shapeKey = hashPrefix(carried.shapeHash);
      let candidates = byShape.get(shapeKey);
      if (candidates === undefined) {
        candidates = [];
        byShape.set(shapeKey, candidates);
      }
      let building: Building | undefined;
      for (const candidate of candidates) {
        if (!sameKey(candidate.group, carried)) continue;
        building = candidate;
        break;
      }
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
          ids: [],
        };
        candidates.push(building);
        built.push(building);
      }
      const { group, ids } = building;
      group.firstReceivedAtMs = Math.min(group.firstReceivedAtMs, job.receivedAtMs);
      group.lastReceivedAtMs = Math.max(group.lastReceivedAtMs, job.receivedAtMs);
      for (const item of carried.items) ids.push(job.eventIds[item]);
    }
  }
  return built.map(({ group, ids }) => {
    const { count, evidence } = countAndEvidence(ids);
    group.count = count;
    group.eventIds = evidence;
    return group;
  });
}
