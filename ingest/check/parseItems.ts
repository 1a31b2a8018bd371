import { AppError } from '../../shared/errors/index.js';
import {
  DIRECTIONS,
  ENVIRONMENT_PLACEHOLDER,
  MAX_ENVELOPES_PER_BATCH,
  PROTOCOLS,
  TENANT_PLACEHOLDER,
} from '../../shared/envelope/types.js';
import { validateEnvelope, type EnvelopeCheck } from '../../shared/envelope/validate.js';
import type { IngestCredential } from '../common/credential.js';
import { BatchShapeError } from '../common/edgeHttp.js';

const JSON_MEDIA_TYPE = /^application\/json\s*(;|$)/i;

/**
 * The batch items. Unparsable JSON and a body that is not declared as JSON are 400
 * `invalid_request` (03 Conventions); a parsed body that is not an object holding exactly an
 * `envelopes` array of at most 50 items is the literal 400 of 03 Errors/Ingestion.
 */
export function parseBatch(contentType: string | undefined, rawBody: Buffer): unknown[] {
  if (contentType === undefined || !JSON_MEDIA_TYPE.test(contentType)) throw new AppError('invalid_request');
  let body: unknown;
  try {
    body = JSON.parse(rawBody.toString('utf8'));
  } catch {
    throw new AppError('invalid_request');
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new BatchShapeError();
  const envelopes = (body as { envelopes?: unknown }).envelopes;
  if (!Array.isArray(envelopes) || Object.keys(body).length !== 1 || envelopes.length > MAX_ENVELOPES_PER_BATCH)
    throw new BatchShapeError();
  return envelopes;
}

export type ItemCheck = EnvelopeCheck;

/** What of the credential an item is checked against. */
export type ItemBinding = Pick<IngestCredential, 'integrationKey' | 'tenantId' | 'environmentId' | 'direction' | 'protocol'>;

const KNOWN_DIRECTIONS: ReadonlySet<unknown> = new Set(DIRECTIONS);
const KNOWN_PROTOCOLS: ReadonlySet<unknown> = new Set(PROTOCOLS);

/**
 * 03 Ingestion issue texts that bind an item to the authenticated credential. Scope fields
 * accept the placeholder or the credential's exact id. Only fields of the right type are
 * compared; wrong types are reported by the schema.
 */
function bindingIssues(item: Record<string, unknown>, credential: ItemBinding): string[] {
  const issues: string[] = [];
  if (typeof item.integrationId === 'string' && item.integrationId !== credential.integrationKey) {
    issues.push('integration does not match credential');
  }
  if (typeof item.tenantId === 'string' && item.tenantId !== TENANT_PLACEHOLDER && item.tenantId !== credential.tenantId) {
    issues.push('tenant does not match credential');
  }
  if (
    typeof item.environmentId === 'string'
    && item.environmentId !== ENVIRONMENT_PLACEHOLDER
    && item.environmentId !== credential.environmentId
  ) {
    issues.push('environment does not match credential');
  }
  const directionDiffers = KNOWN_DIRECTIONS.has(item.direction) && item.direction !== credential.direction;
  const protocolDiffers = KNOWN_PROTOCOLS.has(item.protocol) && item.protocol !== credential.protocol;
  if (directionDiffers || protocolDiffers) issues.push('integration is not available');
  return issues;
}

/** Binding issues first, then the field-level schema messages (03: one message per violation). */
export function checkItem(item: unknown, credential: ItemBinding): ItemCheck {
  const check = validateEnvelope(item);
  const binding =
    typeof item === 'object' && item !== null && !Array.isArray(item) ? bindingIssues(item as Record<string, unknown>, credential) : [];
  if (binding.length === 0) return check;
  return { valid: false, issues: check.valid ? binding : [...binding, ...check.issues] };
}
