import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClickHouseClient } from '../shared/clickhouse/client.js';
import { sqlLiteral } from '../shared/clickhouse/escape.js';
import { ANALYSIS_CONSUMER_GROUP, analysisJobFields } from '../shared/redis.js';
import { encodeJobGroups, groupsOfJobs, parseJobGroups } from '../shared/analysis/jobGroups.js';
import { groupsOfBatches, type ObservationGroup } from '../shared/analysis/observationGroups.js';
import type { SchemaShape } from '../shared/envelope/types.js';
import { shapeText } from '../shared/envelope/shapeText.js';
import { shapeHash } from '../ingest/check/shapeHash.js';
import { decodeBatchRecord, encodeBatchRecord } from '../ingest/log/logRecord.js';
import type { AnalysisJob } from '../shared/redis.js';
import { WriteAheadLog } from '../ingest/log/writeAheadLog.js';
import { JobStream, type AnalysisJobEntry } from '../analyzer/jobStream.js';
import { bootstrapWorkspace, createTestContext, type TestContext } from './helpers/context.js';
import {
  ManualClock,
  createCollector,
  envelope,
  sendEnvelopes,
  startEdge,
  testClickHouse,
  type Collector,
  type Edge,
  type EdgeAddress,
} from './helpers/ingest.js';
import { startAnalyzer, streamDrained } from './helpers/analyzer.js';
import { newLogDir, removeLogDir } from './helpers/logDirs.js';
import { freePort } from './helpers/ports.js';
import { spawnWalEdge } from './helpers/walEdge.js';
import type { EdgeProcess } from './helpers/collector.js';
import { waitFor } from './helpers/wait.js';

// Analysis jobs carry their batch's groups (shared/analysis/jobGroups.ts), so live analysis does
// not read the batch's rows back from ClickHouse. These tests hold the groups built from the jobs
// to what ClickHouse groups from the stored rows (groupsOfBatches), and check that jobs without
// groups (older edges' log records and stream entries) are still analysed, from ClickHouse.

let ctx: TestContext;
let clickhouse: ClickHouseClient;
let edge: Edge;
let collector: Collector;
const stream = `analysis:test:${randomBytes(4).toString('hex')}`;
const walDirs: string[] = [];
/** The jobs the first test read (a stream read does not give them again): the fallback test re-sends them. */
let firstJobs: AnalysisJobEntry[] = [];
const processes: EdgeProcess[] = [];

beforeAll(async () => {
  ctx = await createTestContext();
  clickhouse = testClickHouse(ctx);
  // No analyzer reads this stream until a test starts one: the jobs stay there to be read.
  edge = await startEdge(ctx, clickhouse, { analysisStream: stream });
  const boot = await bootstrapWorkspace(ctx);
  collector = await createCollector(ctx, boot.apiKey.key);
});
afterAll(async () => {
  for (const process of processes) await process.kill('SIGKILL');
  await edge?.close();
  for (const dir of walDirs) removeLogDir(dir);
  await clickhouse?.close();
  await ctx?.close();
});

const PLAIN: SchemaShape = { kind: 'object', fields: { id: { kind: 'string' }, total: { kind: 'number' } } };
/** Field names that JSON or TabSeparated escape, and non-ASCII ones (several UTF-8 bytes each). */
const AWKWARD: SchemaShape = {
  kind: 'object',
  fields: {
    'naïve größe': { kind: 'string' },
    日本語: { kind: 'array', items: { kind: 'object', fields: { 'emoji 🚀': { kind: 'integer' } } } },
    'back\\slash': { kind: 'number' },
    'say "hi"': { kind: 'boolean' },
    'tab\tand\nnewline': { kind: 'null' },
  },
};

function item(shape: SchemaShape, overrides: { statusCode?: number; inspected?: false; eventId?: string } = {}): Record<string, unknown> {
  const base = envelope(collector);
  const payload = { ...(base.payload as Record<string, unknown>), schemaShape: shape };
  const transport = { ...(base.transport as Record<string, unknown>) };
  if (overrides.statusCode !== undefined) transport.statusCode = overrides.statusCode;
  return {
    ...base,
    ...(overrides.eventId ? { eventId: overrides.eventId } : {}),
    // schemaInspected exists from envelope version 0.3.
    ...(overrides.inspected === false ? { envelopeVersion: '0.3', payload: { ...payload, schemaInspected: false } } : { payload }),
    transport,
  };
}

