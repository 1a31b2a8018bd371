import type { Queryable } from '../../shared/db/pool.js';
import { AppError } from '../../shared/errors/index.js';
import { hasIdForm } from '../../shared/ids.js';
import type { ConnectionRecord } from '../connections/connectionStore.js';
import { loadWorkspaceConnection } from '../connections/workspaceConnection.js';
import { findProposal, type ProposalRecord } from './evidenceStore.js';

/**
 * The path's live `int_` connection of the workspace (404 `connection_not_found`) and its
 * proposal (404 `repair_proposal_not_found`: another connection's or workspace's proposal, or a
 * malformed id, is not found either).
 */
export async function loadPathProposal(
  db: Queryable,
  workspaceId: string,
  connectionId: string,
  proposalId: string,
): Promise<{ connection: ConnectionRecord; proposal: ProposalRecord }> {
  const connection = await loadWorkspaceConnection(db, workspaceId, connectionId);
  const proposal = hasIdForm(proposalId, 'rp_') ? await findProposal(db, { workspaceId, connectionId, proposalId }) : null;
  if (!proposal) throw new AppError('repair_proposal_not_found');
  return { connection, proposal };
}
