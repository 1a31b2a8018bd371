import { describe, expect, it } from 'vitest';
import { encodeJobGroups, groupsOfJobs, parseJobGroups, type GroupedJob, type JobGroup } from '../shared/analysis/jobGroups.js';
import { EVIDENCE_LIMIT, type ObservationGroup } from '../shared/analysis/observationGroups.js';
import { seededRandom } from './helpers/seededRandom.js';

// The analyzer reads every job's groups (shared/analysis/jobGroups.ts) by scanning their text and
// merges them by connection and key without building key texts. These property tests hold both to
// the grammar and the merge written the plainest way (split on spaces, regular expressions, a Map
// keyed by the whole key's text): the same answer for every generated text and every mutation of
// one, and the same groups, in the same order, for generated deliveries.

const HEX_SHA256 = /^[0-9a-f]{64}$/;
const STATUS = /^\d{1,3}$/;
const INDEX = /^(0|[1-9]\d{0,5})$/;

function plainParse(text: string | undefined, eventCount: number): JobGroup[] | undefined {
  if (text === undefined || text === '') return undefined;
  const fields = text.split(' ');
  if (fields.length % 7 !== 0) return undefined;
  const seen = new Set<number>();
  const groups: JobGroup[] = [];
  for (let at = 0; at < fields.length; at += 7) {
    const [method, routeTemplate, payloadLocation, status, inspected, shapeHash, itemList] = fields.slice(at, at + 7);
    if (!method || !routeTemplate || !payloadLocation || !STATUS.test(status) || (inspected !== '0' && inspected !== '1')) return undefined;
    if (!HEX_SHA256.test(shapeHash)) return undefined;
    const items: number[] = [];
    for (const entry of itemList.split(',')) {
      if (!INDEX.test(entry) || Number(entry) >= eventCount || seen.has(Number(entry))) return undefined;
      seen.add(Number(entry));
      items.push(Number(entry));
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
  return seen.size === eventCount ? groups : undefined;
}

function plainGroups(jobs: readonly GroupedJob[]): ObservationGroup[] {
  const byKey = new Map<string, { group: ObservationGroup; ids: Set<string> }>();
  for (const job of jobs) {
    for (const carried of job.groups ?? []) {
      if (carried.items.length === 0) continue;
      const { method, routeTemplate, payloadLocation, statusCode, schemaInspected, shapeHash } = carried;
      const key = [job.connectionId, method, routeTemplate, payloadLocation, statusCode, schemaInspected, shapeHash].join('\n');
      let building = byKey.get(key);
      if (building === undefined) {
        const group: ObservationGroup = {
          connectionId: job.connectionId,
          ...{ method, routeTemplate, payloadLocation, statusCode, schemaInspected, shapeHash },
          shape: null,
          count: 0,
          firstReceivedAtMs: job.receivedAtMs,
          lastReceivedAtMs: job.receivedAtMs,
          eventIds: [],
        };
        building = { group, ids: new Set() };
        byKey.set(key, building);
      }
      building.group.firstReceivedAtMs = Math.min(building.group.firstReceivedAtMs, job.receivedAtMs);
      building.group.lastReceivedAtMs = Math.max(building.group.lastReceivedAtMs, job.receivedAtMs);
      for (const item of carried.items) building.ids.add(job.eventIds[item]);
    }
  }
  return [...byKey.values()].map(({ group, ids }) => ({ ...group, count: ids.size, eventIds: [...ids].slice(0, EVIDENCE_LIMIT).sort() }));
}

const random = seededRandom(32);
const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)];
const hex = (length: number) => Array.from({ length }, () => pick('0123456789abcdef'.split(''))).join('');
/** Few distinct hashes, and two that share their first characters, so groups meet and collide. */
const HASHES = [hex(64), hex(64), hex(64), `${'a'.repeat(16)}${hex(48)}`, `${'a'.repeat(16)}${hex(48)}`];

