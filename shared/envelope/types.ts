/**
 * The observation envelope of document 03 ("Observation envelope (ingestion)"). The complete
 * field list is "not shown" there; the list below is the one this service accepts (recorded in
 * docs/decisions/ingest.md). Versions 0.1 and 0.2 share one field list; 0.3 adds
 * `payload.schemaInspected`.
 */

export const ENVELOPE_VERSIONS = ['0.1', '0.2', '0.3'] as const;
export type EnvelopeVersion = (typeof ENVELOPE_VERSIONS)[number];

/** 03: the literal placeholders that the credential's scope replaces. */
export const TENANT_PLACEHOLDER = 'ten_authenticated';
export const ENVIRONMENT_PLACEHOLDER = 'env_authenticated';

/** 03 Limits: at most 50 envelopes per batch. */
export const MAX_ENVELOPES_PER_BATCH = 50;

export const DIRECTIONS = ['inbound', 'outbound'] as const;
export type Direction = (typeof DIRECTIONS)[number];

export const PROTOCOLS = ['http-api', 'http-webhook', 'queue', 'scheduled-feed'] as const;
export type Protocol = (typeof PROTOCOLS)[number];

export const TRANSPORT_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'] as const;
export type TransportMethod = (typeof TRANSPORT_METHODS)[number];

export const PAYLOAD_LOCATIONS = ['request', 'response', 'message'] as const;
export type PayloadLocation = (typeof PAYLOAD_LOCATIONS)[number];

/** 00-decisions §5: the schemaShape node kinds. */
export const SHAPE_KINDS = ['object', 'array', 'string', 'number', 'integer', 'boolean', 'null'] as const;
export type ShapeKind = (typeof SHAPE_KINDS)[number];

export type SchemaShape =
  | { kind: 'object'; fields: Record<string, SchemaShape> }
  | { kind: 'array'; items?: SchemaShape }
  | { kind: 'string' | 'number' | 'integer' | 'boolean' | 'null' };

/** Bounds of a schemaShape tree: nesting levels, fields per object node, field-name length. */
export const SHAPE_MAX_DEPTH = 32;
export const SHAPE_MAX_FIELDS = 500;
export const SHAPE_MAX_FIELD_NAME = 256;

export interface ObservationEnvelope {
  envelopeVersion: EnvelopeVersion;
  eventId: string;
  tenantId: string;
  environmentId: string;
  integrationId: string;
  direction: Direction;
  protocol: Protocol;
  occurredAt: string;
  operationIdentityVersion: '1';
  eventType: string;
  correlation?: { sourceEventIdHash?: string; idempotencyKeyHash?: string; hashNamespace?: string };
  contract: { observedFingerprint: string | null };
  transport: {
    method: TransportMethod;
    routeTemplate: string;
    payloadLocation: PayloadLocation;
    statusCode: number;
    durationMs: number;
    attempt: number;
  };
  payload: {
    storage: 'none';
    schemaFingerprint: string;
    schemaShape: SchemaShape;
    redactionPolicyVersion: string;
    /** Version 0.3 only; absent means the body was inspected. */
    schemaInspected?: boolean;
  };
  outcome: { accepted: boolean; businessObjectType?: string; businessObjectIdHash?: string };
}
