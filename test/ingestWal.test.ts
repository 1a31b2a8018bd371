import { readdirSync, readFileSync, statSync, writeFileSync, appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { frame, FRAME_HEADER_BYTES, readFrame } from '../ingest/log/recordFrame.js';
import { WriteAheadLog, type LogPosition } from '../ingest/log/writeAheadLog.js';
import { newLogDir, removeLogDirs } from './helpers/logDirs.js';

// The ingest edge's write-ahead log (issue 17) on a real filesystem: group fdatasync, segments,
// reading back, the repair of a torn tail and of corruption, checkpoints.

const newDir = () => newLogDir('wal-test-');
afterEach(removeLogDirs);

const record = (i: number, bytes = 100) => Buffer.from(`${String(i).padStart(8, '0')}:${'x'.repeat(bytes - 9)}`);

async function readAll(log: WriteAheadLog, from: LogPosition = { segment: 0, offset: 0 }, maxBytes = 4096): Promise<string[]> {
  const out: string[] = [];
  let at = from;
  for (;;) {
    const { records, end } = await log.read(at, maxBytes);
    if (records.length === 0) return out;
    out.push(...records.map((r) => r.toString()));
    at = end;
  }
}

const segmentsOf = (dir: string) =>
  readdirSync(dir)
    .filter((name) => name.endsWith('.wal'))
    .sort();

describe('write-ahead log', () => {
  it('frames a record with its length and CRC, and reads back only an intact one', () => {
    const framed = frame(Buffer.from('hello'));
    expect(framed.readUInt32LE(0)).toBe(5);
    expect(readFrame(framed, 0)).toMatchObject({ kind: 'record', next: FRAME_HEADER_BYTES + 5 });
    expect(readFrame(framed.subarray(0, 10), 0)).toMatchObject({ kind: 'corrupt', reason: 'torn record' });
    expect(readFrame(framed.subarray(0, 3), 0)).toMatchObject({ kind: 'corrupt', reason: 'torn record header' });
    const flipped = Buffer.from(framed);
    flipped[FRAME_HEADER_BYTES + 1] ^= 1;
    expect(readFrame(flipped, 0)).toMatchObject({ kind: 'corrupt', reason: 'CRC mismatch' });
    expect(readFrame(framed, framed.length)).toEqual({ kind: 'end' });
  });

  it('makes concurrent appends durable together, in order, across segments, and reads them back after reopening', async () => {
    const dir = newDir();
    const log = await WriteAheadLog.open({ dir, segmentBytes: 10_000 });
    const ends = await Promise.all(Array.from({ length: 500 }, (_, i) => log.append(record(i))));
    // One fdatasync serves every append that arrived while the previous one ran.
    expect(log.stats.records).toBe(500);
    expect(log.stats.syncs).toBeLessThan(50);
    // Each append resolves with the position after its own record; positions increase.
    for (let i = 1; i < ends.length; i++)
      expect(ends[i].segment * 1e9 + ends[i].offset).toBeGreaterThan(ends[i - 1].segment * 1e9 + ends[i - 1].offset);
    expect(segmentsOf(dir).length).toBeGreaterThan(4);
    for (const name of segmentsOf(dir)) expect(statSync(join(dir, name)).size).toBeLessThanOrEqual(10_000);
    expect(log.durable).toEqual(ends[ends.length - 1]);
    expect(log.bytesFrom({ segment: 0, offset: 0 })).toBe(500 * (100 + FRAME_HEADER_BYTES));
    await log.close();

    const reopened = await WriteAheadLog.open({
      dir,
      segmentBytes: 10_000,
      onRepair: () => {
        throw new Error('nothing to repair');
      },
    });
    expect(await readAll(reopened)).toEqual(Array.from({ length: 500 }, (_, i) => record(i).toString()));
    // A record larger than the read size still comes back, alone.
    expect((await reopened.read({ segment: 0, offset: 0 }, 10)).records).toHaveLength(1);
    await reopened.append(record(500));
    expect((await readAll(reopened)).at(-1)).toBe(record(500).toString());
    await reopened.close();
  });

  it('cuts a torn tail after a crash, keeps every intact record, and appends after it', async () => {
    const dir = newDir();
    const log = await WriteAheadLog.open({ dir, segmentBytes: 1_000_000 });
    for (let i = 0; i < 10; i++) await log.append(record(i));
    await log.close();
    const [segment] = segmentsOf(dir);
    const intact = statSync(join(dir, segment)).size;
    // A crash in the middle of the next write: half of a frame reached the disk.
    appendFileSync(join(dir, segment), frame(record(10)).subarray(0, 60));

    const repairs: unknown[] = [];
    const reopened = await WriteAheadLog.open({ dir, segmentBytes: 1_000_000, onRepair: (repair) => repairs.push(repair) });
    expect(repairs).toEqual([{ segment: 0, offset: intact, reason: 'torn record', segmentsRemoved: 0 }]);
    expect(statSync(join(dir, segment)).size).toBe(intact);
    await reopened.append(record(11));
    expect(await readAll(reopened)).toEqual([...Array.from({ length: 10 }, (_, i) => record(i).toString()), record(11).toString()]);
    await reopened.close();
  });

  it('cuts at a corrupt record and removes every later segment', async () => {
    const dir = newDir();
    const log = await WriteAheadLog.open({ dir, segmentBytes: 1_000 });
    for (let i = 0; i < 40; i++) await log.append(record(i));
    await log.close();
    const segments = segmentsOf(dir);
    expect(segments.length).toBeGreaterThan(3);
    // Flip one payload byte of the second record of the second segment.
    const path = join(dir, segments[1]);
    const data = readFileSync(path);
    const second = FRAME_HEADER_BYTES + 100;
    data[second + FRAME_HEADER_BYTES + 3] ^= 0xff;
    writeFileSync(path, data);

    const repairs: { segment: number; offset: number; reason: string; segmentsRemoved: number }[] = [];
    const reopened = await WriteAheadLog.open({ dir, segmentBytes: 1_000, onRepair: (repair) => repairs.push(repair) });
    expect(repairs).toEqual([{ segment: 1, offset: second, reason: 'CRC mismatch', segmentsRemoved: segments.length - 2 }]);
    expect(segmentsOf(dir)).toEqual(segments.slice(0, 2));
    const perSegment = Math.floor(1_000 / (100 + FRAME_HEADER_BYTES));
    expect(await readAll(reopened)).toEqual(Array.from({ length: perSegment + 1 }, (_, i) => record(i).toString()));
    await reopened.close();
  });

  it('keeps a checkpoint and deletes the segments wholly before it', async () => {
    const dir = newDir();
    const log = await WriteAheadLog.open({ dir, segmentBytes: 1_000 });
    const ends: LogPosition[] = [];
    for (let i = 0; i < 30; i++) ends.push(await log.append(record(i)));
    expect(await log.loadCheckpoint()).toBeNull();
    const shipped = ends[19];
    await log.saveCheckpoint(shipped);
    expect(await log.loadCheckpoint()).toEqual(shipped);
    expect(segmentsOf(dir)[0]).toBe(`${String(shipped.segment).padStart(8, '0')}.wal`);
    expect(await readAll(log, shipped)).toEqual(Array.from({ length: 10 }, (_, i) => record(20 + i).toString()));
    expect(log.bytesFrom(shipped)).toBe(10 * (100 + FRAME_HEADER_BYTES));
    await log.close();
    const reopened = await WriteAheadLog.open({ dir, segmentBytes: 1_000 });
    expect(await reopened.loadCheckpoint()).toEqual(shipped);
    expect(await readAll(reopened, shipped)).toHaveLength(10);
    await reopened.close();
  });
});
