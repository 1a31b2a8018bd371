import { Readable } from 'node:stream';
import type { ClickHouseClient } from '@clickhouse/client';
import type { ObservationEnvelope, SchemaShape } from '../shared/envelope/types.js';
import type { IngestCredential } from './credentials.js';

/**
 * The ClickHouse `observations` table (migrations/clickhouse/0001_observations.sql): its row,
 * serialised once per accepted envelope on the request path, and its insert.
 */

export interface ObservationBatchContext {
  credential: IngestCredential;
  batchId: string;
  receivedAtMs: number;
  /** `YYYY-MM-DD` (UTC) of receivedAtMs. */
  receivedDate: string;
}

const q = JSON.stringify;

/** Characters that JSON escapes (quote, backslash, controls, lone surrogate halves). */
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;

/**
 * The JSON text of a schemaShape tree, already escaped for use inside a JSON string, in one
 * pass: the same as `JSON.stringify(JSON.stringify(shape)).slice(1, -1)` without building and
 * re-escaping the intermediate text (rows are serialised on the request path).
 */
export function escapedShapeJson(node: SchemaShape): string {
  let out = `{\\"kind\\":\\"${node.kind}\\"`;
  if (node.kind === 'object') {
    out += ',\\"fields\\":{';
    let first = true;
    for (const name in node.fields) {
      const key = NEEDS_ESCAPE.test(name) ? q(q(name)).slice(1, -1) : `\\"${name}\\"`;
      out += `${first ? '' : ','}${key}:${escapedShapeJson(node.fields[name])}`;
      first = false;
    }
    out += '}';
  } else if (node.kind === 'array' && node.items !== undefined) {
    out += `,\\"items\\":${escapedShapeJson(node.items)}`;
  }
  return `${out}}`;
}

/**
 * The members every row of a batch shares, serialised once per batch. Placeholders are replaced
 * by the credential's tenant and environment, and the mode comes from the stored connection only
 * (03 Authentication/Ingestion). JSONEachRow does not care about member order.
 */
export function batchRowPrefix(context: ObservationBatchContext): string {
  const { credential } = context;
  return `{"connection_id":${q(credential.connectionId)},"batch_id":${q(context.batchId)},`
    + `"workspace_id":${q(credential.workspaceId)},"account_id":${q(credential.accountId)},"integration_id":${q(credential.integrationId)},`
    + `"integration_key":${q(credential.integrationKey)},"tenant_id":${q(credential.tenantId)},"environment_id":${q(credential.environmentId)},`
    + `"mode":${q(credential.mode)},"received_at_ms":${context.receivedAtMs},"received_date":"${context.receivedDate}",`;
}

/**
 * One JSONEachRow line (with its newline) of an accepted envelope, after the batch prefix.
 * `operation_key` is 00-decisions §4 with the exact observed status as its selector.
 */
export function observationRow(prefix: string, envelope: ObservationEnvelope, occurredAtMs: number): string {
  const { transport, payload, correlation, outcome } = envelope;
  const operationKey = `${transport.method} ${transport.routeTemplate}:${transport.payloadLocation}:${transport.statusCode}`;
  return `${prefix}"event_id":${q(envelope.eventId)},"envelope_version":${q(envelope.envelopeVersion)},"direction":${q(envelope.direction)},`
    + `"protocol":${q(envelope.protocol)},"event_type":${q(envelope.eventType)},"operation_key":${q(operationKey)},`
    + `"method":${q(transport.method)},"route_template":${q(transport.routeTemplate)},"payload_location":${q(transport.payloadLocation)},`
    + `"status_code":${transport.statusCode},"duration_ms":${transport.durationMs},"attempt":${transport.attempt},"occurred_at_ms":${occurredAtMs},`
    + `"observed_fingerprint":${q(envelope.contract.observedFingerprint ?? '')},"schema_fingerprint":${q(payload.schemaFingerprint)},`
    + `"schema_inspected":${payload.schemaInspected === false ? 0 : 1},"schema_shape":"${escapedShapeJson(payload.schemaShape)}",`
    + `"redaction_policy_version":${q(payload.redactionPolicyVersion)},`
    + `"source_event_id_hash":${q(correlation?.sourceEventIdHash ?? '')},"idempotency_key_hash":${q(correlation?.idempotencyKeyHash ?? '')},`
    + `"hash_namespace":${q(correlation?.hashNamespace ?? '')},"outcome_accepted":${outcome.accepted ? 1 : 0},`
    + `"business_object_type":${q(outcome.businessObjectType ?? '')},"business_object_id_hash":${q(outcome.businessObjectIdHash ?? '')}}\n`;
}

/**
 * Sends pre-serialised JSONEachRow lines in one INSERT. Resolves once ClickHouse answered the
 * insert as done (the rows are committed), rejects on any failure or on `signal`.
 */
export async function insertObservationRows(client: ClickHouseClient, body: Buffer, signal: AbortSignal): Promise<void> {
  const result = await client.exec({
    query: 'INSERT INTO observations FORMAT JSONEachRow',
    values: Readable.from([body]),
    abort_signal: signal,
  });
  result.stream.resume();
  await new Promise<void>((resolve, reject) => {
    result.stream.once('end', resolve);
    result.stream.once('error', reject);
  });
}
