// The data of the pages that start a second-mode setup or a configuration copy: the Integration
// with both slots, and what its source connection offers to copy (contract versions and rules),
// read through the services of the contract and rule routes as the signed-in owner or admin.

import { inReadSnapshot } from '../../shared/db/transaction.js';
import { AppError } from '../../shared/errors/index.js';
import { hasIdForm } from '../../shared/ids.js';
import type { Mode } from '../connections/connectionStore.js';
import { loadWorkspaceConnection } from '../connections/workspaceConnection.js';
import { otherMode } from '../connectionSetup/setupService.js';
import { listContracts } from '../contracts/contractReads.js';
import type { ContractVersionView } from '../contracts/contractViews.js';
import type { Deps } from '../deps.js';
import { requireModeTopology } from '../environments/environmentStore.js';
import { type CanonicalIntegration, type ConfiguredSlot, readCanonicalIntegration } from '../integrations/integrationStore.js';
import { MAX_SELECTION } from '../configuration/artifacts.js';
import { readRulePage, type RuleView } from '../rules/ruleService.js';
import { requireCanonicalWorkspace } from '../workspaces/rules.js';
import type { ConsoleWorkspace } from './consoleWorkspace.js';

/** What a connection offers to copy: its newest versions and first rules, one selection's worth (02: 100 ids each). */
export interface CopyableArtifacts {
  versions: ContractVersionView[];
  rules: RuleView[];
  /** More versions or rules exist than a selection can name. */
  truncated: boolean;
}

/** The ids a "Preview again" link brings back checked. */
export interface Preselected {
  contractVersionIds: readonly string[];
  ruleIds: readonly string[];
}

async function copyable(deps: Deps, workspace: ConsoleWorkspace, connectionId: string): Promise<CopyableArtifacts> {
  const contracts = await listContracts(deps, workspace.actor, connectionId, { limit: String(MAX_SELECTION) });
  const rules = await inReadSnapshot(deps.pool, async (db) =>
    readRulePage(deps, db, await loadWorkspaceConnection(db, workspace.actor.workspaceId, connectionId), undefined, MAX_SELECTION),
  );
  return { versions: contracts.contracts, rules: rules.rules, truncated: contracts.nextCursor !== null || rules.nextCursor !== null };
}

async function canonicalIntegration(deps: Deps, workspace: ConsoleWorkspace, integrationId: string): Promise<CanonicalIntegration> {
  requireCanonicalWorkspace(workspace.actor);
  const integration = await inReadSnapshot(deps.pool, async (db) => {
    const topology = await requireModeTopology(db, workspace.actor.workspaceId);
    return hasIdForm(integrationId, 'wint_') ? readCanonicalIntegration(db, workspace.actor.workspaceId, integrationId, topology) : null;
  });
  if (!integration) throw new AppError('integration_not_found');
  return integration;
}

const configured = (integration: CanonicalIntegration, mode: Mode): ConfiguredSlot | null => {
  const slot = integration.connections[mode];
  return slot.status === 'configured' ? slot : null;
};

export interface SetupPageData {
  workspace: ConsoleWorkspace;
  integration: CanonicalIntegration;
  /** The slot to fill. */
  mode: Mode;
  /** The other mode's connection, the source of any copy; null when it has none either. */
  source: ConfiguredSlot | null;
  /** What the source offers; empty without a source. */
  artifacts: CopyableArtifacts;
  preselected: Preselected;
}

/**
 * The setup page of one Integration: the slot to fill is `mode`, else the missing one (Live
 * first). A foreign or unknown Integration is the preview route's 404 `integration_not_found`.
 */
export async function setupPageData(
  deps: Deps,
  workspace: ConsoleWorkspace,
  integrationId: string,
  mode: Mode | undefined,
  preselected: Preselected,
): Promise<SetupPageData> {
  const integration = await canonicalIntegration(deps, workspace, integrationId);
  const destination: Mode = mode ?? (configured(integration, 'live') ? 'sandbox' : 'live');
  const source = configured(integration, otherMode(destination));
  const artifacts = source ? await copyable(deps, workspace, source.connectionId) : { versions: [], rules: [], truncated: false };
  return { workspace, integration, mode: destination, source, artifacts, preselected };
}

export interface CopyPageData {
  workspace: ConsoleWorkspace;
  integration: CanonicalIntegration;
  destination: ConfiguredSlot;
  /** The other mode's connection; null when the Integration has none (then there is nothing to copy from: set it up). */
  source: ConfiguredSlot | null;
  artifacts: CopyableArtifacts;
  /** Declared versions and (event, object) pairs the destination has already: a copy of them would conflict. */
  present: { declaredVersions: Set<string>; rulePairs: Set<string> };
  preselected: Preselected;
}

/** The key of a rule's (event, object) pair, unique within one connection (02 Reconciliation rule). */
export const rulePair = (rule: { sourceEventType: string; expectedObjectType: string }) =>
  JSON.stringify([rule.sourceEventType, rule.expectedObjectType]);

/**
 * The copy page into `destinationConnectionId` from `sourceConnectionId` (default: the other mode's
 * connection of its Integration, if it has one). An unknown or foreign connection is 404
 * `connection_not_found`; a source that is not the other mode's connection of the same
 * Integration is the preview route's 400 `configuration_scope_mismatch`.
 */
export async function copyPageData(
  deps: Deps,
  workspace: ConsoleWorkspace,
  destinationConnectionId: string,
  sourceConnectionId: string | undefined,
  preselected: Preselected,
): Promise<CopyPageData> {
  requireCanonicalWorkspace(workspace.actor);
  const connection = await loadWorkspaceConnection(deps.pool, workspace.actor.workspaceId, destinationConnectionId);
  const integration = await canonicalIntegration(deps, workspace, connection.integrationId);
  const destination = configured(integration, connection.mode);
  const source = configured(integration, otherMode(connection.mode));
  if (!destination || (sourceConnectionId !== undefined && sourceConnectionId !== source?.connectionId)) {
    throw new AppError('configuration_scope_mismatch');
  }
  const none = { versions: [], rules: [], truncated: false };
  const artifacts = source ? await copyable(deps, workspace, source.connectionId) : none;
  const present = source ? await copyable(deps, workspace, destination.connectionId) : none;
  return {
    workspace,
    integration,
    destination,
    source,
    artifacts,
    present: {
      declaredVersions: new Set(present.versions.map((version) => version.declaredVersion)),
      rulePairs: new Set(present.rules.map(rulePair)),
    },
    preselected,
  };
}

/** A comma-separated id list of a page's query (`contracts=cv_…,cv_…`), as "Preview again" links write it. */
export function idList(value: string | undefined): string[] {
  return value ? value.split(',').filter((id) => id !== '') : [];
}
