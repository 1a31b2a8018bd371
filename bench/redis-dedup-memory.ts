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
// - `MEMORY USAGE <key> SAMPLES 0` summed per key family (dd: eventId hashes, dc: committed
//   batches, ib: admission records, rl: limit windows, other), per eventId, and the encoding of one
//   eventId hash. The eventIds are the load drivers': `evt_<6 chars><12 digits>` (23 bytes).

import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { loadConfig } from '../shared/config.js';
import { RedisKeys, connectRedis } from '../shared/redis.js';
import { Admission } from '../ingest/admission/admission.js';
import type { IngestCredential } from '../ingest/common/credential.js';
import { parseArgs } from './benchProcess.js';
import { BENCH_STORES, benchEdgeEnv, flushBenchRedis, fmt } from './ingest-common.js';

const args = parseArgs(process.argv.slice(2));
const EVENT_IDS = Number(args.get('event-ids') ?? 1_000_000);
const CONNECTIONS = Number(args.get('connections') ?? 64);
const ACCOUNTS = Number(args.get('accounts') ?? 3);
const BATCH = Number(args.get('batch') ?? 20);
const IN_FLIGHT = 32;

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

async function familyUsage(): Promise<{ bytes: Map<string, number>; keys: Map<string, number>; sampleKey?: string }> {
  const bytes = new Map<string, number>();
  const keys = new Map<string, number>();
  let sampleKey: string | undefined;
  let cursor = '0';
  do {
    const [next, batch] = await admin.scan(cursor, 'COUNT', 1000);
    cursor = next;
    for (const key of batch) {
      const family = /^(dd|dc|ib|rl):/.exec(key)?.[1] ?? 'other';
      if (family === 'dd') sampleKey ??= key;
      const usage = Number(await admin.call('MEMORY', 'USAGE', key, 'SAMPLES', '0'));
      bytes.set(family, (bytes.get(family) ?? 0) + usage);
      keys.set(family, (keys.get(family) ?? 0) + 1);
    }
  } while (cursor !== '0');
  return { bytes, keys, sampleKey };
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
  if (families.sampleKey) {
    const [encoding, fields] = await Promise.all([admin.object('ENCODING', families.sampleKey), admin.hlen(families.sampleKey)]);
    const value = (await admin.hrandfield(families.sampleKey, 1, 'WITHVALUES')) as string[];
    console.log(`   one eventId hash: ${families.sampleKey}: encoding ${encoding}, ${fmt(fields)} fields, e.g. ${value[0]} = ${value[1]}`);
  }
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
