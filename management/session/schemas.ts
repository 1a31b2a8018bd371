import type { Config } from '../../shared/config.js';

export const userSchema = {
  type: 'object',
  required: ['id', 'email', 'name', 'emailVerified'],
  properties: {
    id: { type: 'string' },
    email: { type: 'string' },
    name: { type: 'string' },
    emailVerified: { type: 'boolean' },
  },
} as const;

export const SESSION_COOKIE = 'session';

/** 00-decisions §2: an HttpOnly cookie; Secure when the console is served over https. */
export function sessionCookieOptions(config: Config) {
  return {
    httpOnly: true,
    sameSite: 'lax' as const,
    path: '/',
    secure: config.consoleOrigin.startsWith('https:'),
  };
}
