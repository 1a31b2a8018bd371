import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** Seconds elapsed since `started` (a `process.hrtime.bigint()` reading), as histograms take them. */
export const secondsSince = (started: bigint): number => Number(process.hrtime.bigint() - started) / 1e9;

/** A Prometheus registry per process with the default process metrics. */
export function createMetricsRegistry(processName: string): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ process: processName });
  collectDefaultMetrics({ register: registry });
  return registry;
}

export function httpMetrics(registry: Registry) {
  return {
    requests: new Counter({
      name: 'http_requests_total',
      help: 'HTTP requests by route and status',
      labelNames: ['method', 'route', 'status'],
      registers: [registry],
    }),
    duration: new Histogram({
      name: 'http_request_duration_seconds',
      help: 'HTTP request duration',
      labelNames: ['method', 'route'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers: [registry],
    }),
  };
}
