import { cpus } from 'node:os';

/** Cumulative CPU time of all of the machine's cores (os.cpus(), milliseconds). */
export interface CpuTimes {
  idle: number;
  total: number;
}

export function machineCpuTimes(): CpuTimes {
  let idle = 0;
  let total = 0;
  for (const { times } of cpus()) {
    idle += times.idle;
    total += times.user + times.nice + times.sys + times.idle + times.irq;
  }
  return { idle, total };
}

export interface MachineLoadOptions {
  sampleMs: number;
  /** Busy from a sample whose share of non-idle CPU time reaches this... */
  busyAbove: number;
  /** ...until a sample falls below this one (apart, so that it does not flap). */
  idleBelow: number;
}

const DEFAULT_MACHINE_LOAD_OPTIONS: MachineLoadOptions = { sampleMs: 500, busyAbove: 0.95, idleBelow: 0.9 };

/**
 * Whether the machine's cores are saturated, from the share of their time that was not idle over
 * the last sample. The group commit reads it (ingest/groupCommit.ts): while the cores are
 * saturated, a longer wait makes fewer, larger ClickHouse inserts, whose parts cost ClickHouse
 * much less CPU to write and merge, and that CPU goes to the requests; while they are not, CPU
 * is not what limits, and the short wait keeps answers quick.
 */
export class MachineLoad {
  private busyNow = false;
  private last: CpuTimes;
  private readonly timer: NodeJS.Timeout | null;

  /** `sample`: the machine's counters (tests give their own); `sampleMs` 0: sampled only by update(). */
  constructor(private readonly options: MachineLoadOptions = DEFAULT_MACHINE_LOAD_OPTIONS, private readonly sample: () => CpuTimes = machineCpuTimes) {
    this.last = sample();
    this.timer = options.sampleMs > 0 ? setInterval(() => this.update(), options.sampleMs) : null;
    this.timer?.unref();
  }

  get busy(): boolean {
    return this.busyNow;
  }

  /** Takes a sample: the share of non-idle time since the previous one decides `busy`. */
  update(): void {
    const now = this.sample();
    const total = now.total - this.last.total;
    const idle = now.idle - this.last.idle;
    this.last = now;
    if (total <= 0) return;
    const share = 1 - idle / total;
    if (share >= this.options.busyAbove) this.busyNow = true;
    else if (share < this.options.idleBelow) this.busyNow = false;
  }

  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
  }
}
