// Ingest micro-benchmarks (issue 4): the per-batch steps of the edge's pipeline on a realistic
// 50-envelope batch. Run from the project root (the admission task needs the local Redis):
//   npm run bench:ingest-micro
//   npx tsc -p bench/tsconfig.json && node dist/bench/ingest-micro.bench.js
// BENCH_MICRO_REDIS_URL (default redis://127.0.0.1:6379/2, flushed before and after) is the Redis database
// of the admission task; BENCH_TIME_MS (default 2000) the measuring time per task.

import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { Bench } from 'tinybench';
import { loadConfig } from '../shared/config.js';
import { validateEnvelope } from '../shared/envelope/validate.js';
import { connectRedis } from '../shared/redis.js';
import { Admission } from '../ingest/admission/admission.js';
import { checkItem, parseBatch, type ItemCheck } from '../ingest/check/parseItems.js';
import { checkBatch, type BatchCheckInput } from '../ingest/check/checkBatch.js';
import { createCheckPool } from '../ingest/check/checker.js';
import { RequestMemory } from '../ingest/offload/requestMemory.js';
import type { IngestCredential } from '../ingest/common/credential.js';
import { jsonResponse } from '../ingest/common/edgeHttp.js';
import { batchRowPrefix, observationRow } from '../ingest/common/observationsTable.js';
import { SharedSlots, copyBytes } from '../ingest/offload/sharedSlots.js';
import { parseSignatureHeader, signatureMatches } from '../ingest/auth/signature.js';
import { BatchTemplate, ENVELOPES_PER_BATCH, benchEdgeEnv, fmt, signature, tokenKey } from './ingest-common.js';

const REDIS_URL = process.env.BENCH_MICRO_REDIS_URL ?? 'redis://127.0.0.1:6379/2';
const TIME_MS = Number(process.env.BENCH_TIME_MS ?? 2000);
const N = ENVELOPES_PER_BATCH;

const token = `svc_ing_${randomBytes(32).toString('base64url').slice(0, 43)}`;
const key = tokenKey(token);
const credential: IngestCredential = {
  connectionId: `int_${randomBytes(13).toString('hex')}`,
  connectionKey: `svc_conn_v1.${randomBytes(13).toString('hex')}`,
  workspaceId: `wsp_${randomBytes(13).toString('hex')}`,
  accountId: `acc_${randomBytes(13).toString('hex')}`,
  tenantId: `ten_${randomBytes(13).toString('hex')}`,
  environmentId: `env_${randomBytes(13).toString('hex')}`,
  mode: 'live',
  integrationId: `wint_${randomBytes(13).toString('hex')}`,
  integrationKey: `svc_int_${randomBytes(13).toString('hex')}`,
  direction: 'outbound',
  protocol: 'http-api',
  usable: true,
  tokenHash: null,
  hmacKey: key,
  sandboxAllowance: null,
  epoch: '',
  loadedAt: Date.now(),
};

const template = new BatchTemplate(credential.integrationKey, `micro${randomBytes(3).toString('hex')}`, new Date().toISOString());
const body = template.fill(0);
/** The driver task refills one body, as the load driver refills the bodies of completed requests. */
const driverBody = template.fill(0);
const nowMs = Date.now();
const header = signature(key, body, Math.floor(nowMs / 1000));
const items = parseBatch('application/json', body);
const checks: ItemCheck[] = items.map((item) => checkItem(item, credential));
if (!checks.every((check) => check.valid)) throw new Error('the bench batch does not validate');
const valid = checks as Extract<ItemCheck, { valid: true }>[];

// Admission against the real Redis, in a database of its own (flushed), with the bench's raised limits.
const redisUrl = new URL(REDIS_URL);
if (redisUrl.pathname === '' || redisUrl.pathname === '/' || redisUrl.pathname === '/0' || redisUrl.pathname === '/1') {
  throw new Error(`BENCH_MICRO_REDIS_URL must name a bench database (not 0 or 1): ${REDIS_URL}`);
}
const admin = new Redis(REDIS_URL);
await admin.flushdb();
admin.disconnect();
const config = loadConfig({ ...process.env, ...benchEdgeEnv(), REDIS_URL });
const redis = await connectRedis(REDIS_URL);
const admission = new Admission(redis, config);
await admission.load();
let eventCounter = 0;
const freshEventIds = () => {
  const ids: string[] = [];
  for (let i = 0; i < N; i += 1) ids.push(`evt_micro_${(eventCounter++).toString().padStart(12, '0')}`);
  return ids;
};
const admitted = await admission.admit(credential, {
  nowMs: Date.now(),
  itemCount: N,
  eventIds: freshEventIds(),
  batchId: admission.newBatchId(),
});
if (admitted.kind !== 'admitted' || admitted.ticket.newEventIds.length !== N)
  throw new Error(`admission did not admit the batch: ${JSON.stringify(admitted)}`);

const prefixOf = () =>
  batchRowPrefix({ credential, batchId: 'b0123456789ab', receivedAtMs: nowMs, receivedDate: new Date(nowMs).toISOString().slice(0, 10) });
const results = valid.map((check, index) => ({ index, accepted: true, eventId: check.envelope.eventId }));

