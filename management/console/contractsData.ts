import { type BreakingChange, breakingChanges } from '../../shared/contracts/breakingChanges.js';
import type { SessionPrincipal } from '../auth/principal.js';
import { requireWorkspaceManager } from '../auth/workspaceUserAuth.js';
import { type ContractImpact, contractImpact } from '../contracts/getContractImpact.js';
import { listContracts, readContract } from '../contracts/contractReads.js';
import type { ContractVersionView } from '../contracts/contractViews.js';
import type { AppDeps } from '../deps.js';

/** A version as the contracts page lists it: what activating it would break of the active one. */
export interface ListedVersion {
  version: ContractVersionView;
  /** Against the active version; null for the active version itself or when none is active. */
  breaking: BreakingChange[] | null;
}

export interface ContractsPageData {
  workspaceSlug: string;
  connection: { id: string; name: string };
  /** Whether the user may import and activate now (an active workspace). */
  canWrite: boolean;
  active: ContractVersionView | null;
  versions: ListedVersion[];
  nextCursor: string | null;
}

/** The move a version allows: a draft is promoted, a superseded version rolled back to; the active one, none. */
export type ActivationMove = 'promote' | 'rollback' | null;

export function activationMove(version: ContractVersionView): ActivationMove {
  if (version.lifecycleStatus === 'draft') return 'promote';
  return version.lifecycleStatus === 'superseded' ? 'rollback' : null;
}

/**
 * The contract versions of one connection, newest first (one page of the list route's service),
 * each with its breaking changes against the active version (read on its own when it is not on
 * this page). The services check the owner or admin and the connection (a foreign id: 404).
 */
export async function contractsPageData(
  deps: AppDeps,
  session: SessionPrincipal,
  workspaceSlug: string,
  connectionId: string,
  cursor: string | undefined,
): Promise<ContractsPageData> {
  const { actor, status } = await requireWorkspaceManager(deps.pool, session, workspaceSlug);
  const page = await listContracts(deps, actor, connectionId, cursor === undefined ? {} : { cursor });
  const activeId = page.activeContractVersionId;
  const active =
    activeId === null
      ? null
      : (page.contracts.find((version) => version.id === activeId) ?? (await readContract(deps, actor, connectionId, activeId)));
  return {
    workspaceSlug,
    connection: page.integration,
    canWrite: status === 'active',
    active,
    versions: page.contracts.map((version) => ({
      version,
      breaking: active === null || version.id === active.id ? null : breakingChanges(active.operations, version.operations),
    })),
    nextCursor: page.nextCursor,
  };
}

export interface ActivationReviewData {
  workspaceSlug: string;
  connectionId: string;
  canWrite: boolean;
  version: ContractVersionView;
  /** The precondition the activation posts: the version active now (null: none). */
  active: ContractVersionView | null;
  move: ActivationMove;
  /** The activation dry-run; null for the active version (nothing to activate). */
  impact: ContractImpact | null;
  breaking: BreakingChange[];
}

/** One version's activation review: the precondition, the dry-run's impact and the breaking changes. */
export async function activationReviewData(
  deps: AppDeps,
  session: SessionPrincipal,
  workspaceSlug: string,
  connectionId: string,
  contractVersionId: string,
): Promise<ActivationReviewData> {
  const { actor, status } = await requireWorkspaceManager(deps.pool, session, workspaceSlug);
  const version = await readContract(deps, actor, connectionId, contractVersionId);
  const move = activationMove(version);
  const impact = move === null ? null : await contractImpact(deps, actor, connectionId, contractVersionId, {});
  const activeId = impact ? impact.activeContractVersionId : version.id;
  const active = activeId === null ? null : activeId === version.id ? version : await readContract(deps, actor, connectionId, activeId);
  return {
    workspaceSlug,
    connectionId,
    canWrite: status === 'active',
    version,
    active,
    move,
    impact,
    breaking: active === null || active.id === version.id ? [] : breakingChanges(active.operations, version.operations),
  };
}
