import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { checkBatch, type BatchBinding, type BatchCheckInput, type CheckedBatch } from '../ingest/check/checkBatch.js';
import { BatchChecker, createCheckPool, type CheckPool } from '../ingest/check/checker.js';
import { newRows } from '../ingest/check/newRows.js';
import { OBSERVATION_COLUMNS } from '../ingest/common/observationsTable.js';
import { RequestMemory } from '../ingest/offload/requestMemory.js';
import { SharedSlots } from '../ingest/offload/sharedSlots.js';
import { envelope, type Collector } from './helpers/ingest.js';

// The CPU-bound middle of the pipeline (ingest/check/checkBatch.ts) and the worker threads that run
// it: rows of exactly the valid items, byte ranges that cut out duplicates correctly also when
// a row holds multi-byte characters, and the same answer from a worker thread as in-process.

const collector: Pick<Collector, 'integrationKey' | 'direction' | 'protocol'> = {
  integrationKey: 'svc_int_x',
  direction: 'outbound',
  protocol: 'http-api',
};
const binding: BatchBinding = {
  connectionId: 'int_1',
  workspaceId: 'ws_1',
  accountId: 'acct_1',
  integrationId: 'wint_1',
  integrationKey: 'svc_int_x',
  tenantId: 'ten_1',
  environmentId: 'env_1',
  mode: 'live',
  direction: 'outbound',
  protocol: 'http-api',
};
const input = (items: unknown, contentType: string | undefined = 'application/json'): BatchCheckInput => ({
  body: Buffer.from(typeof items === 'string' ? items : JSON.stringify({ envelopes: items })),
  contentType,
  binding,
  batchId: 'b1',
  receivedAtMs: Date.UTC(2026, 10, 24),
});
const checked = (items: unknown[]): CheckedBatch => {
  const output = checkBatch(input(items));
  if (output.kind !== 'checked') throw new Error(`not checked: ${output.kind}`);
  return output;
};
/** An envelope whose shape has a field name of multi-byte characters (its row is longer in bytes than in characters). */
const wide = () =>
  envelope(collector, {
    payload: {
      storage: 'none',
      schemaFingerprint: `sha256:${'cd'.repeat(32)}`,
      redactionPolicyVersion: '1',
      schemaShape: { kind: 'object', fields: { 'größe€': { kind: 'string' } } },
    },
  });
const eventIdOfRow = (row: string) => row.split('\t')[OBSERVATION_COLUMNS.indexOf('event_id')];
/** A check on a worker thread, its rows put back into its output (as BatchChecker does). */
const checkOn = async (pool: CheckPool, batch: BatchCheckInput, memory = new RequestMemory(null)) => {
  const result = await pool.run(batch, memory);
  if (result.output.kind === 'checked') result.output.rows = result.bytes!;
  return result;
};

describe('checkBatch', () => {
  it('answers the two 400s of a batch that cannot be read', () => {
    expect(checkBatch(input('{"envelopes": [')).kind).toBe('invalid_request');
    expect(checkBatch(input([], 'text/plain')).kind).toBe('invalid_request');
    expect(checkBatch(input('{"items": []}')).kind).toBe('batch_shape');
    expect(checkBatch(input(Array.from({ length: 51 }, () => envelope(collector)))).kind).toBe('batch_shape');
  });

  it('builds one row per valid item and the results of every item, in item order', () => {
    const good = envelope(collector);
    const other = envelope({ ...collector, integrationKey: 'svc_int_other' });
    const batch = checked([good, { eventId: 'evt_bad' }, other, wide()]);
    expect(batch.itemCount).toBe(4);
    expect(batch.rejected).toBe(2);
    expect(batch.eventIds).toHaveLength(2);
    expect(batch.eventIds[0]).toBe(good.eventId);
    const results = JSON.parse(batch.resultsJson) as { index: number; accepted: boolean; issues?: string[] }[];
    expect(results.map((result) => [result.index, result.accepted])).toEqual([
      [0, true],
      [1, false],
      [2, false],
      [3, true],
    ]);
    expect(results[2].issues).toEqual(['integration does not match credential']);
    const rows = Buffer.from(batch.rows).toString('utf8').split('\n').slice(0, -1);
    expect(rows.map(eventIdOfRow)).toEqual(batch.eventIds);
    expect(batch.rowEnds[batch.rowEnds.length - 1]).toBe(batch.rows.byteLength);
  });
});