const idOf = (it: Record<string, unknown>) => it.eventId as string;

/** A log record as edges wrote it before text heads: `[u32 LE head length][head JSON][rows]`. */
function jsonHeadRecord(accountId: string, job: AnalysisJob, rows: Buffer): Buffer[] {
  const head = Buffer.from(JSON.stringify({ ...job, accountId }));
  const length = Buffer.alloc(4);
  length.writeUInt32LE(head.length, 0);
  return [length, head, rows];
}

/** The jobs in the fixture's stream not yet read, as the analyzer parses them. */
async function readJobs(from = stream): Promise<AnalysisJobEntry[]> {
  const reader = new JobStream(ctx.deps.redis, from, ANALYSIS_CONSUMER_GROUP, 'test-reader');
  const { jobs } = await reader.read(ctx.deps.redis, 1000, 100);
  return jobs;
}

const keyOf = (g: ObservationGroup) =>
  [g.connectionId, g.method, g.routeTemplate, g.payloadLocation, g.statusCode, g.schemaInspected, g.shapeHash].join('\n');
const sorted = (groups: ObservationGroup[]) => [...groups].sort((a, b) => (keyOf(a) < keyOf(b) ? -1 : 1));

async function send(edgeAddress: EdgeAddress, items: Record<string, unknown>[]): Promise<{ persisted: number }> {
  const answer = await sendEnvelopes(edgeAddress, collector, items);
  expect(answer.status).toBe(202);
  return { persisted: (answer.body as { persisted: number }).persisted };
}

describe('the groups an analysis job carries', () => {
  it('equal what ClickHouse groups from the stored rows of the same batches, duplicates and re-sent eventIds included', async () => {
    const first = [
      item(PLAIN),
      item(PLAIN),
      item(AWKWARD),
      item(PLAIN, { statusCode: 500 }),
      item(PLAIN, { inspected: false }),
      item(AWKWARD, { inspected: false }),
    ];
    expect(await send(edge, first)).toEqual({ persisted: 6 });
    // A later receipt time: the merged groups' first and last receipts differ.
    (edge.clock as ManualClock).advance(7);
    const repeated = item(PLAIN);
    const second = [
      item(PLAIN, { eventId: idOf(first[0]) }), // re-sent: a duplicate of the first batch's
      repeated,
      { ...repeated }, // the same eventId twice in one batch
      item(AWKWARD),
      item(PLAIN, { statusCode: 500 }),
    ];
    expect(await send(edge, second)).toEqual({ persisted: 3 });
    (edge.clock as ManualClock).advance(5);
    // Nothing new: no job at all.
    expect(await send(edge, [item(PLAIN, { eventId: idOf(first[1]) }), item(AWKWARD, { eventId: idOf(first[2]) })])).toEqual({
      persisted: 0,
    });
    expect(await edge.shipped()).toBe(true);

    const jobs = (await readJobs()).filter((job) => job.connectionId === collector.connectionId);
    expect(jobs).toHaveLength(2);
    firstJobs = jobs;
    for (const job of jobs) expect(job.groups, 'the job carries its groups').toBeDefined();
    expect(jobs[1].eventIds).toEqual([idOf(repeated), idOf(second[3]), idOf(second[4])]);

    // Per batch, and merged across the two.
    for (const job of jobs) expect(sorted(groupsOfJobs([job]))).toEqual(sorted(await groupsOfBatches(clickhouse, [job])));
    const merged = sorted(groupsOfJobs(jobs));
    expect(merged).toEqual(sorted(await groupsOfBatches(clickhouse, jobs)));
    // 2 PLAIN + 1 in the second batch; AWKWARD 1 + 1; PLAIN 500 1 + 1; two uninspected ones.
    expect(merged.map((g) => g.count).sort()).toEqual([1, 1, 2, 2, 3]);
    const plain = merged.find((g) => g.count === 3)!;
    expect([plain.firstReceivedAtMs, plain.lastReceivedAtMs]).toEqual([jobs[0].receivedAtMs, jobs[1].receivedAtMs]);
    expect(jobs[1].receivedAtMs).toBeGreaterThan(jobs[0].receivedAtMs);

    // Each item's hash is ClickHouse's SHA-256 of the stored text.
    const hashOfEvent = new Map<string, string>();
    for (const job of jobs)
      for (const group of job.groups!) for (const index of group.items) hashOfEvent.set(job.eventIds[index], group.shapeHash);
    const result = await clickhouse.query({
      query: `SELECT event_id, lower(hex(SHA256(schema_shape))) AS computed, lower(hex(shape_hash)) AS stored
              FROM observations WHERE connection_id = ${sqlLiteral(collector.connectionId)}`,
      format: 'JSONEachRow',
    });
    const rows = await result.json<{ event_id: string; computed: string; stored: string }>();
    expect(rows.length).toBeGreaterThanOrEqual(9);
    for (const row of rows) {
      expect(row.stored).toBe(row.computed);
      expect(hashOfEvent.get(row.event_id), row.event_id).toBe(row.computed);
    }
    expect(new Set(rows.map((row) => row.computed)).size).toBe(2);
  });

  it("hashes a shape's text as ClickHouse's lower(hex(SHA256(schema_shape)))", async () => {
    const shapeJson = (node: unknown) => shapeText(node) ?? '(refused)';
    const texts = [
      shapeJson(AWKWARD),
      shapeJson(PLAIN),
      shapeJson({ kind: 'object', fields: { 'quote " and \\ and é and \u0001': { kind: 'string' } } }),
      shapeJson({ kind: 'object', fields: { '\ud83d\ude80 \u00ff \u4e2d': { kind: 'array' } } }),
    ];
    // Equal length, differing at one character the memo's fingerprint does not sample: two hashes.
    const twin = (first: string) => shapeJson({ kind: 'object', fields: { [`x${first}${'x'.repeat(98)}`]: { kind: 'string' } } });
    texts.push(twin('q'), twin('r'));
    expect(texts[4].length).toBe(texts[5].length);
    expect(texts[0]).toContain('\\\\');
    const result = await clickhouse.query({
      query: `SELECT ${texts.map((text, i) => `lower(hex(SHA256(${sqlLiteral(text)}))) AS h${i}`).join(', ')}`,
      format: 'JSONEachRow',
    });
    const [row] = await result.json<Record<string, string>>();
    for (let i = 0; i < texts.length; i += 1) {
      expect(shapeHash(texts[i]), texts[i]).toBe(row[`h${i}`]);
      // Memoised: the same answer the second time.
      expect(shapeHash(texts[i])).toBe(row[`h${i}`]);
    }
    expect(row.h4).not.toBe(row.h5);
  });
});

