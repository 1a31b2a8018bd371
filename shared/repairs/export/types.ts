// The input and output of the repair export bundle (03 "Repair export bundle"; 00-decisions §6).

import type { RepairCandidate, ReplayFixture } from '../types.js';

/** Everything an approved, validated proposal's export is made of, read by the export route. */
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
  /** The operation schema before the patch (self-contained, `$defs` included). */
  baseSchema: Record<string, unknown>;
  candidate: RepairCandidate;
  run: { id: string; status: 'passed'; fixtureCount: number; conformingCount: number; adapterVersion: string; adapterFingerprint: string };
  approval: { id: string; approvalFingerprint: string; decidedAt: string };
  /** `document` is the registered document exactly as sent. */
  contract: { format: 'openapi' | 'json-schema'; importedFrom: string; declaredVersion: string; document: Record<string, unknown> };
  operation: { method: string; routeTemplate: string; payloadLocation: 'request' | 'response' | 'message'; statusSelector: string };
}

export interface RepairBundleFile {
  name: string;
  mediaType: string;
  /** 64 lowercase hex of the SHA-256 of the UTF-8 content (what `sha256sum` prints). */
  sha256: string;
  content: string;
}

export interface RepairBundle {
  marker: 'service-repair-export/1';
  /** A directory name for the files: `repair-<proposalId>`. */
  filename: string;
  /** `fingerprint({marker, files: [{name, mediaType, sha256}]})`. */
  fingerprint: string;
  files: RepairBundleFile[];
}
