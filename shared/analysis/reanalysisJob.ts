/** The outbox topic of reanalysis jobs: written by contract activation, read by the analyzer. */
export const REANALYSIS_TOPIC = 'reanalysis';

/** The payload of a reanalysis job (written in the activation's transaction). */
export interface ReanalysisJob {
  connectionId: string;
  contractVersionId: string;
  previousActiveContractVersionId: string | null;
  activationId: string;
  analysisRevision: number;
}