describe('jobs without groups', () => {
  it('are analysed from ClickHouse: an older log record, a stream entry without groups, one with unusable groups', {
    timeout: 60_000,
  }, async () => {
    const fallback = `analysis:test:${randomBytes(4).toString('hex')}`;

    // An older edge's log record: a batch logged (answered 202) by the compiled edge, which dies
    // before shipping it; the record is copied, without its groups, into the log of another edge.
    const deadDir = newLogDir('job-groups-dead-');
    const oldDir = newLogDir('job-groups-old-');
    walDirs.push(deadDir, oldDir);
    const port = await freePort();
    const compiled: EdgeAddress = { url: `http://127.0.0.1:${port}`, clock: new ManualClock() };
    const dying = await spawnWalEdge(port, deadDir, { INGEST_SHIP_INTERVAL_MS: '60000' });
    processes.push(dying);
    const logged = [item(PLAIN), item(AWKWARD), item(PLAIN, { statusCode: 500 })];
    expect(await send(compiled, logged)).toEqual({ persisted: 3 });
    await dying.kill('SIGKILL');
    const dead = await WriteAheadLog.open({ dir: deadDir, segmentBytes: 64 * 1024 * 1024 });
    const { records } = await dead.read({ segment: 0, offset: 0 }, 64 * 1024 * 1024);
    await dead.close();
    expect(records).toHaveLength(1);
    const record = decodeBatchRecord(records[0]);
    expect(parseJobGroups(record.job.groups, 3)?.map((g) => g.items)).toEqual([[0], [1], [2]]);
    const { groups: _dropped, ...oldJob } = record.job;
    const old = await WriteAheadLog.open({ dir: oldDir, segmentBytes: 64 * 1024 * 1024 });
    await old.append(jsonHeadRecord(record.accountId, oldJob, Buffer.from(record.rows)));
    await old.close();
    const oldEdge = await startEdge(ctx, clickhouse, { analysisStream: fallback, ingest: { walDir: oldDir } });
    try {
      expect(await oldEdge.shipped()).toBe(true);
    } finally {
      await oldEdge.close();
    }

    // Stream entries of the batches of this connection so far: one without groups, one whose
    // groups do not fit its eventIds; a third batch's job keeps its groups.
    const pending = firstJobs;
    expect(await send(edge, [item(AWKWARD), item(PLAIN, { inspected: false })])).toEqual({ persisted: 2 });
    expect(await edge.shipped()).toBe(true);
    const carried = (await readJobs()).filter((job) => job.connectionId === collector.connectionId);
    expect(carried).toHaveLength(1);
    const entries = [...pending, ...carried];
    expect(entries).toHaveLength(3);
    // The entry without its groups (an older edge's); each xadd below adds what it tests.
    const fields = ({ groups: _, ...job }: AnalysisJobEntry) => analysisJobFields(job);
    await ctx.deps.redis.xadd(fallback, '*', ...fields(entries[0]));
    const unusable = [{ ...entries[1].groups![0], items: [99] }];
    await ctx.deps.redis.xadd(fallback, '*', ...fields(entries[1]), 'groups', encodeJobGroups(unusable));
    for (const job of entries.slice(2)) await ctx.deps.redis.xadd(fallback, '*', ...fields(job), 'groups', encodeJobGroups(job.groups!));
    // A job whose rows ClickHouse does not hold, at a receipt time whose shape it does: counted
    // from its groups alone, so the analyzer takes a job's groups instead of reading its rows.
    const carriedOnly: AnalysisJobEntry = {
      ...entries[2],
      batchId: `${entries[2].batchId}-carried-only`,
      eventIds: [`evt_carried_${randomBytes(6).toString('hex')}`, `evt_carried_${randomBytes(6).toString('hex')}`],
      groups: [{ ...entries[2].groups![0], items: [0, 1] }],
    };
    await ctx.deps.redis.xadd(fallback, '*', ...fields(carriedOnly), 'groups', encodeJobGroups(carriedOnly.groups!));

    // What the analyzer parses of them: only the last ones keep groups.
    const raw = await ctx.deps.redis.xrange(fallback, '-', '+');
    const shippedOld = raw.find(([, values]) => values.includes(record.job.batchId));
    expect(shippedOld, 'the older record was shipped').toBeDefined();
    expect(shippedOld![1]).not.toContain('groups');

    const total = logged.length + entries.reduce((sum, job) => sum + job.eventIds.length, 0) + carriedOnly.eventIds.length;
    const analyzer = await startAnalyzer(ctx, clickhouse, { stream: fallback });
    try {
      await waitFor(async () => ((await streamDrained(ctx, fallback)) ? true : undefined), 20_000, 'the analysis stream to drain');
      const analysed = await analyzer.metrics.getSingleMetric('analyzer_envelopes_analysed_total')!.get();
      expect(analysed.values[0].value).toBe(total);
    } finally {
      await analyzer.stop();
    }
  });
});

