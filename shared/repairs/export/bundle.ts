// Stand-in for the export bundle builder that is written on its own branch (03 "Repair export
// bundle"): the interface the export route codes against, and a builder that refuses. Replaced
// by the real module when that branch is merged.

import type { RepairCandidate, ReplayFixture } from '../types.js';

export interface RepairBundleInput {
  proposal: {
    id: string;
    incidentId: string;
    connectionId: string;
    mode: 'sandbox' | 'live';
    operationKey: string;
    contractVersionId: string;
    datasetId: string;
  };
  incident: {
    kind: string;
    summary: string;
    affectedRecords: number;
    findings: { kind: string; path: string; expected: string; observed: string; observationCount: number }[];
  };
  dataset: { id: string; manifestHash: string; fixtureCount: number };
  fixtures: ReplayFixture[];
  baseSchema: Record<string, unknown>;
  candidate: RepairCandidate;
  run: { id: string; status: 'passed'; fixtureCount: number; conformingCount: number; adapterVersion: string; adapterFingerprint: string };
  approval: { id: string; approvalFingerprint: string; decidedAt: string };
  contract: { format: 'openapi' | 'json-schema'; importedFrom: string; declaredVersion: string; document: Record<string, unknown> };
  operation: { method: string; routeTemplate: string; payloadLocation: 'request' | 'response' | 'message'; statusSelector: string };
}

export interface RepairBundle {
  marker: 'service-repair-export/1';
  filename: string;
  fingerprint: string;
  files: { name: string; mediaType: string; sha256: string; content: string }[];
}

export function buildRepairBundle(_input: RepairBundleInput): RepairBundle {
  throw new Error('the repair export bundle builder is not merged yet');
}