describe('newRows', () => {
  it('keeps exactly the rows of the new eventIds, whatever bytes the rows hold', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.boolean(), fc.boolean()), { minLength: 1, maxLength: 12 }), (plan) => {
        const batch = checked(plan.map(([multiByte]) => (multiByte ? wide() : envelope(collector))));
        const duplicate = plan.map(([, dup]) => dup);
        const rows = newRows(batch, duplicate);
        const expected = batch.eventIds.filter((_, index) => !duplicate[index]);
        if (expected.length === 0) return rows === null;
        const lines = rows!.toString('utf8').split('\n');
        expect(lines.pop()).toBe('');
        expect(lines.map(eventIdOfRow)).toEqual(expected);
        expect(lines.every((line) => line.split('\t').length === OBSERVATION_COLUMNS.length)).toBe(true);
        return true;
      }),
      { numRuns: 200 },
    );
  });

  it('hands the rows over without a copy when nothing is a duplicate, and null when everything is', () => {
    const batch = checked([envelope(collector), envelope(collector)]);
    expect(newRows(batch, [false, false])!.buffer).toBe(batch.rows.buffer);
    expect(newRows(batch, [true, true])).toBeNull();
    expect(newRows(checked([{ eventId: 'evt_bad' }]), [])).toBeNull();
  });
});

describe('the check pool', () => {
  const pool = createCheckPool(2);
  afterAll(() => pool.close());

  it('gives the same answer on a worker thread as in-process, rows included', async () => {
    const items = [envelope(collector), { eventId: 'evt_bad' }, wide()];
    const local = checkBatch(input(items)) as CheckedBatch;
    const remote = (await checkOn(pool, input(items))).output as CheckedBatch;
    expect({ ...remote, rows: Buffer.from(remote.rows).toString('hex') }).toEqual({
      ...local,
      rows: Buffer.from(local.rows).toString('hex'),
    });
    expect((await checkOn(pool, input('not json'))).output).toEqual({ kind: 'invalid_request' });
  });

  it('fails a task whose check throws, and goes on serving', async () => {
    await expect(checkOn(pool, { ...input([]), body: 42 as unknown as Uint8Array })).rejects.toThrow(/^batch worker: /);
    expect((await checkOn(pool, input([envelope(collector)]))).output.kind).toBe('checked');
  });

  it('moves a body that owns its memory to the thread and back, and copies one that shares it', async () => {
    const text = JSON.stringify({ envelopes: [envelope(collector), envelope(collector)] });
    const own = Buffer.alloc(Buffer.byteLength(text), text);
    const lent = await checkOn(pool, { ...input([]), body: own });
    expect(own.byteLength).toBe(0); // moved away, not copied
    expect(lent.body.toString('utf8')).toBe(text);
    expect((lent.output as CheckedBatch).eventIds).toHaveLength(2);

    const slab = Buffer.from(`xx${text}yy`);
    const shared = slab.subarray(2, 2 + lent.body.length);
    const copied = await checkOn(pool, { ...input([]), body: shared });
    expect(shared.toString('utf8')).toBe(text); // still readable here
    expect(copied.body).toBe(shared);
    expect((copied.output as CheckedBatch).eventIds).toHaveLength(2);
  });

  it('runs many batches at once and keeps each answer with its batch', async () => {
    const batches = Array.from({ length: 40 }, (_, n) => Array.from({ length: 1 + (n % 5) }, () => envelope(collector)));
    const answers = await Promise.all(batches.map((items) => checkOn(pool, input(items))));
    answers.forEach((answer, n) => {
      expect((answer.output as CheckedBatch).eventIds).toEqual(batches[n].map((item) => item.eventId));
    });
  });
});

describe('rows written into a shared slot', () => {
  it('are the same bytes as in memory of their own, in a slot when they fit, whatever its size', () => {
    fc.assert(
      fc.property(fc.array(fc.boolean(), { minLength: 1, maxLength: 6 }), fc.integer({ min: -8, max: 8 }), (plan, slack) => {
        const items = plan.map((multiByte) => (multiByte ? wide() : envelope(collector)));
        const alone = checked(items);
        const into = Buffer.alloc(Math.max(0, alone.rows.byteLength + slack));
        const output = checkBatch(input(items), into) as CheckedBatch;
        expect(Buffer.from(output.rows).equals(Buffer.from(alone.rows))).toBe(true);
        expect(output.rowEnds).toEqual(alone.rowEnds);
        expect(output.rows.buffer === into.buffer).toBe(slack >= 0);
      }),
      { numRuns: 100 },
    );
  });
});

