import { Readable } from 'node:stream';
import type { ClickHouseClient } from '@clickhouse/client';
import type { ObservationEnvelope } from '../../shared/envelope/types.js';
import type { IngestCredential } from './credential.js';

/**
 * The ClickHouse `observations` table (migrations/clickhouse/0001_observations.sql, rebuilt by
 * 0002_observation_binding.sql): its row, serialised once per accepted envelope on the request
 * path, and its insert. Rows are TabSeparated: cheaper to build here and several times cheaper
 * for ClickHouse to parse than JSONEachRow (both run on the same cores under load; see
 * bench/RESULTS.md).
 */

/** The credential's members that every row of a batch carries. */
export type RowBinding = Pick<
  IngestCredential,
  | 'connectionId'
  | 'workspaceId'
  | 'accountId'
  | 'integrationId'
  | 'integrationKey'
  | 'tenantId'
  | 'environmentId'
  | 'mode'
  | 'direction'
  | 'protocol'
>;

export interface ObservationBatchContext {
  credential: RowBinding;
  batchId: string;
  receivedAtMs: number;
  /** `YYYY-MM-DD` (UTC) of receivedAtMs. */
  receivedDate: string;
}

/**
 * The members joined, in this order, into the `binding` column; the table reads each back as
 * the ALIAS column of the same name (0002_observation_binding.sql). Accepted items' direction
 * and protocol always equal the binding's (ingest/check/parseItems.ts), so they are the batch's too.
 */
export const BINDING_MEMBERS = [
  ['workspace_id', 'workspaceId'],
  ['account_id', 'accountId'],
  ['integration_id', 'integrationId'],
  ['integration_key', 'integrationKey'],
  ['tenant_id', 'tenantId'],
  ['environment_id', 'environmentId'],
  ['mode', 'mode'],
  ['direction', 'direction'],
  ['protocol', 'protocol'],
] as const satisfies readonly (readonly [string, keyof RowBinding])[];

const BINDING_SEPARATOR = '|';

/** Columns the batch shares (written once per batch, see batchRowPrefix), in row order. */
const BATCH_COLUMNS = ['connection_id', 'batch_id', 'binding', 'received_at_ms', 'received_date'] as const;

/** Columns of each envelope (see observationRow), in row order. */
const ENVELOPE_COLUMNS = [
  'event_id',
  'envelope_version',
  'event_type',
  'method',
  'route_template',
  'payload_location',
  'status_code',
  'duration_ms',
  'attempt',
  'occurred_at_ms',
  'observed_fingerprint',
  'schema_fingerprint',
  'schema_inspected',
  'schema_shape',
  'redaction_policy_version',
  'source_event_id_hash',
  'idempotency_key_hash',
  'hash_namespace',
  'outcome_accepted',
  'business_object_type',
  'business_object_id_hash',
] as const;

/** Every column a row carries, in the order its values are written. */
export const OBSERVATION_COLUMNS: readonly string[] = [...BATCH_COLUMNS, ...ENVELOPE_COLUMNS];

/** The table's ALIAS columns: computed when read, never written, and not part of `SELECT *`. */
export const OBSERVATION_ALIAS_COLUMNS: readonly string[] = [...BINDING_MEMBERS.map(([column]) => column), 'operation_key'];

const INSERT_QUERY = `INSERT INTO observations (${OBSERVATION_COLUMNS.join(', ')}) FORMAT TabSeparated`;

// TabSeparated escapes backslash, tab, line feed and carriage return (plus NUL, backspace and
// form feed, which ClickHouse also reads back); nothing else needs escaping.
const TSV_SPECIAL = /[\\\t\n\r\0\b\f]/;
const TSV_SPECIAL_ALL = /[\\\t\n\r\0\b\f]/g;
const TSV_ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r', '\0': '\\0', '\b': '\\b', '\f': '\\f' };

/** A string as one TabSeparated field. Most values hold nothing to escape and are returned as they are. */
export function tsvField(value: string): string {
  return TSV_SPECIAL.test(value) ? value.replace(TSV_SPECIAL_ALL, (char) => TSV_ESCAPES[char]) : value;
}

/**
 * tsvField for a value that holds no control character: a validated token (printable ASCII,
 * 03 envelope table) or JSON text (which escapes them). Only a backslash needs escaping there,
 * and looking for one character is several times cheaper than the pattern, for 9 fields a row.
 */
export function tsvToken(value: string): string {
  return value.indexOf('\\') === -1 ? value : value.replace(BACKSLASHES, '\\\\');
}

const BACKSLASHES = /\\/g;

