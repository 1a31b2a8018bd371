export * from './types.js';
export { SCHEMA_SHAPE_SCHEMA, envelopeSchema } from './schemas.js';
export { validateEnvelope, timestampMs, concreteSegment, MAX_ISSUES_PER_ENVELOPE, type EnvelopeCheck } from './validate.js';
