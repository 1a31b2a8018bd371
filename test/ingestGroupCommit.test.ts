import { describe, expect, it } from 'vitest';
import { GroupCommitWriter, InsertFailedError, type GroupCommitOptions } from '../ingest/groupCommit.js';

// The group-commit writer with a recording insert function in place of ClickHouse: these tests
// pin down when inserts start, what they carry and how failures reach the writers.

interface Call {
  body: string;
  /** The buffer the insert was given (the writer reuses those of successful inserts). */
  bytes: Buffer;
  rows: number;
  signal: AbortSignal;
  startedAt: number;
  finish(error?: Error): void;
}

function recorder() {
  const calls: Call[] = [];
  let auto = true;
  const insert = (body: Buffer, rows: number, signal: AbortSignal) => new Promise<void>((resolve, reject) => {
    const call: Call = { body: body.toString(), bytes: body, rows, signal, startedAt: Date.now(), finish: (error) => (error ? reject(error) : resolve()) };
    calls.push(call);
    signal.addEventListener('abort', () => reject(new Error('aborted')));
    if (auto) setTimeout(() => call.finish(), 5);
  });
  return { calls, insert, manual: () => { auto = false; } };
}

const options = (patch: Partial<GroupCommitOptions> = {}): GroupCommitOptions => ({
  maxRows: 100, maxWaitMs: 100, maxInFlight: 1, insertTimeoutMs: 1_000, maxQueuedRows: 1_000, ...patch,
});

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

