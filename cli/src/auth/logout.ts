// The fallback of `iw logout` when DELETE /v1/cli/session could not be done: the OAuth revocation
// endpoint (RFC 7009), where a refresh token revokes its whole grant as logout does.

import { oauthConfiguration } from './oauth.js';

/** True when the service confirmed the revocation. */
export async function revokeRefreshToken(baseUrl: string, refreshToken: string): Promise<boolean> {
  try {
    const { client, config } = await oauthConfiguration(baseUrl);
    await client.tokenRevocation(config, refreshToken, { token_type_hint: 'refresh_token' });
    return true;
  } catch {
    return false;
  }
}
