import type { AnalysisJob } from '../../shared/redis.js';

/**
 * The log record of one accepted batch: its account (its admission keys carry the account's
 * hash tag), its analysis job (connection, receipt time, new eventIds, batch id, and the new
 * items' analysis groups) and its new rows as the ClickHouse insert takes them (TabSeparated).
 * A head written before jobs carried groups has none: its job ships without them, and the
 * analyzer reads that batch's rows back instead (shared/analysis/jobGroups.ts).
 * `[u32 LE length of the head's JSON][head JSON: the job and accountId][rows]`.
 */
export interface BatchRecord {
  accountId: string;
  job: AnalysisJob;
  rows: Buffer;
}

/** The record's payload in pieces (the log writes them as they are: the rows are not copied). */
export function encodeBatchRecord(record: BatchRecord): Buffer[] {
  const head = Buffer.from(JSON.stringify({ ...record.job, accountId: record.accountId }));
  const length = Buffer.allocUnsafe(4);
  length.writeUInt32LE(head.length, 0);
  return [length, head, record.rows];
}

export function decodeBatchRecord(payload: Buffer): BatchRecord {
  const length = payload.readUInt32LE(0);
  const { accountId, ...job } = JSON.parse(payload.subarray(4, 4 + length).toString('utf8')) as AnalysisJob & { accountId: string };
  return { accountId, job, rows: payload.subarray(4 + length) };
}
