// Redis memory per remembered eventId (issue 32, item 4's measurement). From the project root:
//
//   npm run bench:build && node dist/bench/redis-dedup-memory.js [--event-ids 1000000] [--connections 64] [--accounts 3] [--batch 20]
//
// Admits `--event-ids` fresh eventIds through the edge's own admission code (`Admission.admit`,
// then `Admission.durable` as the edge does once a batch's rows are in its log) in batches of
// `--batch` over `--connections` synthetic Live connections of `--accounts` accounts, with the
// product's default de-duplication window (7 days), into the bench Redis database (db 3, flushed
// before and after; do not run beside ingest-cpu.js or ingest-load.js). Then removes what
// the analyzer would have consumed (the unanalysed-batches set) and prints:
// - `INFO memory` used_memory after less before, per eventId;
// - `MEMORY USAGE <key> SAMPLES 0` summed per key family (dd: de-duplication sets, their metas
//   and bucket hashes, dc: committed batches, ib: admission records, rl: limit windows, other), per
//   eventId, the encodings of the bucket hashes and one set. The eventIds are the load drivers':
//   `evt_<6 chars><12 digits>` (23 bytes);
// - the Redis CPU of ADMIT (EVALSHA µs per call, INFO commandstats) over `--probe-calls`
//   sequential calls of fresh eventIds on the loaded state.

import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { loadConfig } from '../shared/config.js';
import { RedisKeys, connectRedis } from '../shared/redis.js';
import { Admission } from '../ingest/admission/admission.js';
import { EVENT_ID_DIGEST_BYTES } from '../ingest/common/eventIdDigest.js';
import type { IngestCredential } from '../ingest/common/credential.js';
import { parseArgs } from './benchProcess.js';
import { BENCH_STORES, benchEdgeEnv, flushBenchRedis, fmt } from './ingest-common.js';

const args = parseArgs(process.argv.slice(2));
const EVENT_IDS = Number(args.get('event-ids') ?? 1_000_000);
const CONNECTIONS = Number(args.get('connections') ?? 64);
const ACCOUNTS = Number(args.get('accounts') ?? 3);
const BATCH = Number(args.get('batch') ?? 20);
const IN_FLIGHT = 32;
/** ADMIT calls of the CPU probe (after the memory is measured): sequential, fresh eventIds. */
const PROBE_CALLS = Number(args.get('probe-calls') ?? 2_000);

const hex = () => randomBytes(13).toString('hex');
const accounts = Array.from({ length: ACCOUNTS }, () => ({ accountId: `acc_${hex()}`, workspaceId: `wsp_${hex()}` }));
const credentials: IngestCredential[] = Array.from({ length: CONNECTIONS }, (_, index) => ({
  ...accounts[index % ACCOUNTS],
  connectionId: `int_${hex()}`,
  connectionKey: `svc_conn_v1.${hex()}`,
  tenantId: `ten_${hex()}`,
  environmentId: `env_${hex()}`,
  mode: 'live',
  integrationId: `wint_${hex()}`,
  integrationKey: `svc_int_${hex()}`,
  direction: 'outbound',
  protocol: 'http-api',
  usable: true,
  tokenHash: null,
  hmacKey: null as never,
  sandboxAllowance: null,
  epoch: '',
  loadedAt: Date.now(),
}));

const env: Record<string, string | undefined> = { ...process.env, ...benchEdgeEnv() };
delete env.INGEST_DEDUP_WINDOW_SECONDS; // the product's window, not the load drivers' 15 minutes
const config = loadConfig(env);
const admin = new Redis(BENCH_STORES.REDIS_URL);
const usedMemory = async () => Number(/used_memory:(\d+)/.exec(await admin.info('memory'))?.[1]);

async function familyUsage(): Promise<{
  bytes: Map<string, number>;
  keys: Map<string, number>;
  encodings: Map<string, number>;
  sampleKey?: string;
}> {
  const bytes = new Map<string, number>();
  const keys = new Map<string, number>();
  const encodings = new Map<string, number>();
  let sampleKey: string | undefined;
  let cursor = '0';
  do {
    const [next, batch] = await admin.scan(cursor, 'COUNT', 1000);
    cursor = next;
    for (const key of batch) {
      const family = /^(dd|dc|ib|rl):/.exec(key)?.[1] ?? 'other';
      // A set's buckets hash (`dd:{acct}:conn:period:b`), not its meta (`…:m`).
      if (family === 'dd' && key.endsWith(':b')) {
        sampleKey ??= key;
        const encoding = String(await admin.object('ENCODING', key));
        encodings.set(encoding, (encodings.get(encoding) ?? 0) + 1);
      }
      const usage = Number(await admin.call('MEMORY', 'USAGE', key, 'SAMPLES', '0'));
      bytes.set(family, (bytes.get(family) ?? 0) + usage);
      keys.set(family, (keys.get(family) ?? 0) + 1);
    }
  } while (cursor !== '0');
  return { bytes, keys, encodings, sampleKey };
}