describe('GroupCommitWriter', () => {
  it('writes a lone batch at once and resolves after its insert', async () => {
    const { calls, insert } = recorder();
    const writer = new GroupCommitWriter(insert, options());
    const started = Date.now();
    await writer.write(Buffer.from('a\n'), 1);
    expect(Date.now() - started).toBeLessThan(50);
    expect(calls.map((call) => [call.body, call.rows])).toEqual([['a\n', 1]]);
  });

  it('combines the writes that arrive within maxWaitMs of the previous flush into one insert', async () => {
    const { calls, insert } = recorder();
    const writer = new GroupCommitWriter(insert, options({ maxInFlight: 2 }));
    await writer.write(Buffer.from('a\n'), 1);
    const writes = [writer.write(Buffer.from('b\n'), 1), writer.write(Buffer.from('c\nd\n'), 2), writer.write(Buffer.from('e\n'), 1)];
    await Promise.all(writes);
    expect(calls.map((call) => call.body)).toEqual(['a\n', 'b\nc\nd\ne\n']);
    expect(calls[1].rows).toBe(4);
    expect(calls[1].startedAt - calls[0].startedAt).toBeGreaterThanOrEqual(95);
    expect(calls[1].startedAt - calls[0].startedAt).toBeLessThan(200);
  });

  it('flushes as soon as maxRows rows wait, and never puts more than maxRows in one insert', async () => {
    const { calls, insert } = recorder();
    const writer = new GroupCommitWriter(insert, options({ maxRows: 3, maxWaitMs: 10_000, maxInFlight: 4 }));
    await writer.write(Buffer.from('a\n'), 1);
    const started = Date.now();
    await Promise.all([writer.write(Buffer.from('b\n'), 1), writer.write(Buffer.from('c\n'), 1), writer.write(Buffer.from('d\n'), 1)]);
    expect(Date.now() - started).toBeLessThan(100);
    expect(calls.map((call) => call.rows)).toEqual([1, 3]);
    void writer.write(Buffer.from('e\ne\n'), 2);
    void writer.write(Buffer.from('f\nf\n'), 2);
    await sleep(20);
    expect(calls.map((call) => call.rows)).toEqual([1, 3, 2]);
    await writer.drain();
    expect(calls.map((call) => call.rows)).toEqual([1, 3, 2, 2]);
  });

  it('keeps at most maxInFlight inserts running; the queue grows meanwhile and goes in the next insert', async () => {
    const { calls, insert, manual } = recorder();
    manual();
    const writer = new GroupCommitWriter(insert, options({ maxWaitMs: 0, maxInFlight: 1 }));
    const first = writer.write(Buffer.from('a\n'), 1);
    const rest = [writer.write(Buffer.from('b\n'), 1), writer.write(Buffer.from('c\n'), 1)];
    await sleep(20);
    expect(calls).toHaveLength(1);
    expect(writer.pendingRows).toBe(2);
    calls[0].finish();
    await first;
    await sleep(5);
    expect(calls).toHaveLength(2);
    expect(calls[1].body).toBe('b\nc\n');
    calls[1].finish();
    await Promise.all(rest);
  });

  it('rejects exactly the writes of a failed insert', async () => {
    const { calls, insert, manual } = recorder();
    manual();
    const writer = new GroupCommitWriter(insert, options({ maxWaitMs: 0, maxInFlight: 2 }));
    const failing = writer.write(Buffer.from('a\n'), 1);
    const succeeding = writer.write(Buffer.from('b\n'), 1);
    await sleep(5);
    expect(calls).toHaveLength(2);
    calls[0].finish(new Error('clickhouse down'));
    calls[1].finish();
    await expect(failing).rejects.toBeInstanceOf(InsertFailedError);
    await expect(succeeding).resolves.toBeUndefined();
  });

  it('reuses the body buffer of a successful insert, never that of a failed one', async () => {
    const { calls, insert, manual } = recorder();
    manual();
    const writer = new GroupCommitWriter(insert, options({ maxWaitMs: 0, maxInFlight: 1 }));
    const failing = writer.write(Buffer.from('a\n'), 1);
    await sleep(5);
    calls[0].finish(new Error('clickhouse down'));
    await expect(failing).rejects.toBeInstanceOf(InsertFailedError);

    const second = writer.write(Buffer.from('bbbbbb\n'), 1);
    await sleep(5);
    expect(calls[1].bytes.buffer).not.toBe(calls[0].bytes.buffer);
    calls[1].finish();
    await second;

    const third = writer.write(Buffer.from('c\nd\n'), 2);
    await sleep(5);
    expect(calls[2].bytes.buffer).toBe(calls[1].bytes.buffer);
    // Exactly this insert's bytes, nothing left over from the longer body before it.
    expect(calls[2].body).toBe('c\nd\n');
    calls[2].finish();
    await third;
  });
  it('aborts an insert after insertTimeoutMs and fails its writes', async () => {
    const { calls, insert, manual } = recorder();
    manual();
    const writer = new GroupCommitWriter(insert, options({ insertTimeoutMs: 100 }));
    const started = Date.now();
    await expect(writer.write(Buffer.from('a\n'), 1)).rejects.toBeInstanceOf(InsertFailedError);
    expect(calls[0].signal.aborted).toBe(true);
    expect(Date.now() - started).toBeGreaterThanOrEqual(90);
  });

  it('counts a hanging insert as failed at the timeout even when it ignores the signal', async () => {
    const hanging = () => new Promise<void>(() => undefined);
    const writer = new GroupCommitWriter(hanging, options({ insertTimeoutMs: 100 }));
    await expect(writer.write(Buffer.from('a\n'), 1)).rejects.toBeInstanceOf(InsertFailedError);
  });

  it('fails rows that wait for an insert slot beyond maxWaitMs + insertTimeoutMs (overload)', async () => {
    const calls: string[] = [];
    const hanging = (body: Buffer) => {
      calls.push(body.toString());
      return new Promise<void>(() => undefined);
    };
    const writer = new GroupCommitWriter(hanging, options({ maxRows: 1, maxWaitMs: 10, insertTimeoutMs: 100, maxInFlight: 1 }));
    const writes = [writer.write(Buffer.from('a\n'), 1), writer.write(Buffer.from('b\n'), 1), writer.write(Buffer.from('c\n'), 1)];
    const outcomes = await Promise.allSettled(writes);
    expect(outcomes.map((outcome) => (outcome.status === 'rejected' ? (outcome.reason as Error).message : 'ok'))).toEqual([
      'insert timed out', 'insert timed out', 'rows waited too long for an insert slot',
    ]);
    expect(calls).toEqual(['a\n', 'b\n']);
  });

  it('waits twice the recent insert duration between flushes, within minWaitMs and maxWaitMs', async () => {
    const { calls, insert, manual } = recorder();
    manual();
    const writer = new GroupCommitWriter(insert, options({ minWaitMs: 20, maxWaitMs: 1_000, maxInFlight: 2 }));
    expect(writer.waitMs()).toBe(20); // nothing measured yet
    const first = writer.write(Buffer.from('a\n'), 1);
    await sleep(150);
    calls[0].finish(); // an insert of about 150 ms
    await first;
    expect(writer.waitMs()).toBeGreaterThanOrEqual(290);
    expect(writer.waitMs()).toBeLessThan(400);
    const second = writer.write(Buffer.from('b\n'), 1);
    await sleep(100);
    expect(calls).toHaveLength(1); // would have gone after 20 ms with quick inserts
    await sleep(250);
    expect(calls).toHaveLength(2);
    calls[1].finish();
    await second;
    // Quick inserts bring the wait down again.
    const waitAfterSlow = writer.waitMs();
    for (let i = 0; i < 15; i += 1) {
      const sent = calls.length;
      const write = writer.write(Buffer.from('c\n'), 1);
      while (calls.length === sent) await sleep(2);
      calls.at(-1)!.finish();
      await write;
    }
    expect(writer.waitMs()).toBeLessThan(waitAfterSlow);
    expect(writer.waitMs()).toBe(20);

    const capped = new GroupCommitWriter(recorder().insert, options({ minWaitMs: 20, maxWaitMs: 50 }));
    expect(capped.waitMs()).toBe(20);
    const fixed = new GroupCommitWriter(recorder().insert, options({ maxWaitMs: 70 }));
    expect(fixed.waitMs()).toBe(70);
  });

  it('waits at least busyWaitMs while the machine is busy, and the adaptive wait again once it is not', async () => {
    const { calls, insert } = recorder();
    let busy = true;
    const writer = new GroupCommitWriter(insert, options({ minWaitMs: 20, maxWaitMs: 100, busyWaitMs: 300, isBusy: () => busy, maxInFlight: 2 }));
    expect(writer.waitMs()).toBe(300);
    await writer.write(Buffer.from('a\n'), 1);
    const second = writer.write(Buffer.from('b\n'), 1);
    await sleep(150);
    expect(calls).toHaveLength(1); // the adaptive wait would have sent it after 20 ms
    await second;
    expect(calls[1].startedAt - calls[0].startedAt).toBeGreaterThanOrEqual(295);
    busy = false;
    expect(writer.waitMs()).toBe(20);
    // Without isBusy, busyWaitMs alone changes nothing.
    expect(new GroupCommitWriter(insert, options({ minWaitMs: 20, maxWaitMs: 100, busyWaitMs: 300 })).waitMs()).toBe(20);
  });

  it('reports saturation once maxQueuedRows rows wait', async () => {
    const { insert, manual, calls } = recorder();
    manual();
    const writer = new GroupCommitWriter(insert, options({ maxQueuedRows: 3, maxWaitMs: 0, maxInFlight: 1 }));
    const writes = [writer.write(Buffer.from('a\n'), 1), writer.write(Buffer.from('b\nb\n'), 2)];
    await sleep(5);
    expect(writer.saturated()).toBe(false);
    writes.push(writer.write(Buffer.from('c\n'), 1));
    expect(writer.saturated()).toBe(true);
    calls[0].finish();
    await sleep(5);
    calls[1].finish();
    await Promise.all(writes);
    expect(writer.saturated()).toBe(false);
  });

  it('drains: flushes what waits without waiting for the timer and resolves when idle', async () => {
    const { calls, insert } = recorder();
    const writer = new GroupCommitWriter(insert, options({ maxWaitMs: 60_000 }));
    await writer.write(Buffer.from('a\n'), 1);
    const pending = writer.write(Buffer.from('b\n'), 1);
    await sleep(20);
    expect(calls).toHaveLength(1);
    const started = Date.now();
    await writer.drain();
    await pending;
    expect(Date.now() - started).toBeLessThan(100);
    expect(calls).toHaveLength(2);
  });
});
