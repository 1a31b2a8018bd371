// createCollector: the public entry point. Nothing here throws into the host: every public
// method is wrapped, invalid options give a collector that sends nothing and says why
// (onConnectionCheck, `deliveryState: 'misconfigured'`), failures become counters.

import { DEFAULT_OBSERVATIONS_PER_MINUTE, DEFAULT_REQUESTS_PER_MINUTE, SlidingWindow } from './budget.js';
import { Delivery, MAX_ENVELOPE_BYTES, type MutableCounters } from './delivery.js';
import { learnedContract, type LearnedContract } from './contractRoutes.js';
import { buildEnvelope } from './envelope.js';
import { settingsOf, type Settings } from './options.js';
import type { Collector, CollectorCounters, CollectorOptions, ConnectionCheckResult, Direction, Observation, Protocol } from './types.js';
import { signedHeaders, Uploader } from './uploader.js';

const DEFAULT_CLOSE_TIMEOUT_MS = 5_000;
/** setTimeout's largest delay. */
const MAX_TIMER_MS = 2_147_483_647;

function newCounters(): MutableCounters {
  return {
    observed: 0,
    delivered: 0,
    failedBatches: 0,
    rejected: 0,
    dropped: 0,
    buildErrors: 0,
    skippedInspections: 0,
    pendingInspections: 0,
    quotaRejected: 0,
    quotaResetAtSeconds: 0,
    throttled: 0,
    connectionStatus: -1,
  };
}

/** Calls the host's callback; whatever it throws stays here. */
function report(callback: ((result: ConnectionCheckResult) => void) | undefined, result: ConnectionCheckResult): void {
  if (!callback) return;
  try {
    const returned = callback(result) as unknown;
    // An async callback's rejection must not become an unhandled rejection of the host.
    if (returned && typeof (returned as Promise<unknown>).catch === 'function') (returned as Promise<unknown>).catch(() => undefined);
  } catch {
    // the host's own callback failed: nothing to do
  }
}

/** A whole number above 0, or undefined. */
const positive = (value: unknown): number | undefined =>
  typeof value === 'number' && Number.isInteger(value) && value > 0 ? value : undefined;

/** The edge's budgets for this connection, from the connection check's `limits`, where it says. */
function edgeBudget(result: ConnectionCheckResult): { observationsPerMinute?: number; requestsPerMinute?: number } {
  if (!result.ok) return {};
  const limits = (result.body as { limits?: { observationsPerMinute?: unknown; requestsPerMinute?: unknown } } | undefined)?.limits;
  return { observationsPerMinute: positive(limits?.observationsPerMinute), requestsPerMinute: positive(limits?.requestsPerMinute) };
}

/** The signed `GET <endpoint>/v1/collector/connection` (signature over `<t>.` and the empty body). Never rejects. */
async function checkConnection(settings: Settings, uploader: Uploader): Promise<ConnectionCheckResult> {
  try {
    const answer = await uploader.send(settings.connectionUrl, 'GET', signedHeaders(settings, '', settings.clock()));
    let body: unknown;
    try {
      body = answer.body === '' ? undefined : JSON.parse(answer.body);
    } catch {
      body = undefined;
    }
    const ok = answer.status === 200;
    const result: ConnectionCheckResult = { ok, status: answer.status };
    if (body !== undefined) result.body = body;
    if (!ok) {
      const code = (body as { error?: unknown } | undefined)?.error;
      const reason = (body as { reason?: unknown } | undefined)?.reason;
      result.error =
        answer.status === 0
          ? `no answer from the edge: ${answer.error ?? 'unknown error'}`
          : `the edge answered ${answer.status}${typeof code === 'string' ? ` ${code}` : ''}${typeof reason === 'string' ? ` (${reason})` : ''}`;
    }
    return result;
  } catch (error) {
    return { ok: false, status: 0, error: error instanceof Error ? error.message : 'connection check failed' };
  }
}

const DISABLED_DIRECTION: Direction = 'outbound';
const DISABLED_PROTOCOL: Protocol = 'http-api';

