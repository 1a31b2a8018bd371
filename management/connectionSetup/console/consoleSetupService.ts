// 02 "Second-mode setup": the browser-session adapters. They run the API's own services with the
// signed-in owner or admin as the operation actor: the same review, shared preview minute,
// apply (the new connection's token shown once), receipt, audit and authority re-check; the user
// who previewed is the one who applies and recovers.

import type { SessionPrincipal } from '../../auth/principal.js';
import { activeWorkspaceManager } from '../../auth/workspaceUserAuth.js';
import { readAsWorkspaceManager } from '../../configuration/console/consoleActor.js';
import type { Deps } from '../../deps.js';
import type { OperationResponse } from '../../operations/idempotency.js';
import { applySetup, type SetupApplyInput } from '../setupApply.js';
import { previewSetup, readSetup, type SetupPreviewBody } from '../setupService.js';
import type { SetupReviewView } from '../setupViews.js';

export async function previewConsoleSetup(
  deps: Deps,
  session: SessionPrincipal,
  slug: string,
  integrationId: string,
  body: SetupPreviewBody,
): Promise<SetupReviewView> {
  return previewSetup(deps, await activeWorkspaceManager(deps.pool, session, slug), integrationId, body);
}

export async function applyConsoleSetup(
  deps: Deps,
  session: SessionPrincipal,
  slug: string,
  input: SetupApplyInput,
): Promise<OperationResponse> {
  return applySetup(deps, await activeWorkspaceManager(deps.pool, session, slug), input);
}

export function readConsoleSetup(
  deps: Deps,
  session: SessionPrincipal,
  slug: string,
  operationId: string,
): Promise<Record<string, unknown>> {
  return readAsWorkspaceManager(deps, session, slug, (actor) => readSetup(deps, actor, operationId));
}
