import type { ClickHouseClient } from '@clickhouse/client';
import { expect } from 'vitest';
import type { BootstrapResult } from '../../management/admin/bootstrap.js';
import type { SchemaShape } from '../../shared/analysis/types.js';
import { startAnalyzer } from './analyzer.js';
import { bootstrapWorkspace, type TestContext } from './context.js';
import { activateOk, registerDraft } from './contracts.js';
import { createCollector, envelope, sendEnvelopes, type Collector, type Edge } from './ingest.js';
import { waitFor } from './wait.js';

export interface DriftIncident {
  owner: BootstrapResult;
  collector: Collector;
  /** The contract version registered and activated first. */
  versionId: string;
  incidentId: string;
}

/**
 * A new workspace with a live connection whose contract is `document` (registered and activated),
 * two observations of `shape` sent through `edge`, and the open incident they make, analysed by a
 * real analyzer started for it and stopped after.
 */
export async function openDriftIncident(
  ctx: TestContext,
  clickhouse: ClickHouseClient,
  edge: Edge,
  input: { document: Record<string, unknown>; shape: SchemaShape },
): Promise<DriftIncident> {
  const owner = await bootstrapWorkspace(ctx);
  const collector = await createCollector(ctx, owner.apiKey.key, { mode: 'live' });
  const draft = await registerDraft(ctx, owner.apiKey.key, collector.connectionId, {
    declaredVersion: '1',
    format: 'openapi',
    document: input.document,
  });
  await activateOk(ctx, owner.apiKey.key, collector.connectionId, draft.contract.id, {
    expectedActiveContractVersionId: null,
    reason: 'promote',
  });
  const analyzer = await startAnalyzer(ctx, clickhouse, { roundIntervalMs: 20 });
  try {
    const payload = {
      storage: 'none',
      schemaFingerprint: `sha256:${'ef'.repeat(32)}`,
      schemaShape: input.shape,
      redactionPolicyVersion: '2025-01',
    };
    const sent = await sendEnvelopes(edge, collector, [envelope(collector, { payload }), envelope(collector, { payload })]);
    expect(sent.status, sent.text).toBe(202);
    const incidentId = await waitFor(
      async () => {
        const { rows } = await ctx.deps.pool.query<{ id: string; affected_records: string }>(
          "SELECT id, affected_records FROM incidents WHERE connection_id = $1 AND status = 'open'",
          [collector.connectionId],
        );
        return rows[0]?.affected_records === '2' ? rows[0].id : undefined;
      },
      30_000,
      'the drift incident',
    );
    return { owner, collector, versionId: draft.contract.id, incidentId };
  } finally {
    await analyzer.stop();
  }
}
