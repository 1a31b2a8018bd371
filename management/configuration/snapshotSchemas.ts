/**
 * JSON Schemas of 02 "Review snapshot" and of the receipt parts that come from it (`proof`,
 * `copiedArtifacts`), shared by configuration copy and compensation and by second-mode setup.
 * Responses are serialised from them: a whitelist, so nothing else can leave the service.
 */
import { operationSchema } from '../contracts/schemas.js';

const string = { type: 'string' } as const;

/** One operation of a snapshot contract: the contract operation without its id, direction and protocol. */
const snapshotOperation = {
  type: 'object',
  required: [
    'operationKey',
    'method',
    'routeTemplate',
    'eventType',
    'payloadLocation',
    'statusSelector',
    'fingerprint',
    'schema',
    'unchecked',
  ],
  properties: {
    operationKey: string,
    method: string,
    routeTemplate: string,
    basePaths: operationSchema.properties.basePaths,
    eventType: operationSchema.properties.eventType,
    payloadLocation: string,
    statusSelector: string,
    fingerprint: string,
    schema: operationSchema.properties.schema,
    unchecked: operationSchema.properties.unchecked,
  },
} as const;

const snapshotContract = {
  type: 'object',
  required: ['sourceContractVersionId', 'declaredVersion', 'signature', 'fingerprint', 'importedFrom', 'lifecycleStatus', 'operations'],
  properties: {
    sourceContractVersionId: string,
    declaredVersion: string,
    signature: string,
    fingerprint: string,
    importedFrom: string,
    // A copy always creates a draft.
    lifecycleStatus: { type: 'string', enum: ['draft'] },
    operations: { type: 'array', items: snapshotOperation },
  },
} as const;

const snapshotRule = {
  type: 'object',
  required: ['sourceRuleId', 'sourceEventType', 'expectedObjectType', 'maxDelayMs', 'enabled'],
  properties: {
    sourceRuleId: string,
    sourceEventType: string,
    expectedObjectType: string,
    maxDelayMs: { type: 'integer' },
    enabled: { type: 'boolean' },
  },
} as const;

const snapshotIdentity = {
  type: 'object',
  required: ['id', 'revision', 'tenantId', 'name', 'provider', 'direction', 'protocol'],
  properties: { id: string, revision: string, tenantId: string, name: string, provider: string, direction: string, protocol: string },
} as const;

/** The snapshot's `source`: the connection the selection comes from, at its reviewed revision. */
export const snapshotSource = {
  type: 'object',
  required: ['connectionId', 'environmentId', 'revision'],
  properties: { connectionId: string, environmentId: string, revision: string },
} as const;

/**
 * 02 "Review snapshot". Copy and setup differ only in `source` (setup may select nothing, so
 * have none) and `destination` (setup's does not exist yet, so has no connection or revision).
 */
export function snapshotSchemaWith<Source extends object, Destination extends object>(source: Source, destination: Destination) {
  return {
    type: 'object',
    required: ['identity', 'source', 'destination', 'contracts', 'rules', 'fingerprint'],
    properties: {
      identity: snapshotIdentity,
      source,
      destination,
      contracts: { type: 'array', items: snapshotContract },
      rules: { type: 'array', items: snapshotRule },
      fingerprint: string,
    },
  } as const;
}

/** 02 Operation receipt `proof`: what was approved and the configuration it applied. */
export const proofSchema = {
  type: 'object',
  required: ['schema', 'approvalFingerprint', 'configurationFingerprint'],
  properties: { schema: string, approvalFingerprint: string, configurationFingerprint: string },
} as const;

const mapping = <From extends string, To extends string>(from: From, to: To) =>
  ({
    type: 'array',
    items: { type: 'object', required: [from, to], properties: { [from]: string, [to]: string } as Record<From | To, typeof string> },
  }) as const;

/** 02 Operation receipt `copiedArtifacts`: source id → destination id of every created artifact. */
export const copiedArtifactsSchema = {
  type: 'object',
  required: ['contracts', 'rules'],
  properties: {
    contracts: mapping('sourceContractVersionId', 'destinationContractVersionId'),
    rules: mapping('sourceRuleId', 'destinationRuleId'),
  },
} as const;