function randomGroups(eventCount: number): JobGroup[] {
  const order = Array.from({ length: eventCount }, (_, i) => i).sort(() => random() - 0.5);
  const groups: JobGroup[] = [];
  while (order.length > 0) {
    groups.push({
      method: pick(['GET', 'POST']),
      routeTemplate: pick(['/v1/orders', '/v1/orders/{orderId}']),
      payloadLocation: pick(['request', 'response']),
      statusCode: pick([0, 200, 404]),
      schemaInspected: random() < 0.8,
      shapeHash: pick(HASHES),
      items: order.splice(0, 1 + Math.floor(random() * 4)).sort((x, y) => x - y),
    });
  }
  return groups;
}

const MUTATIONS = [' ', '  ', ',', ',,', '0', '00', '7', '9', 'a', 'f', 'g', 'F', '-', 'é', ''];

function mutate(text: string): string {
  const at = Math.floor(random() * (text.length + 1));
  const removed = random() < 0.5 ? 1 + Math.floor(random() * 3) : 0;
  return text.slice(0, at) + pick(MUTATIONS) + text.slice(at + removed);
}

describe('reading the groups a job carries', () => {
  it('parses every generated text and 20,000 mutations of them as the grammar says', () => {
    let usable = 0;
    for (let round = 0; round < 2_000; round++) {
      const eventCount = 1 + Math.floor(random() * 12);
      const text = encodeJobGroups(randomGroups(eventCount));
      expect(parseJobGroups(text, eventCount)).toEqual(plainParse(text, eventCount));
      for (let m = 0; m < 10; m++) {
        const mutated = m < 5 ? mutate(text) : mutate(mutate(text));
        const parsed = parseJobGroups(mutated, eventCount);
        expect(parsed, mutated).toEqual(plainParse(mutated, eventCount));
        if (parsed !== undefined) usable++;
      }
    }
    // The mutations reach both verdicts, not only refusals.
    expect(usable).toBeGreaterThan(1_000);
    for (const edge of [undefined, '', ' ', 'GET']) expect(parseJobGroups(edge, 1)).toBeUndefined();
  });

  it('merges generated deliveries as a Map of whole keys does, evidence capped past the limit', () => {
    for (let round = 0; round < 300; round++) {
      const jobs: GroupedJob[] = [];
      const ids: string[] = [];
      for (let j = 0; j < 1 + Math.floor(random() * 8); j++) {
        const eventCount = 1 + Math.floor(random() * 10);
        // Some eventIds come again (a re-sent item): counted once.
        const eventIds = Array.from({ length: eventCount }, () =>
          ids.length > 0 && random() < 0.2 ? pick(ids) : `evt_${round}_${ids.push(hex(6)) && ids.at(-1)}`,
        );
        jobs.push({
          connectionId: pick(['con_a', 'con_b']),
          batchId: `bat_${round}_${j}`,
          receivedAtMs: 1_732_000_000_000 + Math.floor(random() * 1_000),
          eventIds,
          groups: random() < 0.1 ? undefined : randomGroups(eventCount),
        });
      }
      expect(groupsOfJobs(jobs)).toEqual(plainGroups(jobs));
    }
    // One group past the evidence limit: the first EVIDENCE_LIMIT distinct ids listed, sorted.
    const many = Array.from({ length: EVIDENCE_LIMIT + 50 }, (_, i) => `evt_${String(EVIDENCE_LIMIT + 50 - i).padStart(5, '0')}`);
    const group = { ...randomGroups(1)[0], items: many.map((_, i) => i) };
    const big: GroupedJob[] = [
      { connectionId: 'con_a', batchId: 'bat_1', receivedAtMs: 1, eventIds: many, groups: [group] },
      {
        connectionId: 'con_a',
        batchId: 'bat_2',
        receivedAtMs: 2,
        eventIds: many.slice(0, 10),
        groups: [{ ...group, items: [...Array(10).keys()] }],
      },
    ];
    const [merged] = groupsOfJobs(big);
    expect(merged).toEqual(plainGroups(big)[0]);
    expect([merged.count, merged.eventIds.length, merged.eventIds[0]]).toEqual([EVIDENCE_LIMIT + 50, EVIDENCE_LIMIT, 'evt_00051']);
  });
});
