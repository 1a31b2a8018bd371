// Shape and finding builders for comparison tests (00-decisions §5 shapes, the analyzer's findings).

import type { Finding, SchemaShape } from '../../shared/analysis/index.js';

export const S: SchemaShape = { kind: 'string' };
export const I: SchemaShape = { kind: 'integer' };
export const N: SchemaShape = { kind: 'number' };
export const B: SchemaShape = { kind: 'boolean' };
export const NULL: SchemaShape = { kind: 'null' };
export const obj = (fields: Record<string, SchemaShape>): SchemaShape => ({ kind: 'object', fields });
export const arr = (items?: SchemaShape): SchemaShape => (items === undefined ? { kind: 'array' } : { kind: 'array', items });

export const mismatch = (path: string, expected: string, observed: string): Finding => ({
  kind: 'type_mismatch',
  path,
  expected,
  observed,
});
export const undeclared = (path: string, observed: string, forbidden = false): Finding => ({
  kind: 'undeclared_field',
  path,
  expected: forbidden ? 'forbidden' : 'undeclared',
  observed,
  forbidden,
});
export const missing = (path: string, expected: string): Finding => ({
  kind: 'required_field_missing',
  path,
  expected,
  observed: 'absent',
});
