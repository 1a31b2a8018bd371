// The shapes of 03 "Reviewed repairs" as the CLI reads them (the service's schemas are the
// authority: management/repairs/schemas.ts, management/repairDecisions/schemas.ts).

/** Every status of a proposal; the first three are "in progress" (`--wait` polls through them). */
export type ProposalStatus = 'queued' | 'generating' | 'validating' | 'awaiting_approval' | 'approved' | 'rejected' | 'failed';

export const IN_PROGRESS: readonly ProposalStatus[] = ['queued', 'generating', 'validating'];

export interface Validation {
  id: string;
  valid: boolean;
  replayPassed: boolean;
  replayRunId: string | null;
  replayStatus: string | null;
  adapterFingerprint: string | null;
  schemaChecksFingerprint: string | null;
}

export interface Proposal {
  id: string;
  incidentId: string;
  connectionId: string;
  mode: 'sandbox' | 'live';
  environmentId: string;
  status: ProposalStatus;
  createdAt: string;
  updatedAt: string;
  errorCode: string | null;
  validation: Validation | null;
  decision: { status: 'approved' | 'rejected'; approvalRecordId: string; decidedAt: string } | null;
}

export interface ReplayRun {
  id: string;
  datasetId: string;
  connectionId: string;
  mode: 'sandbox' | 'live';
  status: 'passed' | 'failed';
  adapterFingerprint: string;
  adapterVersion: string;
  errorCode: string | null;
  queuedAt: string;
  startedAt: string;
  finishedAt: string;
}

/** 03 "CLI operation receipt". */
export interface Receipt<Data> {
  schemaVersion: number;
  operationId: string;
  action: string;
  targetId: string;
  connectionId: string;
  status: 'completed';
  data: Data;
  completedAt: string;
  replayed: boolean;
}

export type RequestReceipt = Receipt<{ proposalId: string; datasetId: string; status: string }>;
export type DecisionReceipt = Receipt<{ proposalId: string; status: 'approved' | 'rejected'; approvalRecordId: string }>;

export interface BundleFile {
  name: string;
  mediaType: string;
  sha256: string;
  content: string;
}

/** 03 "Repair export bundle": the data of a `repair.export` receipt. */
export interface Bundle {
  marker: string;
  filename: string;
  fingerprint: string;
  files: BundleFile[];
}

export type ExportReceipt = Receipt<Bundle>;

/** 03 "Decision preview". */
export interface DecisionPreview {
  schemaVersion: number;
  operationId: string;
  connectionId: string;
  proposalId: string;
  status: 'previewed' | 'expired';
  approvalFingerprint: string;
  expiresAt: string;
  review: {
    proposalId: string;
    connectionId: string;
    status: string;
    proposalFingerprint: string;
    validation: Validation | null;
    patchArtifactFingerprint: string | null;
    repositoryMappingId: string | null;
    decision: 'approved' | 'rejected';
    rationale: string;
  };
}
