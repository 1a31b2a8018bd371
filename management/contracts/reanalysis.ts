import type { FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import type { Queryable } from '../../shared/db/pool.js';
import { REANALYSIS_TOPIC, type ReanalysisJob } from '../../shared/analysis/reanalysisJob.js';
import { AppError } from '../../shared/errors/index.js';

/** How long a health probe of the analysis queue may take before reanalysis counts as unavailable. */
const PROBE_TIMEOUT_MS = 1000;

/** True when the analysis queue (Redis, 00-decisions §1) answers a ping in time. */
export async function isReanalysisAvailable(redis: Redis): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), PROBE_TIMEOUT_MS);
  });
  try {
    return await Promise.race([
      redis.ping().then(
        (answer) => answer === 'PONG',
        () => false,
      ),
      timeout,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * onRequest hook of the activation route, after authentication and before the write-pause check
 * (which needs Redis too): 01 Activate, "when reanalysis is unavailable the activation is not
 * attempted: 503 `service_unavailable`".
 */
export async function requireReanalysisAvailable(request: FastifyRequest): Promise<void> {
  if (!(await isReanalysisAvailable(request.server.deps.redis))) throw new AppError('service_unavailable');
}

/** Writes the reanalysis job in the activation's transaction (01: all in one transaction). */
export async function enqueueReanalysis(db: Queryable, job: ReanalysisJob, now: Date): Promise<void> {
  await db.query('INSERT INTO outbox (topic, payload, created_at) VALUES ($1, $2, $3)', [REANALYSIS_TOPIC, JSON.stringify(job), now]);
}