const batchInput: BatchCheckInput = {
  body,
  contentType: 'application/json',
  binding: credential,
  batchId: 'b0123456789ab',
  receivedAtMs: nowMs,
};
const pool = createCheckPool(1);
const noSlots = new RequestMemory(null);
let pooledBody: Buffer = Buffer.from(body);
// The edge's way with INGEST_SHARED_SLOTS: the body copied into a slot as it arrives, the rows written into another.
const slots = new SharedSlots(4);
const slotPool = createCheckPool(1, slots);

const bench = new Bench({ time: TIME_MS, warmupTime: 300 });
bench
  .add('signature verify (parse header + HMAC 50-envelope body)', () => {
    const parsed = parseSignatureHeader(header);
    if (!parsed || !signatureMatches(key, parsed, body)) throw new Error('signature mismatch');
  })
  .add('JSON.parse 50-envelope body', () => {
    JSON.parse(body.toString('utf8'));
  })
  .add('parseBatch + checkItem x50 (validate 50)', () => {
    const parsedItems = parseBatch('application/json', body);
    for (const item of parsedItems) if (!checkItem(item, credential).valid) throw new Error('invalid');
  })
  .add('validateEnvelope x50 (parsed items)', () => {
    for (const item of items) if (!validateEnvelope(item).valid) throw new Error('invalid');
  })
  .add('Admission.admit, 50 fresh eventIds (Redis)', async () => {
    const result = await admission.admit(credential, {
      nowMs: Date.now(),
      itemCount: N,
      eventIds: freshEventIds(),
      batchId: admission.newBatchId(),
    });
    if (result.kind !== 'admitted') throw new Error(`not admitted: ${result.kind}`);
  })
  .add('batchRowPrefix + observationRow x50 + Buffer', () => {
    const prefix = prefixOf();
    let rows = '';
    for (const check of valid) rows += observationRow(prefix, check.envelope, check.occurredAtMs, check.shape);
    Buffer.from(rows, 'utf8');
  })
  .add('checkBatch (the worker task: parse, validate, rows, results)', () => {
    if (checkBatch(batchInput).kind !== 'checked') throw new Error('not checked');
  })
  .add('check pool (checkBatch on a worker thread, round trip)', async () => {
    // The body moves to the thread and back, as on the edge: send the one that came back.
    const answer = await pool.run({ ...batchInput, body: pooledBody }, noSlots);
    pooledBody = answer.body;
    if (answer.output.kind !== 'checked') throw new Error('not checked');
  })
  .add('check pool, body and rows in shared slots (round trip)', async () => {
    const memory = new RequestMemory(slots);
    const slotBody = memory.body(body.length);
    copyBytes(body, slotBody, 0);
    const answer = await slotPool.run({ ...batchInput, body: slotBody }, memory);
    if (answer.output.kind !== 'checked' || answer.bytes?.buffer !== slots.memory) throw new Error('not checked in the slots');
    memory.release();
  })
  .add('response body (jsonResponse, 50 results)', () => {
    jsonResponse(202, { accepted: N, persisted: N, results });
  })
  .add('driver: fill template + sign (load-driver cost)', () => {
    signature(key, template.fill(eventCounter, driverBody), Math.floor(Date.now() / 1000));
    eventCounter += N;
  });

/** EVALSHA calls and their Redis-side µs so far (INFO commandstats; server-wide, so other clients' scripts would count too). */
async function evalshaStats(): Promise<{ calls: number; usec: number }> {
  const info = await redis.info('commandstats');
  const match = /cmdstat_evalsha:calls=(\d+),usec=(\d+)/.exec(info);
  return match ? { calls: Number(match[1]), usec: Number(match[2]) } : { calls: 0, usec: 0 };
}

const scriptsBefore = await evalshaStats();
await bench.run();
const scriptsAfter = await evalshaStats();
// The bench database only: its eventIds and windows are of no further use.
await redis.flushdb('ASYNC');
redis.disconnect();
await pool.close();
await slotPool.close();

const us = (ms: number | undefined) => (ms === undefined ? NaN : ms * 1000);
console.log(`ingest micro-benchmarks: ${N}-envelope batch of ${fmt(body.length)} bytes; ${TIME_MS} ms per task; node ${process.version}`);
console.log(
  `${'task'.padEnd(56)} | ${'ops/s'.padStart(9)} | ${'mean µs'.padStart(9)} | ${'p99 µs'.padStart(9)} | ${'µs/envelope'.padStart(11)} | samples`,
);
for (const task of bench.tasks) {
  const result = task.result;
  if (!result || !('latency' in result) || !result.latency) throw new Error(`${task.name} did not run`);
  const mean = us(result.latency.mean);
  console.log(
    `${task.name.padEnd(56)} | ${fmt(result.throughput.mean).padStart(9)} | ${fmt(mean, 1).padStart(9)} | `
      + `${fmt(us(result.latency.p99), 1).padStart(9)} | ${fmt(mean / N, 2).padStart(11)} | ${result.latency.samples.length}`,
  );
}
const calls = scriptsAfter.calls - scriptsBefore.calls;
if (calls > 0) {
  const usec = (scriptsAfter.usec - scriptsBefore.usec) / calls;
  console.log(
    `Redis-side time of the admission script (INFO commandstats, EVALSHA): ${fmt(usec, 1)} µs per call `
      + `(${fmt(usec / N, 2)} µs per envelope) over ${fmt(calls)} calls`,
  );
}
process.exit(0);
