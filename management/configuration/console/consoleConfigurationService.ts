// 02 "Configuration copy and compensation": the browser-session adapters. They run the API's own
// services with the signed-in owner or admin as the operation actor, so reviews, fingerprints,
// the shared preview minute, receipts, audit and the authority re-check are the API's; the user
// who previewed is the one who applies and recovers.

import type { SessionPrincipal } from '../../auth/principal.js';
import { activeWorkspaceManager } from '../../auth/workspaceUserAuth.js';
import type { Deps } from '../../deps.js';
import type { OperationResponse } from '../../operations/idempotency.js';
import { applyConfigurationOperation, type ApplyInput } from '../configurationApply.js';
import {
  previewCompensation,
  previewCopy,
  readConfigurationOperation,
  type CopyPreviewBody,
  type ReviewView,
} from '../configurationService.js';
import { readAsWorkspaceManager } from './consoleActor.js';

export async function previewConsoleCopy(
  deps: Deps,
  session: SessionPrincipal,
  slug: string,
  connectionId: string,
  body: CopyPreviewBody,
): Promise<ReviewView> {
  return previewCopy(deps, await activeWorkspaceManager(deps.pool, session, slug), connectionId, body);
}

export async function previewConsoleCompensation(
  deps: Deps,
  session: SessionPrincipal,
  slug: string,
  operationId: string,
): Promise<ReviewView> {
  return previewCompensation(deps, await activeWorkspaceManager(deps.pool, session, slug), operationId);
}

export async function applyConsoleConfigurationOperation(
  deps: Deps,
  session: SessionPrincipal,
  slug: string,
  input: ApplyInput,
): Promise<OperationResponse> {
  return applyConfigurationOperation(deps, await activeWorkspaceManager(deps.pool, session, slug), input);
}

export function readConsoleConfigurationOperation(
  deps: Deps,
  session: SessionPrincipal,
  slug: string,
  operationId: string,
): Promise<Record<string, unknown>> {
  return readAsWorkspaceManager(deps, session, slug, (actor) => readConfigurationOperation(deps, actor, operationId));
}
