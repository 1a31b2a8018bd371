import type { AnalysisJob } from '../../shared/redis.js';

/**
 * The log record of one accepted batch: its analysis job (connection, receipt time, new
 * eventIds, batch id) and its new rows as the ClickHouse insert takes them (TabSeparated).
 * `[u32 LE length of the job's JSON][job JSON][rows]`.
 */
export interface BatchRecord {
  job: AnalysisJob;
  rows: Buffer;
}

export function encodeBatchRecord(record: BatchRecord): Buffer {
  const job = Buffer.from(JSON.stringify(record.job));
  const head = Buffer.allocUnsafe(4);
  head.writeUInt32LE(job.length, 0);
  return Buffer.concat([head, job, record.rows]);
}

export function decodeBatchRecord(payload: Buffer): BatchRecord {
  const length = payload.readUInt32LE(0);
  const job = JSON.parse(payload.subarray(4, 4 + length).toString('utf8')) as AnalysisJob;
  return { job, rows: payload.subarray(4 + length) };
}