describe('the check pool with shared slots', () => {
  const slots = new SharedSlots(8, 4096);
  const pool = createCheckPool(2, slots);
  afterAll(() => pool.close());
  const items = () => [envelope(collector), { eventId: 'evt_bad' }, wide()];
  const inSlot = (bytes: Uint8Array) => bytes.buffer === slots.memory;

  it('checks a body in place in its slot and writes the rows into another, the same answer as in-process', async () => {
    const batch = items();
    const local = checkBatch(input(batch)) as CheckedBatch;
    const text = JSON.stringify({ envelopes: batch });
    const memory = new RequestMemory(slots);
    const body = memory.body(Buffer.byteLength(text));
    body.write(text);
    const result = await checkOn(pool, { ...input([]), body }, memory);
    const remote = result.output as CheckedBatch;
    expect(result.body).toBe(body);
    expect(inSlot(remote.rows)).toBe(true);
    expect({ ...remote, rows: Buffer.from(remote.rows).toString('hex') }).toEqual({
      ...local,
      rows: Buffer.from(local.rows).toString('hex'),
    });
    expect(slots.available).toBe(6);
    memory.release();
    expect(slots.available).toBe(8);
  });

  it('copies a body of its own memory into a slot for the check, and leaves it readable', async () => {
    const text = JSON.stringify({ envelopes: items() });
    const own = Buffer.alloc(Buffer.byteLength(text), text);
    const memory = new RequestMemory(slots);
    const result = await checkOn(pool, { ...input([]), body: own }, memory);
    expect(own.toString()).toBe(text);
    expect(result.body).toBe(own);
    expect((result.output as CheckedBatch).eventIds).toHaveLength(2);
    expect(slots.available).toBe(6); // the copy and the rows, held by the request's memory
    memory.release();
    expect(slots.available).toBe(8);
  });

  it('uses memory of its own for a body or rows larger than a slot, and gives every slot back', async () => {
    const many = Array.from({ length: 12 }, () => envelope(collector));
    const text = JSON.stringify({ envelopes: many });
    expect(Buffer.byteLength(text)).toBeGreaterThan(4096);
    const memory = new RequestMemory(slots);
    const large = await checkOn(pool, input(many), memory);
    expect((large.output as CheckedBatch).eventIds).toHaveLength(12);
    expect(inSlot((large.output as CheckedBatch).rows)).toBe(false);
    // A small body whose rows do not fit: its binding makes every row long.
    const long = 'x'.repeat(1_000);
    const bound = await checkOn(
      pool,
      {
        ...input([envelope(collector), envelope(collector), envelope(collector), envelope(collector)]),
        binding: { ...binding, connectionId: long, workspaceId: long },
      },
      memory,
    );
    const rows = (bound.output as CheckedBatch).rows;
    expect(rows.byteLength).toBeGreaterThan(4096);
    expect(inSlot(rows)).toBe(false);
    memory.release();
    expect(slots.available).toBe(8);
  });

  it("moves bodies when every slot is taken, and gives the slots of failed tasks back with the request's memory", async () => {
    const others = new RequestMemory(slots);
    for (let n = 0; n < 8; n += 1) others.slot(1);
    expect(slots.available).toBe(0);
    const text = JSON.stringify({ envelopes: [envelope(collector)] });
    const own = Buffer.alloc(Buffer.byteLength(text), text);
    const moved = await checkOn(pool, { ...input([]), body: own }, new RequestMemory(slots));
    expect(own.byteLength).toBe(0);
    expect(inSlot((moved.output as CheckedBatch).rows)).toBe(false);
    others.release();
    // No binding: the check throws on the worker thread, after the body was copied into a slot.
    const memory = new RequestMemory(slots);
    await expect(checkOn(pool, { ...input([envelope(collector)]), binding: null as unknown as BatchBinding }, memory)).rejects.toThrow(
      /^batch worker: /,
    );
    memory.release();
    expect(slots.available).toBe(8);
  });

  it('keeps each answer with its batch when many share the slots', async () => {
    const batches = Array.from({ length: 30 }, (_, n) => Array.from({ length: 1 + (n % 3) }, () => envelope(collector)));
    const memories = batches.map(() => new RequestMemory(slots));
    const answers = await Promise.all(batches.map((batch, n) => checkOn(pool, input(batch), memories[n])));
    answers.forEach((answer, n) => {
      const output = answer.output as CheckedBatch;
      const lines = Buffer.from(output.rows).toString('utf8').split('\n').slice(0, -1);
      expect(lines.map(eventIdOfRow)).toEqual(batches[n].map((item) => item.eventId));
      memories[n].release();
    });
    expect(slots.available).toBe(8);
  });
});

describe('the check pool when a worker thread dies', () => {
  const pool = createCheckPool(1, null, fileURLToPath(new URL('./fixtures/exitingBatchWorker.mjs', import.meta.url)));
  afterAll(() => pool.close());

  it('fails the tasks the thread held and serves the next ones from a new thread', async () => {
    expect((await checkOn(pool, input([]))).output).toEqual({ kind: 'batch_shape' });
    const fatal = checkOn(pool, { ...input([]), batchId: 'exit' });
    // Queued behind the fatal task on the one thread: the thread dies before answering it.
    const held = checkOn(pool, input([]));
    await expect(fatal).rejects.toThrow('batch worker exited');
    await expect(held).rejects.toThrow('batch worker exited');
    expect((await checkOn(pool, input([]))).output).toEqual({ kind: 'batch_shape' });
  });
});