describe('log record heads', () => {
  const job: AnalysisJob = {
    connectionId: 'con_1',
    workspaceId: 'wsp_1',
    mode: 'live',
    batchId: 'bat_1',
    receivedAtMs: 1_764_000_000_123,
    eventIds: ['evt_a', 'evt_b.c:d-e_f'],
    groups: 'POST /orders response_body 201 1 ab 0 GET /orders/{id} response_body 200 0 cd 1',
  };
  const rows = Buffer.from('row 1\nrow 2\n');
  const payload = (pieces: Buffer[]) => Buffer.concat(pieces);

  it('read back what was written, with or without groups', () => {
    expect(decodeBatchRecord(payload(encodeBatchRecord({ accountId: 'acc_1', job, rows })))).toEqual({ accountId: 'acc_1', job, rows });
    const { groups: _none, ...withoutGroups } = job;
    expect(decodeBatchRecord(payload(encodeBatchRecord({ accountId: 'acc_1', job: withoutGroups, rows })))).toEqual({
      accountId: 'acc_1',
      job: withoutGroups,
      rows,
    });
  });

  it("read an older edge's JSON head", () => {
    expect(decodeBatchRecord(payload(jsonHeadRecord('acc_1', job, rows)))).toEqual({ accountId: 'acc_1', job, rows });
  });
});
