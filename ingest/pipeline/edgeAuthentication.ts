import type { Clock } from '../../shared/clock.js';
import {
  presentedCredentials,
  resolveCredential,
  tokenMatches,
  unauthenticated,
  verifySignature,
  type Presented,
} from '../auth/authenticate.js';
import type { CredentialCache } from '../auth/credentials.js';
import type { IngestCredential } from '../common/credential.js';
import type { EdgeRequest } from '../common/edgeHttp.js';
import { fromStore } from './storeFailure.js';

export interface Authenticated {
  presented: Presented;
  credential: IngestCredential;
  /** "Now" of the service clock, read once per request. */
  nowMs: number;
}

/** Authentication of 03 for both edge routes, against the credential cache and the service clock. */
export class EdgeAuthentication {
  constructor(
    private readonly credentials: CredentialCache,
    private readonly clock: Clock,
  ) {}

  async authenticate(request: EdgeRequest): Promise<Authenticated> {
    const presented = presentedCredentials(request);
    const credential = await fromStore(resolveCredential(this.credentials, presented));
    await fromStore(this.clock.sync());
    const nowMs = this.clock.nowMs();
    verifySignature(credential, presented, request.rawBody, nowMs);
    return { presented, credential, nowMs };
  }

  /**
   * After the admission script saw a moved credential epoch: the binding is read again and the
   * request re-verified against it (a rotated-away or revoked token fails here).
   */
  async reauthenticate(credential: IngestCredential, presented: Presented, rawBody: Buffer, nowMs: number): Promise<IngestCredential> {
    const current = await fromStore(this.credentials.reload(credential));
    if (!tokenMatches(current, presented.token)) throw unauthenticated();
    verifySignature(current, presented, rawBody, nowMs);
    return current;
  }
}
