import type { ObservationRow } from './observationStore.js';

/**
 * An observation as the read routes return it (00-decisions §5; fields recorded in
 * docs/decisions/analysis.md). Structure and hashes only: the row holds no payload value or header.
 * Optional envelope members stored as '' are null here.
 */
export interface ObservationView {
  eventId: string;
  connectionId: string;
  /** The connection id again, under the name of the query parameter that selected it. */
  integrationId: string;
  eventType: string;
  operationKey: string;
  method: string;
  routeTemplate: string;
  payloadLocation: string;
  statusCode: number;
  durationMs: number;
  attempt: number;
  occurredAt: string;
  receivedAt: string;
  envelopeVersion: string;
  schemaInspected: boolean;
  schemaFingerprint: string;
  observedFingerprint: string | null;
  shapeHash: string;
  redactionPolicyVersion: string;
  correlation: { sourceEventIdHash: string | null; idempotencyKeyHash: string | null; hashNamespace: string | null };
  outcome: { accepted: boolean; businessObjectType: string | null; businessObjectIdHash: string | null };
}

export interface ObservationDetailView extends ObservationView {
  /** The stored schemaShape tree (00-decisions §5 node kinds). */
  schemaShape: unknown;
}

const orNull = (value: string): string | null => (value === '' ? null : value);

/** 00-decisions §4 with the exact observed status as the selector (the table's `operation_key`). */
export const operationKeyOf = (method: string, routeTemplate: string, payloadLocation: string, statusCode: number): string =>
  `${method} ${routeTemplate}:${payloadLocation}:${statusCode}`;

export function observationView(connectionId: string, row: ObservationRow): ObservationView {
  return {
    eventId: row.event_id,
    connectionId,
    integrationId: connectionId,
    eventType: row.event_type,
    operationKey: operationKeyOf(row.method, row.route_template, row.payload_location, row.status_code),
    method: row.method,
    routeTemplate: row.route_template,
    payloadLocation: row.payload_location,
    statusCode: row.status_code,
    durationMs: row.duration_ms,
    attempt: row.attempt,
    occurredAt: new Date(Number(row.occurred_at_ms)).toISOString(),
    receivedAt: new Date(Number(row.received_at_ms)).toISOString(),
    envelopeVersion: row.envelope_version,
    schemaInspected: row.schema_inspected === 1,
    schemaFingerprint: row.schema_fingerprint,
    observedFingerprint: orNull(row.observed_fingerprint),
    shapeHash: row.shape_hash,
    redactionPolicyVersion: row.redaction_policy_version,
    correlation: {
      sourceEventIdHash: orNull(row.source_event_id_hash),
      idempotencyKeyHash: orNull(row.idempotency_key_hash),
      hashNamespace: orNull(row.hash_namespace),
    },
    outcome: {
      accepted: row.outcome_accepted === 1,
      businessObjectType: orNull(row.business_object_type),
      businessObjectIdHash: orNull(row.business_object_id_hash),
    },
  };
}

export function observationDetailView(connectionId: string, row: ObservationRow): ObservationDetailView {
  return { ...observationView(connectionId, row), schemaShape: JSON.parse(row.schema_shape ?? 'null') as unknown };
}
