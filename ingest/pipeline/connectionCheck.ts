import { AppError } from '../../shared/errors/index.js';
import type { Admission } from '../admission/admission.js';
import { jsonResponse, type EdgeRequest, type EdgeResponse } from '../common/edgeHttp.js';
import type { ActiveRoutesCache } from '../contract/activeRoutes.js';
import type { EdgeAuthentication } from './edgeAuthentication.js';
import { fromStore } from './storeFailure.js';

export interface ConnectionCheckParts {
  auth: EdgeAuthentication;
  admission: Admission;
  activeRoutes: ActiveRoutesCache;
}

/** 03 Collector connection check: signed over `<t>.` and the (empty) body, per-client budget. */
export async function connectionCheck(parts: ConnectionCheckParts, request: EdgeRequest): Promise<EdgeResponse> {
  const auth = await parts.auth.authenticate(request);
  let { credential } = auth;
  for (let attempt = 0; ; attempt += 1) {
    const result = await fromStore(parts.admission.checkConnection(credential, auth.nowMs));
    if (result.kind === 'stale_credential') {
      if (attempt > 0) throw new AppError('integration_not_available');
      credential = await parts.auth.reauthenticate(credential, auth.presented, request.rawBody, auth.nowMs);
      continue;
    }
    if (result.kind === 'rate_limited') throw new AppError('connection_rate_limited', { retryAfterSeconds: result.retryAfterSeconds });
    const contract = await fromStore(parts.activeRoutes.of(credential.connectionId, credential.protocol));
    return jsonResponse(200, {
      connectionId: credential.connectionId,
      integrationKey: credential.integrationKey,
      mode: credential.mode,
      environmentId: credential.environmentId,
      direction: credential.direction,
      protocol: credential.protocol,
      credentialStatus: 'active',
      limits: parts.admission.budgetOf(credential),
      // What the collector templatises concrete paths with (collector/README.md "Route templates").
      activeContractVersionId: contract.versionId,
      routes: contract.routes,
      routesTruncated: contract.truncated,
    });
  }
}
