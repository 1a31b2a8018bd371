import { Counter, Gauge, Histogram, Summary, type Registry } from 'prom-client';

/** The analyzer's counters (README "Metrics"). */
export function analyzerMetrics(registry: Registry) {
  const registers = [registry];
  return {
    jobs: new Counter({
      name: 'analyzer_jobs_total',
      help: 'Analysis jobs (stream entries) handled, by outcome',
      labelNames: ['outcome'],
      registers,
    }),
    envelopes: new Counter({ name: 'analyzer_envelopes_analysed_total', help: 'Observations analysed by live analysis', registers }),
    lag: new Gauge({ name: 'analyzer_lag_seconds', help: 'Receipt to committed analysis, of the last analysed batch', registers }),
    lagHistogram: new Histogram({
      name: 'analyzer_lag_histogram_seconds',
      help: 'Receipt to committed analysis, per batch',
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60],
      registers,
    }),
    lagQuantiles: new Summary({
      name: 'analyzer_lag_quantiles_seconds',
      help: 'Receipt to committed analysis, per batch, over the last 10 minutes',
      percentiles: [0.5, 0.9, 0.99],
      maxAgeSeconds: 600,
      ageBuckets: 5,
      registers,
    }),
    findings: new Counter({
      name: 'analyzer_findings_total',
      help: 'Findings by kind (observations × findings)',
      labelNames: ['kind'],
      registers,
    }),
    repairs: new Counter({
      name: 'analyzer_repairs_total',
      help: 'Repair proposals worked, by outcome (recorded, superseded by a later attempt, attempts exhausted)',
      labelNames: ['outcome'],
      registers,
    }),
    incidentsOpened: new Counter({ name: 'analyzer_incidents_opened_total', help: 'Incidents opened', registers }),
    incidentsResolved: new Counter({ name: 'analyzer_incidents_resolved_total', help: 'Incidents resolved by reanalysis', registers }),
    comparisons: new Counter({ name: 'analyzer_comparisons_total', help: 'Shape comparisons computed (memo misses)', registers }),
    memoHits: new Counter({ name: 'analyzer_memo_hits_total', help: 'Shape comparisons answered by the memo', registers }),
    reanalyses: new Counter({
      name: 'analyzer_reanalyses_total',
      help: 'Reanalysis jobs handled, by outcome',
      labelNames: ['outcome'],
      registers,
    }),
    ruleSources: new Counter({
      name: 'analyzer_rule_sources_total',
      help: 'Source observations of enabled reconciliation rules evaluated',
      registers,
    }),
    ruleDeadlines: new Counter({
      name: 'analyzer_rule_deadlines_total',
      help: 'Reconciliation deadlines taken at stream time, by outcome: fired, or cleared (satisfied by a stored outcome, or the rule changed)',
      labelNames: ['outcome'],
      registers,
    }),
    ruleStreamLag: new Gauge({
      name: 'analyzer_rule_stream_time_lag_seconds',
      help: 'Service clock minus stream time when deadlines were last due: how long verdicts wait for unanalysed or unsettled observations',
      registers,
    }),
    backlog: new Gauge({
      name: 'analyzer_stream_backlog',
      help: 'Stream entries not yet delivered to the group (lag) at the last check',
      registers,
    }),
  };
}

export type AnalyzerMetrics = ReturnType<typeof analyzerMetrics>;
