// The Session of context.ts: profiles from config.json, the API client of a profile's login (its
// token source refreshes as needed), and the idempotency keys of keyed writes.

import { createApiClient } from '../api.js';
import { loadProfile, updateConfig } from '../config.js';
import type { Session } from '../context.js';
import { idempotencyKey, settled } from './idempotency.js';
import { checkTransport } from './oauth.js';
import { createTokenSource } from './tokenSource.js';

export function createSession(): Session {
  return {
    profile(name) {
      return loadProfile(name);
    },
    async saveWorkspace(profile, slug) {
      await updateConfig((config) => {
        config.profiles[profile.name] = {
          ...config.profiles[profile.name],
          baseUrl: config.profiles[profile.name]?.baseUrl ?? profile.baseUrl,
          workspace: slug,
        };
      });
    },
    async api(profile) {
      checkTransport(profile.baseUrl);
      return createApiClient(profile.baseUrl, createTokenSource(profile));
    },
    idempotencyKey,
    settled,
  };
}
