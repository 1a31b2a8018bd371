import { createHash } from 'node:crypto';
import { canonicalJson } from './canonicalJson.js';
import { PLACEHOLDER_SHAPE } from './shape.js';
import type { SchemaShape } from './types.js';

/** 00-decisions §4: `sha256:` + hex SHA-256 over the RFC 8785 canonical JSON. */
export function fingerprintOfCanonical(canonical: string): string {
  return `sha256:${createHash('sha256').update(canonical, 'utf8').digest('hex')}`;
}

export function fingerprint(value: unknown): string {
  return fingerprintOfCanonical(canonicalJson(value));
}

export interface ShapeDigest {
  text: string;
  fingerprint: string;
  /** UTF-8 length of `text` (field names may be any text). */
  bytes: number;
}

/** The canonical text and fingerprint of a shape (the text is also what the envelope carries). */
export function shapeDigest(shape: SchemaShape): ShapeDigest {
  const text = canonicalJson(shape);
  return { text, fingerprint: fingerprintOfCanonical(text), bytes: Buffer.byteLength(text, 'utf8') };
}

const PLACEHOLDER_TEXT = canonicalJson(PLACEHOLDER_SHAPE);

/** The placeholder shape of a body that was not inspected (constant). */
export const PLACEHOLDER_DIGEST: Readonly<ShapeDigest> = Object.freeze({
  text: PLACEHOLDER_TEXT,
  fingerprint: fingerprintOfCanonical(PLACEHOLDER_TEXT),
  bytes: Buffer.byteLength(PLACEHOLDER_TEXT, 'utf8'),
});
