// What every helper shares: recording that cannot throw into the host, and the clock.

import { performance } from 'node:perf_hooks';
import type { Collector, Observation } from '../types.js';

/** Queues an observation; a failure of the collector never reaches the host. */
export function record(collector: Collector, observation: Observation): void {
  try {
    collector.observe(observation);
  } catch {
    // Collector.observe never throws; if one did, the host must not notice.
  }
}

/** Whether the collector observes an operation starting now (Collector.admit); false if it throws. */
export function admitted(collector: Collector): boolean {
  try {
    return collector.admit() === true;
  } catch {
    return false;
  }
}

/** Queues an observation `admitted` let in; a failure of the collector never reaches the host. */
export function recordAdmitted(collector: Collector, observation: Observation): void {
  try {
    collector.observeAdmitted(observation);
  } catch {
    // Collector.observeAdmitted never throws; if one did, the host must not notice.
  }
}

/** A monotonic start mark plus the wall-clock time the operation began. */
export interface Started {
  mark: number;
  at: number;
}

export const start = (): Started => ({ mark: performance.now(), at: Date.now() });

/** Milliseconds since `started`, rounded to microseconds. */
export const elapsed = (started: Started): number => Math.max(0, Math.round((performance.now() - started.mark) * 1000) / 1000);

/** Runs a function of the host (a callback option) and returns its result, or undefined if it throws. */
export function tryCall<T>(fn: (() => T) | undefined): T | undefined {
  if (!fn) return undefined;
  try {
    return fn();
  } catch {
    return undefined;
  }
}
