import type { JobGroup } from '../../shared/analysis/jobGroups.js';
import type { CheckedBatch } from './checkBatch.js';
import { asBuffer } from '../offload/bytes.js';
import { copyBytes } from '../offload/sharedSlots.js';

/**
 * The rows of the items admission found new: all of them when there was no duplicate (the
 * usual case, no copy), else the byte ranges of the new ones. Null when nothing is new.
 */
export function newRows(batch: CheckedBatch, duplicate: readonly boolean[]): Buffer | null {
  const rows = asBuffer(batch.rows);
  if (!duplicate.includes(true)) return batch.eventIds.length > 0 ? rows : null;
  const pieces: Buffer[] = [];
  let length = 0;
  for (let i = 0; i < batch.eventIds.length; i += 1) {
    if (duplicate[i]) continue;
    pieces.push(rows.subarray(i === 0 ? 0 : batch.rowEnds[i - 1], batch.rowEnds[i]));
    length += pieces[pieces.length - 1].length;
  }
  if (pieces.length === 0) return null;
  // Not Buffer.concat: the rows may lie in shared memory (see copyBytes).
  const kept = Buffer.allocUnsafe(length);
  let offset = 0;
  for (const piece of pieces) offset += copyBytes(piece, kept, offset);
  return kept;
}

/**
 * The analysis groups of the items admission found new (shared/analysis/jobGroups.ts), each with
 * the indexes of its items among the new eventIds (the job's `eventIds`, in item order): what the
 * analyzer groups without reading the rows back. Groups left without a new item are dropped.
 */
export function newGroups(batch: CheckedBatch, duplicate: readonly boolean[]): JobGroup[] {
  const groups: JobGroup[] = batch.groupKeys.map((key) => ({ ...key, items: [] }));
  let next = 0;
  for (let i = 0; i < batch.eventIds.length; i += 1) {
    if (duplicate[i]) continue;
    groups[batch.itemGroups[i]].items.push(next);
    next += 1;
  }
  return groups.filter((group) => group.items.length > 0);
}
