import { isAppError } from '../../shared/errors/index.js';
import { checkItem, parseBatch, type ItemBinding } from './parseItems.js';
import { asBuffer } from '../offload/bytes.js';
import { BatchShapeError } from '../common/edgeHttp.js';
import { batchRowPrefix, observationRow, type RowBinding } from '../common/observationsTable.js';
import { jobGroupKey } from '../../shared/analysis/jobGroups.js';
import { shapeHash } from './shapeHash.js';
import { eventIdDigests, type EventIdDigests } from '../common/eventIdDigest.js';

/**
 * The CPU-bound middle of the pipeline — parse, validate, bind and serialise one batch — as a
 * pure function of plain data, so that it can run on a worker thread (checkWorker.ts)
 * while the edge's own thread does the I/O. Everything here depends only on the request and the
 * credential's binding, never on Redis: the duplicates are known only after admission, so a row
 * is built for every valid item and the edge drops the duplicates' rows by their byte ranges.
 */

/** The credential's non-secret members the checks and the rows need (the HMAC key never leaves the edge thread). */
export type BatchBinding = ItemBinding & RowBinding;

export interface BatchCheckInput {
  body: Uint8Array;
  contentType: string | undefined;
  binding: BatchBinding;
  batchId: string;
  receivedAtMs: number;
}

export type BatchCheckOutput =
  /** 400 `invalid_request`: unparsable JSON, or a body not declared as JSON. */
  | { kind: 'invalid_request' }
  /** 400 with the literal `expected { envelopes: [...] }`. */
  | { kind: 'batch_shape' }
  | CheckedBatch;

export interface CheckedBatch {
  kind: 'checked';
  itemCount: number;
  rejected: number;
  /** eventIds of the valid items, in item order (what admission de-duplicates). */
  eventIds: string[];
  /**
   * Their de-duplication digests (common/eventIdDigest.ts), made here rather than on the edge
   * thread, which admission keeps busy enough.
   */
  digests: EventIdDigests;
  /** TabSeparated rows of the valid items, in the order of `eventIds`. */
  rows: Uint8Array;
  /** rowEnds[i]: the byte offset in `rows` where the row of eventIds[i] ends. */
  rowEnds: number[];
  /**
   * The keys (jobGroupKey text) of the valid items' analysis groups (shared/analysis/jobGroups.ts):
   * itemGroups[i] is the index here of the group of eventIds[i]. The job's groups are made of
   * the new items only, once admission has told the duplicates (newRows.ts newGroups).
   */
  groupKeys: string[];
  itemGroups: number[];
  /** The JSON text of the response's `results` array (it does not depend on admission). */
  resultsJson: string;
}

/**
 * `into`: where to write the rows when they fit (a shared slot, ingest/offload/sharedSlots.ts); the
 * returned `rows` are then a view of its first bytes. Otherwise they get memory of their own.
 */
export function checkBatch(input: BatchCheckInput, into?: Buffer): BatchCheckOutput {
  let items: unknown[];
  try {
    items = parseBatch(input.contentType, asBuffer(input.body));
  } catch (error) {
    if (error instanceof BatchShapeError) return { kind: 'batch_shape' };
    if (isAppError(error)) return { kind: 'invalid_request' };
    throw error;
  }
  const prefix = batchRowPrefix({
    credential: input.binding,
    batchId: input.batchId,
    receivedAtMs: input.receivedAtMs,
    receivedDate: new Date(input.receivedAtMs).toISOString().slice(0, 10),
  });
  // The JSON of each item's result: { index, accepted: true, eventId } or { index, accepted: false, issues }.
  const results: string[] = [];
  const eventIds: string[] = [];
  const lines: string[] = [];
  const groupKeys: string[] = [];
  const groupIndexes = new Map<string, number>();
  const itemGroups: number[] = [];
  let rejected = 0;
  for (let index = 0; index < items.length; index += 1) {
    const check = checkItem(items[index], input.binding);
    if (!check.valid) {
      rejected += 1;
      results.push(JSON.stringify({ index, accepted: false, issues: check.issues }));
      continue;
    }
    const { envelope } = check;
    eventIds.push(envelope.eventId);
    const { shape } = check;
    lines.push(observationRow(prefix, envelope, check.occurredAtMs, shape));
    const { transport } = envelope;
    const key = jobGroupKey({
      method: transport.method,
      routeTemplate: transport.routeTemplate,
      payloadLocation: transport.payloadLocation,
      statusCode: transport.statusCode,
      // As the row's schema_inspected: only an explicit false is 0.
      schemaInspected: envelope.payload.schemaInspected !== false,
      shapeHash: shapeHash(shape),
    });
    let group = groupIndexes.get(key);
    if (group === undefined) {
      group = groupKeys.length;
      groupKeys.push(key);
      groupIndexes.set(key, group);
    }
    itemGroups.push(group);
    // A valid eventId matches ^evt_[A-Za-z0-9._:-]{1,124}$: nothing in it needs JSON escaping.
    results.push(`{"index":${index},"accepted":true,"eventId":"${envelope.eventId}"}`);
  }
  const text = lines.join('');
  const rows = writeRows(text, into);
  // Byte offsets equal string offsets unless a row holds a non-ASCII character (a shape's field name).
  const ascii = rows.length === text.length;
  const rowEnds: number[] = [];
  let end = 0;
  for (const line of lines) {
    end += ascii ? line.length : Buffer.byteLength(line, 'utf8');
    rowEnds.push(end);
  }
  return {
    kind: 'checked',
    itemCount: items.length,
    rejected,
    eventIds,
    digests: eventIdDigests(eventIds),
    rows,
    rowEnds,
    groupKeys,
    itemGroups,
    resultsJson: `[${results.join(',')}]`,
  };
}

/** True when checkBatch wrote the rows into `into` (they are then a view of its first bytes). */
export const rowsWrittenInto = (output: BatchCheckOutput, into: Uint8Array): output is CheckedBatch =>
  output.kind === 'checked' && output.rows.buffer === into.buffer && output.rows.byteOffset === into.byteOffset;

/** The UTF-8 bytes of `text`: at the start of `into` when they fit there, else in a new buffer. */
function writeRows(text: string, into: Buffer | undefined): Buffer {
  if (into !== undefined && text.length <= into.length) {
    const written = into.write(text, 'utf8');
    // A write that ran out of room stops less than 4 bytes (one character) short of the end.
    if (written < into.length - 3 || written === Buffer.byteLength(text, 'utf8')) return into.subarray(0, written);
  }
  return Buffer.from(text, 'utf8');
}
