import type { SchemaShape } from '../../shared/analysis/types.js';

/**
 * A value of the observed shape (00-decisions §5 kinds): what a payload the collector described
 * could have been. Shapes carry no values, so any value of each kind serves.
 */
export function sampleOf(shape: SchemaShape): unknown {
  switch (shape.kind) {
    case 'object':
      return Object.fromEntries(Object.entries(shape.fields ?? {}).map(([name, field]) => [name, sampleOf(field)]));
    case 'array':
      return shape.items === undefined ? [] : [sampleOf(shape.items)];
    case 'string':
      return 'sample';
    case 'number':
      return 1.5;
    case 'integer':
      return 2;
    case 'boolean':
      return true;
    default:
      return null;
  }
}
