import type { UncheckedSubschema } from '../../shared/contracts/index.js';
import type { ContractOperationRecord, ContractVersionRecord, LifecycleStatus } from './contractStore.js';

/** 01 "Contract version", reduced registration form. */
export interface RegistrationForm {
  id: string;
  declaredVersion: string;
  fingerprint: string;
  importedFrom: string;
  lifecycleStatus: LifecycleStatus;
  operationCount: number;
  createdAt: string;
}

/** 01 "Contract operation". */
export interface ContractOperationView {
  id: string;
  operationKey: string;
  direction: string;
  protocol: string;
  method: string;
  routeTemplate: string;
  /** Issue 26: the servers' path prefixes an observed route may carry in front of routeTemplate. */
  basePaths: string[];
  eventType: string | null;
  payloadLocation: string;
  statusSelector: string;
  fingerprint: string;
  schema: Record<string, unknown>;
  /** 00-decisions §7: what activation will not watch (issue 14, item 5). */
  unchecked: UncheckedSubschema[];
}

/** 01 "Contract version", full form with its operations. */
export interface ContractVersionView {
  id: string;
  declaredVersion: string;
  fingerprint: string;
  importedFrom: string;
  lifecycleStatus: LifecycleStatus;
  activatedAt: string | null;
  supersededAt: string | null;
  createdAt: string;
  operations: ContractOperationView[];
}

const iso = (value: Date | null): string | null => (value ? value.toISOString() : null);

export function registrationForm(version: ContractVersionRecord): RegistrationForm {
  return {
    id: version.id,
    declaredVersion: version.declaredVersion,
    fingerprint: version.fingerprint,
    importedFrom: version.importedFrom,
    lifecycleStatus: version.lifecycleStatus,
    operationCount: version.operationCount,
    createdAt: version.createdAt.toISOString(),
  };
}

export function operationView(operation: ContractOperationRecord): ContractOperationView {
  return {
    id: operation.id,
    operationKey: operation.operationKey,
    direction: operation.direction,
    protocol: operation.protocol,
    method: operation.method,
    routeTemplate: operation.routeTemplate,
    basePaths: operation.basePaths,
    eventType: operation.eventType,
    payloadLocation: operation.payloadLocation,
    statusSelector: operation.statusSelector,
    fingerprint: operation.fingerprint,
    schema: operation.schema,
    unchecked: operation.unchecked,
  };
}

export function versionView(version: ContractVersionRecord, operations: readonly ContractOperationRecord[]): ContractVersionView {
  return {
    id: version.id,
    declaredVersion: version.declaredVersion,
    fingerprint: version.fingerprint,
    importedFrom: version.importedFrom,
    lifecycleStatus: version.lifecycleStatus,
    activatedAt: iso(version.activatedAt),
    supersededAt: iso(version.supersededAt),
    createdAt: version.createdAt.toISOString(),
    operations: operations.map(operationView),
  };
}