/**
 * The values every row of a batch shares, serialised once per batch (with the tab that follows
 * them). Placeholders are replaced by the credential's tenant and environment, and the mode comes
 * from the stored connection only (03 Authentication/Ingestion). A binding member holding the
 * separator (never the case for ids and fixed words) would shift every member after it: refused.
 */
export function batchRowPrefix(context: ObservationBatchContext): string {
  const { credential } = context;
  const binding = BINDING_MEMBERS.map(([, member]) => credential[member]);
  if (binding.some((value) => value.includes(BINDING_SEPARATOR))) throw new Error('a binding member holds the binding separator');
  return (
    `${tsvField(credential.connectionId)}\t${tsvField(context.batchId)}\t${tsvField(binding.join(BINDING_SEPARATOR))}\t`
    + `${context.receivedAtMs}\t${context.receivedDate}\t`
  );
}

/**
 * One TabSeparated line (with its newline) of an accepted envelope, after the batch prefix.
 * Validated members are printable ASCII without spaces (03 envelope table), and the shape is
 * JSON text, so only those that may hold a backslash go through tsvToken. `shape` is the
 * schemaShape's text from validation (shared/envelope/shapeText.ts). (`operation_key`,
 * 00-decisions §4 with the exact observed status as its selector, is an ALIAS of the table.)
 */
export function observationRow(prefix: string, envelope: ObservationEnvelope, occurredAtMs: number, shape: string): string {
  const { transport, payload, correlation, outcome } = envelope;
  return (
    `${prefix}${envelope.eventId}\t${envelope.envelopeVersion}\t${tsvToken(envelope.eventType)}\t`
    + `${transport.method}\t${tsvToken(transport.routeTemplate)}\t${transport.payloadLocation}\t${transport.statusCode}\t${transport.durationMs}\t`
    + `${transport.attempt}\t${occurredAtMs}\t${envelope.contract.observedFingerprint ?? ''}\t${payload.schemaFingerprint}\t`
    + `${payload.schemaInspected === false ? 0 : 1}\t${tsvToken(shape)}\t${tsvToken(payload.redactionPolicyVersion)}\t`
    + `${tsvToken(correlation?.sourceEventIdHash ?? '')}\t${tsvToken(correlation?.idempotencyKeyHash ?? '')}\t`
    + `${tsvToken(correlation?.hashNamespace ?? '')}\t${outcome.accepted ? 1 : 0}\t${tsvToken(outcome.businessObjectType ?? '')}\t`
    + `${tsvToken(outcome.businessObjectIdHash ?? '')}\n`
  );
}

/**
 * What an insert's body is sent in: pieces joined up to about this size. Under glibc's mmap
 * threshold (128 KiB), so that a chunk's memory comes from the heap already mapped: 1 MiB chunks
 * were new mappings, and faulting their pages in cost more than the copy.
 */
export const INSERT_CHUNK_BYTES = 64 * 1024;

/**
 * The pieces of an insert's body joined into chunks of about INSERT_CHUNK_BYTES, one at a time.
 * Each chunk the stream yields is one write to the socket (a `writev` with its chunked-encoding
 * frame), and a batch's rows are about 20 KB: streamed piece by piece, an insert of thousands of
 * batches cost the edge a system call per batch and woke ClickHouse's reader as often. Copying
 * the pieces costs less than those calls, and only one chunk is held at a time.
 */
export function* insertChunks(pieces: readonly Buffer[]): Generator<Buffer> {
  for (let from = 0; from < pieces.length; ) {
    let to = from;
    let bytes = 0;
    while (to < pieces.length && (to === from || bytes + pieces[to].length <= INSERT_CHUNK_BYTES)) bytes += pieces[to++].length;
    yield to - from === 1 ? pieces[from] : Buffer.concat(pieces.slice(from, to), bytes);
    from = to;
  }
}

/**
 * Sends pre-serialised TabSeparated lines in one INSERT under `queryId` (which lets a later
 * check see whether it still runs). Resolves once ClickHouse answered the insert as done (the
 * rows are committed), rejects on any failure or on `signal`.
 */
export async function insertObservationRows(
  client: ClickHouseClient,
  body: Buffer | readonly Buffer[],
  signal: AbortSignal,
): Promise<void> {
  const result = await client.exec({
    query: INSERT_QUERY,
    values: Readable.from(insertChunks(Buffer.isBuffer(body) ? [body] : body)),
    abort_signal: signal,
  });
  result.stream.resume();
  await new Promise<void>((resolve, reject) => {
    result.stream.once('end', resolve);
    result.stream.once('error', reject);
  });
}