/** `cmdstat_evalsha` of INFO commandstats: calls and µs (the whole server: other clients' scripts count too). */
async function evalshaStats(): Promise<{ calls: number; usec: number }> {
  const line = /cmdstat_evalsha:calls=(\d+),usec=(\d+)/.exec(await admin.info('commandstats'));
  return { calls: Number(line?.[1] ?? 0), usec: Number(line?.[2] ?? 0) };
}

async function main(): Promise<void> {
  await flushBenchRedis();
  const redis = await connectRedis(BENCH_STORES.REDIS_URL);
  const admission = new Admission(redis, config);
  await admission.load();
  const before = await usedMemory();
  const prefix = randomBytes(3).toString('hex');
  let next = 0;
  const started = performance.now();
  const worker = async () => {
    while (next < EVENT_IDS) {
      const first = next;
      next += BATCH;
      const credential = credentials[(first / BATCH) % CONNECTIONS];
      const eventIds = Array.from(
        { length: Math.min(BATCH, EVENT_IDS - first) },
        (_, i) => `evt_${prefix}${String(first + i).padStart(12, '0')}`,
      );
      const nowMs = Date.now();
      const batchId = admission.newBatchId();
      const result = await admission.admit(credential, { nowMs, itemCount: eventIds.length, eventIds, batchId });
      if (result.kind !== 'admitted' || result.ticket.newEventIds.length !== eventIds.length)
        throw new Error(`not admitted: ${result.kind}`);
      if (!(await admission.durable({ accountId: credential.accountId, batchId, receivedAtMs: nowMs }))) throw new Error('not committed');
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  const seconds = (performance.now() - started) / 1000;
  // What the analyzer consumes and the edge empties in steady state: not de-duplication memory.
  await admin.del(RedisKeys.unanalysedBatches, RedisKeys.pendingAdmissions);
  const after = await usedMemory();
  const families = await familyUsage();
  console.log(
    `redis dedup memory: ${fmt(EVENT_IDS)} eventIds (23 bytes each) in ${BATCH}-envelope batches over ${CONNECTIONS} connections of ${ACCOUNTS} accounts, `
      + `window ${config.ingest.dedupWindowSeconds} s; admitted and committed in ${fmt(seconds, 1)} s`,
  );
  console.log(`INFO memory used_memory: ${fmt(before)} → ${fmt(after)} bytes: ${fmt((after - before) / EVENT_IDS, 1)} bytes per eventId`);
  let total = 0;
  for (const [family, bytes] of [...families.bytes].sort((a, b) => b[1] - a[1])) {
    total += bytes;
    console.log(
      `   ${family}: ${fmt(families.keys.get(family) ?? 0)} keys, ${fmt(bytes)} bytes, ${fmt(bytes / EVENT_IDS, 1)} bytes per eventId`,
    );
  }
  console.log(`   all keys (MEMORY USAGE): ${fmt(total / EVENT_IDS, 1)} bytes per eventId`);
  console.log(
    `   de-duplication bucket hashes by encoding: ${[...families.encodings].map(([encoding, count]) => `${encoding} ${fmt(count)}`).join(', ')}`,
  );
  if (families.sampleKey) {
    const [encoding, buckets, field] = await Promise.all([
      admin.object('ENCODING', families.sampleKey),
      admin.hlen(families.sampleKey),
      admin.hrandfield(families.sampleKey),
    ]);
    const digests = ((await admin.hgetBuffer(families.sampleKey, String(field))) ?? Buffer.alloc(0)).length / EVENT_ID_DIGEST_BYTES;
    const meta = await admin.get(families.sampleKey.replace(/b$/, 'm'));
    console.log(
      `   one set: ${families.sampleKey}: encoding ${encoding}, ${fmt(buckets)} buckets (meta buckets:digests ${meta}); bucket ${field} holds ${fmt(digests)} digests`,
    );
  }
  // Redis CPU of ADMIT on the loaded state: PROBE_CALLS sequential calls of `--batch` fresh
  // eventIds, round-robin over the connections, INFO commandstats before and after (only ADMIT
  // runs meanwhile; more calls than sent means another client ran scripts too).
  const probeBefore = await evalshaStats();
  for (let call = 0; call < PROBE_CALLS; call += 1) {
    const credential = credentials[call % CONNECTIONS];
    const eventIds = Array.from({ length: BATCH }, (_, i) => `evt_${prefix}p${String(call * BATCH + i).padStart(11, '0')}`);
    const result = await admission.admit(credential, { nowMs: Date.now(), itemCount: BATCH, eventIds, batchId: admission.newBatchId() });
    if (result.kind !== 'admitted') throw new Error(`probe not admitted: ${result.kind}`);
  }
  const probeAfter = await evalshaStats();
  const probeCalls = probeAfter.calls - probeBefore.calls;
  console.log(
    `   ADMIT EVALSHA: ${fmt((probeAfter.usec - probeBefore.usec) / Math.max(1, probeCalls), 1)} µs per call of ${BATCH} fresh eventIds `
      + `(${fmt(probeCalls)} EVALSHA calls counted for ${fmt(PROBE_CALLS)} sent)`,
  );
  redis.disconnect();
  await flushBenchRedis();
  admin.disconnect();
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
