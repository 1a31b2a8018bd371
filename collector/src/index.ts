export { createCollector } from './collector.js';
export type {
  Collector,
  CollectorCounters,
  CollectorOptions,
  ConnectionCheckResult,
  Direction,
  Observation,
  ObservedBody,
  PayloadLocation,
  Protocol,
  SchemaShape,
} from './types.js';
export * from './instrument/index.js';