describe('the check pool whose worker cannot start', () => {
  // No such file: the threads die at start.
  const pool = createCheckPool(2, null, fileURLToPath(new URL('./fixtures/missingBatchWorker.mjs', import.meta.url)));
  afterAll(() => pool.close());

  it('refuses tasks instead of restarting the threads in a loop', async () => {
    // Depending on how soon the threads die, the first task fails with them or finds none.
    await expect(checkOn(pool, input([]))).rejects.toThrow(/^(batch worker exited|no batch worker thread is running)$/);
    await new Promise((resolve) => setTimeout(resolve, 200));
    await expect(checkOn(pool, input([]))).rejects.toThrow('no batch worker thread is running');
  });
});

describe('BatchChecker', () => {
  const pool = createCheckPool(1);
  const memory = () => new RequestMemory(null);
  afterAll(() => pool.close());
  // A body of its own memory (not a slice of Node's pool), as the edge's are: one a thread can take.
  const body = () => {
    const text = JSON.stringify({ envelopes: [envelope(collector)] });
    return Buffer.alloc(Buffer.byteLength(text), text);
  };

  it('checks in place while checks take little of the edge thread, and the body stays where it was', async () => {
    const checker = new BatchChecker(pool, { offloadAbove: 0.99, inlineBelow: 0.5, windowMs: 20 });
    for (let n = 0; n < 5; n += 1) {
      const own = body();
      const result = await checker.check({ ...input([]), body: own }, memory());
      expect(result.body).toBe(own); // not moved to a thread
      expect(result.output.kind).toBe('checked');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(checker.offloading).toBe(false);
  });

  it('moves the checks to the worker threads once they would take a large share, and back when the load falls', async () => {
    // A window long enough that the checks right after the switch fall in the same one.
    const checker = new BatchChecker(pool, { offloadAbove: 0.1, inlineBelow: 0.05, windowMs: 100 });
    // Back-to-back checks in place keep the thread busy, largely checking (bodies are made in between).
    for (let n = 0; n < 5_000 && !checker.offloading; n += 1) await checker.check({ ...input([]), body: body() }, memory());
    expect(checker.offloading).toBe(true);
    const own = body();
    const result = await checker.check({ ...input([]), body: own }, memory());
    expect(own.byteLength).toBe(0); // moved to the thread
    expect((result.output as CheckedBatch).eventIds).toHaveLength(1);
    expect(result.ms).toBeGreaterThan(0);
    // A quiet spell: one check in a long window is a small share.
    await new Promise((resolve) => setTimeout(resolve, 400));
    await checker.check({ ...input([]), body: body() }, memory());
    expect(checker.offloading).toBe(false);
    const after = body();
    expect((await checker.check({ ...input([]), body: after }, memory())).body).toBe(after);
  });

  it("writes the rows of a batch checked in place into a slot of the request's memory, given back with it", async () => {
    const slots = new SharedSlots(2, 4096);
    const checker = new BatchChecker(null, { offloadAbove: 1, inlineBelow: 0, windowMs: 1000 });
    const held = new RequestMemory(slots);
    const result = await checker.check({ ...input([]), body: body() }, held);
    const { rows, eventIds } = result.output as CheckedBatch;
    expect(rows.buffer).toBe(slots.memory);
    expect(eventIdOfRow(Buffer.from(rows).toString('utf8'))).toBe(eventIds[0]);
    expect(slots.available).toBe(1);
    const taken = held.body(100);
    expect(slots.available).toBe(0);
    held.release();
    expect(slots.available).toBe(2);
    // Given back once: a later release, or one of a view handed out again since, changes nothing.
    const again = slots.take(10)!;
    held.release();
    expect(slots.available).toBe(1);
    slots.give(taken);
    expect(slots.available).toBe(1);
    slots.give(again);
    expect(slots.available).toBe(2);
    // A batch that cannot be read writes no rows; its slot goes back with the request's memory.
    const unread = new RequestMemory(slots);
    expect((await checker.check(input('nope'), unread)).output.kind).toBe('invalid_request');
    unread.release();
    expect(slots.available).toBe(2);
  });

  it('checks every batch in place without a pool (INGEST_WORKER_THREADS=0)', async () => {
    const checker = new BatchChecker(null, { offloadAbove: 0, inlineBelow: -1, windowMs: 1 });
    for (let n = 0; n < 3; n += 1) {
      const own = body();
      expect((await checker.check({ ...input([]), body: own }, memory())).body).toBe(own);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  });
});
