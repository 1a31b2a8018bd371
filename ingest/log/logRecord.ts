import type { AnalysisJob } from '../../shared/redis.js';

/**
 * The log record of one accepted batch: its account (its admission keys carry the account's
 * hash tag), its analysis job (connection, receipt time, new eventIds, batch id, and the new
 * items' analysis groups) and its new rows as the ClickHouse insert takes them (TabSeparated).
 * `[u32 LE length of the head][head][rows]`.
 *
 * The head is text, one member a line: account, connection, workspace, mode, batch id, receipt
 * time (ms), the eventIds joined by `,`, the groups (shared/analysis/jobGroups.ts). None of them
 * can hold a line feed or a comma: ids are ours, the mode is a word, eventIds match the envelope's
 * pattern and the groups' text has neither. Text rather than JSON: the edge writes a head per
 * request on its event loop, and JSON.stringify of the eventIds cost several times more.
 * Heads written before this were JSON objects (they start with `{`), some without groups: such a
 * job ships without them, and the analyzer reads that batch's rows back instead.
 */
export interface BatchRecord {
  accountId: string;
  job: AnalysisJob;
  rows: Buffer;
}

const JSON_HEAD = 0x7b; // `{`

/** The record's payload in pieces (the log writes them as they are: the rows are not copied). */
export function encodeBatchRecord(record: BatchRecord): Buffer[] {
  const { job } = record;
  const head = Buffer.from(
    `${record.accountId}\n${job.connectionId}\n${job.workspaceId}\n${job.mode}\n${job.batchId}\n${job.receivedAtMs}\n`
      + `${job.eventIds.join(',')}\n${job.groups ?? ''}`,
    'utf8',
  );
  const length = Buffer.allocUnsafe(4);
  length.writeUInt32LE(head.length, 0);
  return [length, head, record.rows];
}

export function decodeBatchRecord(payload: Buffer): BatchRecord {
  const length = payload.readUInt32LE(0);
  const text = payload.toString('utf8', 4, 4 + length);
  const rows = payload.subarray(4 + length);
  if (payload[4] === JSON_HEAD) {
    const { accountId, ...job } = JSON.parse(text) as AnalysisJob & { accountId: string };
    return { accountId, job, rows };
  }
  const [accountId, connectionId, workspaceId, mode, batchId, receivedAtMs, eventIds, groups] = text.split('\n');
  return {
    accountId,
    job: {
      connectionId,
      workspaceId,
      mode,
      batchId,
      receivedAtMs: Number(receivedAtMs),
      eventIds: eventIds === '' ? [] : eventIds.split(','),
      ...(groups === undefined || groups === '' ? {} : { groups }),
    },
    rows,
  };
}
