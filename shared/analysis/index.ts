// Shape analysis (00-decisions §5): operation matching, structural comparison, coverage.

export type { AnalysedOperation, Finding, FindingKind, ObservedOperation, SchemaShape } from './types.js';
export { compileContract, compileSchema, describeKinds, type CompiledContract, type CompiledSchema } from './compile.js';
export { ARRAY_ITEMS_TOKEN, compareShape, transportErrorFinding, unknownOperationFinding } from './compare.js';
export { declaredPointers, fieldCoverage, observedPointers, unobservedPointers } from './coverage.js';