export function createCollector(options: CollectorOptions): Collector {
  const counters = newCounters();
  let settings: Settings | undefined;
  let configError: string | undefined;
  try {
    const checked = settingsOf(options);
    if ('error' in checked) configError = checked.error;
    else settings = checked.settings;
  } catch (error) {
    configError = error instanceof Error ? error.message : 'invalid options';
  }

  const beginInspection = (): (() => void) => {
    let done = false;
    try {
      counters.pendingInspections++;
    } catch {
      // never throws
    }
    return () => {
      if (done) return;
      done = true;
      counters.pendingInspections--;
    };
  };

  if (!settings) {
    // Misconfigured: nothing is sent; every observation is a buildError, the reason is reported once.
    const error = `invalid collector options: ${configError ?? 'unknown'}`;
    const callback = typeof options?.onConnectionCheck === 'function' ? options.onConnectionCheck : undefined;
    setImmediate(() => report(callback, { ok: false, status: 0, error })).unref();
    return {
      observe() {
        counters.buildErrors++;
      },
      admit() {
        counters.buildErrors++;
        return false;
      },
      observeAdmitted() {
        counters.buildErrors++;
      },
      flush: () => Promise.resolve(),
      close: () => Promise.resolve(),
      counters: () => ({ ...counters, deliveryState: 'misconfigured' }),
      beginInspection,
      isOwnRequest: () => false,
      direction: typeof options?.direction === 'string' ? options.direction : DISABLED_DIRECTION,
      protocol: typeof options?.protocol === 'string' ? options.protocol : DISABLED_PROTOCOL,
    };
  }

  const s = settings;
  const uploader = new Uploader(s.ingestUrl.protocol, s.requestTimeoutMs);
  const observationsPerMinute = s.maxObservationsPerMinute ?? DEFAULT_OBSERVATIONS_PER_MINUTE;
  const delivery = new Delivery(s, uploader, counters, s.maxRequestsPerMinute ?? DEFAULT_REQUESTS_PER_MINUTE, observationsPerMinute);
  // Observations built in any 60 seconds of the collector's clock (budget.ts).
  const budget = new SlidingWindow(observationsPerMinute);

  // The active contract's route templates (HTTP collectors): replaced when a check names another
  // version, dropped when it names none, kept when a check fails.
  let learned: LearnedContract | undefined;
  const learnRoutes = (result: ConnectionCheckResult): void => {
    try {
      if (!result.ok || typeof result.body !== 'object' || result.body === null || !('activeContractVersionId' in result.body)) return;
      const versionId = (result.body as { activeContractVersionId: unknown }).activeContractVersionId;
      if (versionId !== learned?.versionId) learned = learnedContract(result.body);
    } catch {
      // Keep what was learned.
    }
  };
  const learnsRoutes = s.protocol === 'http-api' || s.protocol === 'http-webhook';
  let refresh: NodeJS.Timeout | undefined;

  if (s.connectionCheck) {
    void checkConnection(s, uploader).then((result) => {
      counters.connectionStatus = result.status;
      if (learnsRoutes) learnRoutes(result);
      // Where no explicit budget is given, the edge's own for this connection applies.
      const edge = edgeBudget(result);
      const observations = s.maxObservationsPerMinute === undefined ? edge.observationsPerMinute : undefined;
      const requests = s.maxRequestsPerMinute === undefined ? edge.requestsPerMinute : undefined;
      if (observations !== undefined) budget.setLimit(observations);
      delivery.setBudget(requests, observations);
      report(s.onConnectionCheck, result);
    });
    if (learnsRoutes && s.contractRefreshIntervalMs > 0) {
      // Repeated to notice an activation; one at a time, and none once delivery stopped for good.
      let checking = false;
      refresh = setInterval(() => {
        const state = delivery.state();
        if (checking || state === 'closed' || state === 'unauthenticated') return;
        checking = true;
        void checkConnection(s, uploader)
          .then(learnRoutes)
          .finally(() => {
            checking = false;
          });
      }, s.contractRefreshIntervalMs);
      refresh.unref();
    }
  }

  /** Whether an observation starting now is built; when not, counted where it belongs. */
  const admit = (): boolean => {
    if (!delivery.admit()) return false;
    if (budget.take(s.clock())) return true;
    counters.throttled++;
    return false;
  };

  const build = (observation: Observation): void => {
    const built = buildEnvelope(observation, s);
    if (built.inspected === false) counters.skippedInspections++;
    if (!built.ok || built.bytes > MAX_ENVELOPE_BYTES) {
      counters.buildErrors++;
      return;
    }
    delivery.enqueue(built.eventId, built.text, built.bytes);
  };

  return {
    direction: s.direction,
    protocol: s.protocol,

    observe(observation: Observation): void {
      try {
        if (admit()) build(observation);
      } catch {
        counters.buildErrors++;
      }
    },

    admit(): boolean {
      try {
        return admit();
      } catch {
        return false;
      }
    },

    observeAdmitted(observation: Observation): void {
      try {
        // Delivery may have stopped since admit() (close, a 401, a quota pause): counted there.
        if (delivery.admit()) build(observation);
      } catch {
        counters.buildErrors++;
      }
    },

    flush(): Promise<void> {
      try {
        return delivery.flush().catch(() => undefined);
      } catch {
        return Promise.resolve();
      }
    },

    close(timeoutMs?: number): Promise<void> {
      try {
        const timeout =
          typeof timeoutMs === 'number' && Number.isFinite(timeoutMs)
            ? Math.min(Math.max(0, Math.floor(timeoutMs)), MAX_TIMER_MS)
            : DEFAULT_CLOSE_TIMEOUT_MS;
        clearInterval(refresh);
        return delivery.close(timeout).catch(() => undefined);
      } catch {
        return Promise.resolve();
      }
    },

    counters(): CollectorCounters {
      try {
        const deliveryState = delivery.state(); // first: it may end a quota pause
        return { ...counters, deliveryState, ...(learned ? { contractVersionId: learned.versionId } : {}) };
      } catch {
        return { ...counters };
      }
    },

    beginInspection,

    learnedRoute(method: string, path: string): string | undefined {
      return learned?.match(method, path);
    },

    isOwnRequest(url: string | URL): boolean {
      try {
        const target = url instanceof URL ? url : new URL(String(url));
        if (target.origin !== s.origin) return false;
        return s.basePath === '' || target.pathname === s.basePath || target.pathname.startsWith(`${s.basePath}/`);
      } catch {
        return false;
      }
    },
  };
}
