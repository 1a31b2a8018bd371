import type { EncodedJobGroups } from '../../shared/analysis/jobGroups.js';
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
 * The analysis groups of the items admission found new, as the job carries them
 * (shared/analysis/jobGroups.ts EncodedJobGroups): each group's key, then the indexes of its
 * items among the new eventIds (the job's `eventIds`, in item order). Groups left without a new
 * item are left out.
 */
export function newGroups(batch: CheckedBatch, duplicate: readonly boolean[]): EncodedJobGroups {
  const items: string[] = new Array(batch.groupKeys.length).fill('');
  let next = 0;
  for (let i = 0; i < batch.eventIds.length; i += 1) {
    if (duplicate[i]) continue;
    const group = batch.itemGroups[i];
    items[group] = items[group] === '' ? String(next) : `${items[group]},${next}`;
    next += 1;
  }
  let text = '';
  for (let group = 0; group < items.length; group += 1) {
    if (items[group] === '') continue;
    text += `${text === '' ? '' : ' '}${batch.groupKeys[group]} ${items[group]}`;
  }
  return text;
}
