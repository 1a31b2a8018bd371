import type { FastifyInstance, FastifyRequest } from 'fastify';
import { type ErrorCode, isAppError } from '../../shared/errors/index.js';
import type { SessionPrincipal } from '../auth/principal.js';
import { currentSession } from '../auth/sessionAuth.js';
import { listWorkspaces } from '../workspaces/workspaceService.js';
import { readDeviceAuthorization } from '../oauth/deviceGrant.js';
import { type DeviceStep, USER_CODE_MAX_LENGTH, renderDevicePage } from './deviceView.js';
import { errorInWords } from './errorWords.js';

interface Query {
  user_code?: string;
}

/**
 * The lookup's answers that are the code's fault or the user's: shown in words beside the code
 * field (`forbidden`: a setup request of a workspace the user does not administer). Anything else (503) is the catalogue answer of any route.
 */
const CODE_ERRORS = new Set<ErrorCode>(['invalid_grant', 'rate_limited', 'invalid_request', 'forbidden']);

/**
 * GET /device and /device?user_code=… (RFC 8628 §3.3: `verification_uri` and
 * `verification_uri_complete`): the account CLI's sign-in and consent page, a view over the routes
 * it calls. Without a session, a sign-in form (POST /auth/login); an unverified user is told to
 * verify first (03 Account CLI OAuth 2); then the code (editable when the address had none), and
 * for a code naming a pending request, the client and the exact permissions it asks for, with
 * Approve and Deny (POST /oauth/device/consent). Not in the API reference (`hide`): it answers HTML.
 */
export default function devicePageRoute(app: FastifyInstance): void {
  app.get<{ Querystring: Query }>(
    '/device',
    {
      config: { errors: [] },
      schema: {
        hide: true,
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: { user_code: { type: 'string', maxLength: USER_CODE_MAX_LENGTH } },
        },
      },
    },
    async (request, reply) => {
      const session = await currentSession(request);
      const step = await deviceStep(request, session, request.query.user_code?.trim() || null);
      // The code and consent steps are in the console's frame, which lists the user's workspaces.
      const framed = session && (step.step === 'code' || step.step === 'consent');
      const workspaces = framed ? await listWorkspaces(app.deps, session.userId) : [];
      return reply.type('text/html; charset=utf-8').send(renderDevicePage(step, workspaces));
    },
  );
}

async function deviceStep(request: FastifyRequest, session: SessionPrincipal | null, userCode: string | null): Promise<DeviceStep> {
  if (!session) return { step: 'sign-in', userCode };
  if (!session.emailVerified) return { step: 'verify-email', email: session.email };
  if (!userCode) return { step: 'code', email: session.email, userCode: null, error: null };
  try {
    const authorization = await readDeviceAuthorization(request.server.deps, session, userCode, request.ip);
    return { step: 'consent', email: session.email, request: authorization };
  } catch (error) {
    if (isAppError(error) && CODE_ERRORS.has(error.code)) {
      return { step: 'code', email: session.email, userCode, error: errorInWords('code', error.code) };
    }
    throw error;
  }
}
