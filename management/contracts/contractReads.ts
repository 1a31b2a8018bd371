import { inReadSnapshot } from '../../shared/db/transaction.js';
import { AppError } from '../../shared/errors/index.js';
import type { ContractCaller } from './contractConnection.js';
import type { Deps } from '../deps.js';
import { requireCanonicalWorkspace } from '../workspaces/rules.js';
import { loadContractConnection, requireVersionIdForm } from './contractConnection.js';
import { decodeContractCursor, encodeContractCursor } from './contractCursor.js';
import { findVersion, listVersions, readOperations } from './contractStore.js';
import { versionView, type ContractVersionView } from './contractViews.js';
import { pageLimit } from '../pagination/pageLimit.js';

export const DEFAULT_CONTRACT_LIMIT = 25;

/** The raw query of the list route; values are strings (no coercion). */
export interface ContractListQuery {
  limit?: string;
  cursor?: string;
}

export interface ContractListPage {
  integration: { id: string; name: string };
  activeContractVersionId: string | null;
  contracts: ContractVersionView[];
  nextCursor: string | null;
}

/**
 * GET /v1/integrations/{integrationId}/contracts (01 Contract API): newest first (`createdAt`
 * descending, then `id` descending), `limit` 1–100 (default 25), a cursor bound to the connection.
 * Order of answers: bad query (400 `invalid_contract_query`), unknown integration (404), bad or
 * foreign cursor (400 `invalid_contract_cursor`).
 */
export async function listContracts(
  deps: Deps,
  principal: ContractCaller,
  integrationId: string,
  query: ContractListQuery,
): Promise<ContractListPage> {
  const limit = pageLimit(query.limit, DEFAULT_CONTRACT_LIMIT, 'invalid_contract_query');
  requireCanonicalWorkspace(principal);
  return inReadSnapshot(deps.pool, async (db) => {
    const connection = await loadContractConnection(db, principal, integrationId);
    const secret = deps.config.secretEncryptionKey;
    const after = query.cursor === undefined ? null : decodeContractCursor(secret, query.cursor, connection.id);
    const rows = await listVersions(db, connection.id, after, limit);
    const page = rows.slice(0, limit);
    const operations = await readOperations(
      db,
      page.map((version) => version.id),
    );
    const last = page[page.length - 1];
    return {
      integration: { id: connection.id, name: connection.name },
      activeContractVersionId: connection.activeContractVersionId,
      contracts: page.map((version) => versionView(version, operations.get(version.id) ?? [])),
      nextCursor: rows.length > limit && last ? encodeContractCursor(secret, connection.id, last) : null,
    };
  });
}

/**
 * GET /v1/integrations/{integrationId}/contracts/{contractVersionId}: one version with its full
 * operations. The path integration must be ours (404 `integration_not_found`), the version must
 * belong to it (404 `contract_not_found`); nothing else is revealed.
 */
export async function readContract(
  deps: Deps,
  principal: ContractCaller,
  integrationId: string,
  contractVersionId: string,
): Promise<ContractVersionView> {
  requireCanonicalWorkspace(principal);
  return inReadSnapshot(deps.pool, async (db) => {
    const connection = await loadContractConnection(db, principal, integrationId);
    requireVersionIdForm(contractVersionId);
    const version = await findVersion(db, connection.id, contractVersionId);
    if (!version) throw new AppError('contract_not_found');
    const operations = await readOperations(db, [version.id]);
    return versionView(version, operations.get(version.id) ?? []);
  });
}
