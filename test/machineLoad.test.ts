import { describe, expect, it } from 'vitest';
import { MachineLoad, machineCpuTimes, type CpuTimes } from '../ingest/machineLoad.js';
import { LONG_WAIT_MIN_REQUESTS, longWaitPays } from '../ingest/pipeline.js';

// The machine's CPU saturation as the group commit reads it: shares of non-idle time between
// samples, with a gap between the level that makes it busy and the one that clears it.

/** Counters that advance by `busyShare` of 1,000 ms per sample. */
function counters(shares: number[]): () => CpuTimes {
  let idle = 0;
  let total = 0;
  let next = -1;
  return () => {
    if (next >= 0) {
      idle += 1000 * (1 - shares[next]);
      total += 1000;
    }
    next += 1;
    return { idle, total };
  };
}

describe('MachineLoad', () => {
  it('is busy from a sample at or above busyAbove until one falls below idleBelow', () => {
    const shares = [0.5, 0.96, 0.92, 0.9, 0.85, 0.93, 0.97];
    const load = new MachineLoad({ sampleMs: 0, busyAbove: 0.95, idleBelow: 0.9 }, counters(shares));
    const seen: boolean[] = [];
    for (let i = 0; i < shares.length; i += 1) {
      load.update();
      seen.push(load.busy);
    }
    expect(seen).toEqual([false, true, true, true, false, false, true]);
    load.stop();
  });

  it("reads the real machine's counters: they only grow, and idle is part of the total", () => {
    const first = machineCpuTimes();
    const load = new MachineLoad();
    expect(load.busy).toBe(false);
    load.update();
    load.stop();
    const second = machineCpuTimes();
    expect(first.total).toBeGreaterThan(0);
    expect(second.total).toBeGreaterThanOrEqual(first.total);
    expect(second.idle).toBeLessThanOrEqual(second.total);
  });
});

describe('longWaitPays', () => {
  it('holds only while the machine is busy and many requests are in progress', () => {
    expect(longWaitPays(true, LONG_WAIT_MIN_REQUESTS)).toBe(true);
    expect(longWaitPays(true, LONG_WAIT_MIN_REQUESTS - 1)).toBe(false);
    expect(longWaitPays(false, 10 * LONG_WAIT_MIN_REQUESTS)).toBe(false);
  });
});
