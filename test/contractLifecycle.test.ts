import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BootstrapResult } from '../management/admin/bootstrap.js';
import { bootstrapWorkspace, createTestContext, type TestContext } from './helpers/context.js';
import { createIntegration } from './helpers/integrations.js';
import {
  activateOk,
  activateVersion,
  contractState,
  loadCorpusDocument,
  openApiRegistration,
  ordersOpenApi,
  registerDraft,
  registerVersion,
  type ContractState,
} from './helpers/contracts.js';

// 01 "Contract version lifecycle", row by row (issue 3, Done means): every row of the table,
// plus the rules under it (an active or superseded version is never an identical draft retry)
// and the invalid moves this build decides (docs/decisions/contracts.md).

let ctx: TestContext;
let boot: BootstrapResult;
beforeAll(async () => {
  ctx = await createTestContext();
  boot = await bootstrapWorkspace(ctx);
});
afterAll(async () => {
  await ctx.close();
});

/** Where a row starts: which versions exist and in which state. A and B are the two labels. */
type Start = 'none' | 'draft' | 'draft beside active' | 'active' | 'superseded';

interface Scenario {
  connectionId: string;
  ids: { A?: string; B?: string };
}

const bodyA = () => openApiRegistration('A', ordersOpenApi(0));
const bodyB = () => openApiRegistration('B', loadCorpusDocument('oai-petstore-v3.0.json'));

/** Builds the start state through the public routes only. */
async function arrange(start: Start): Promise<Scenario> {
  const key = boot.apiKey.key;
  const connectionId = (await createIntegration(ctx, key, { mode: 'sandbox' })).integration.connectionId;
  const ids: Scenario['ids'] = {};
  if (start === 'none') return { connectionId, ids };
  ids.A = (await registerDraft(ctx, key, connectionId, bodyA())).contract.id;
  if (start === 'draft') return { connectionId, ids };
  await activateOk(ctx, key, connectionId, ids.A, { expectedActiveContractVersionId: null, reason: 'promote' });
  if (start === 'active') return { connectionId, ids };
  ids.B = (await registerDraft(ctx, key, connectionId, bodyB())).contract.id;
  if (start === 'draft beside active') return { connectionId, ids };
  await activateOk(ctx, key, connectionId, ids.B, { expectedActiveContractVersionId: ids.A, reason: 'promote' });
  return { connectionId, ids };
}

type Trigger =
  | { kind: 'register'; body: () => Record<string, unknown> }
  | { kind: 'activate'; target: 'A' | 'B'; reason: 'promote' | 'rollback'; precondition: 'current' | 'stale' };

type Outcome =
  | { status: 201; draft: 'new' | 'same as A' }
  | { status: 200; targetTo: 'active'; previousTo: 'superseded' | null }
  | { status: 409; error: string };

interface Row {
  from: Start;
  trigger: string;
  condition: string;
  act: Trigger;
  outcome: Outcome;
}

const STALE_ID = 'cv_01jx0000000000000000000000';

const table: Row[] = [
  // (none) --register draft--> draft: no analysis enqueued; active unchanged; audit written.
  {
    from: 'none',
    trigger: 'register draft',
    condition: 'valid document; no conflicting version',
    act: { kind: 'register', body: bodyA },
    outcome: { status: 201, draft: 'new' },
  },
  {
    from: 'draft',
    trigger: 'register draft',
    condition: 'another label',
    act: { kind: 'register', body: bodyB },
    outcome: { status: 201, draft: 'new' },
  },
  // draft --register again, identical--> draft (same version): 201, no new version, no audit.
  {
    from: 'draft',
    trigger: 'register again, identical',
    condition: 'same label, document, format, selectors and schemas',
    act: { kind: 'register', body: bodyA },
    outcome: { status: 201, draft: 'same as A' },
  },
  {
    from: 'draft',
    trigger: 'register again, identical',
    condition: 'same document with members in another order',
    act: { kind: 'register', body: () => openApiRegistration('A', reorder(ordersOpenApi(0))) },
    outcome: { status: 201, draft: 'same as A' },
  },
  {
    from: 'draft',
    trigger: 'register again, changed',
    condition: 'same label, another document',
    act: { kind: 'register', body: () => openApiRegistration('A', ordersOpenApi(1)) },
    outcome: { status: 409, error: 'contract_version_already_exists' },
  },
  {
    from: 'draft',
    trigger: 'register again, changed',
    condition: 'same label, another format and selector',
    act: {
      kind: 'register',
      body: () => ({
        declaredVersion: 'A',
        format: 'json-schema',
        document: { type: 'object' },
        operation: { method: 'POST', routeTemplate: '/v1/orders', payloadLocation: 'request', statusSelector: 'default' },
      }),
    },
    outcome: { status: 409, error: 'contract_version_already_exists' },
  },
  // An active or superseded version is never an identical draft retry.
  {
    from: 'active',
    trigger: 'register again, identical',
    condition: 'label of the active version',
    act: { kind: 'register', body: bodyA },
    outcome: { status: 409, error: 'contract_version_already_exists' },
  },
  {
    from: 'superseded',
    trigger: 'register again, identical',
    condition: 'label of a superseded version',
    act: { kind: 'register', body: bodyA },
    outcome: { status: 409, error: 'contract_version_already_exists' },
  },
  // draft --activate--> active: previous active superseded; revision, audit, reanalysis in one transaction.
  {
    from: 'draft',
    trigger: 'activate',
    condition: 'precondition null equals no active version',
    act: { kind: 'activate', target: 'A', reason: 'promote', precondition: 'current' },
    outcome: { status: 200, targetTo: 'active', previousTo: null },
  },
  {
    from: 'draft beside active',
    trigger: 'activate',
    condition: 'precondition equals the active id',
    act: { kind: 'activate', target: 'B', reason: 'promote', precondition: 'current' },
    outcome: { status: 200, targetTo: 'active', previousTo: 'superseded' },
  },
  // superseded --activate, reason rollback--> active: same effects as activation.
  {
    from: 'superseded',
    trigger: 'activate, reason rollback',
    condition: 'precondition matches',
    act: { kind: 'activate', target: 'A', reason: 'rollback', precondition: 'current' },
    outcome: { status: 200, targetTo: 'active', previousTo: 'superseded' },
  },
  // any --activate, precondition stale--> unchanged: 409 active_contract_changed, nothing written.
  {
    from: 'draft',
    trigger: 'activate',
    condition: 'precondition stale',
    act: { kind: 'activate', target: 'A', reason: 'promote', precondition: 'stale' },
    outcome: { status: 409, error: 'active_contract_changed' },
  },
  {
    from: 'draft beside active',
    trigger: 'activate',
    condition: 'precondition stale (null while one is active)',
    act: { kind: 'activate', target: 'B', reason: 'promote', precondition: 'stale' },
    outcome: { status: 409, error: 'active_contract_changed' },
  },
  {
    from: 'active',
    trigger: 'activate',
    condition: 'precondition stale',
    act: { kind: 'activate', target: 'A', reason: 'promote', precondition: 'stale' },
    outcome: { status: 409, error: 'active_contract_changed' },
  },
  {
    from: 'superseded',
    trigger: 'activate, reason rollback',
    condition: 'precondition stale',
    act: { kind: 'activate', target: 'A', reason: 'rollback', precondition: 'stale' },
    outcome: { status: 409, error: 'active_contract_changed' },
  },
  // any --activate, invalid lifecycle move--> unchanged: 409 contract_not_activatable.
  {
    from: 'active',
    trigger: 'activate',
    condition: 'target already active (promote)',
    act: { kind: 'activate', target: 'A', reason: 'promote', precondition: 'current' },
    outcome: { status: 409, error: 'contract_not_activatable' },
  },
  {
    from: 'active',
    trigger: 'activate, reason rollback',
    condition: 'target already active',
    act: { kind: 'activate', target: 'A', reason: 'rollback', precondition: 'current' },
    outcome: { status: 409, error: 'contract_not_activatable' },
  },
  {
    from: 'superseded',
    trigger: 'activate, reason promote',
    condition: 'a superseded version is reactivated only by rollback',
    act: { kind: 'activate', target: 'A', reason: 'promote', precondition: 'current' },
    outcome: { status: 409, error: 'contract_not_activatable' },
  },
  {
    from: 'draft',
    trigger: 'activate, reason rollback',
    condition: 'a draft was never active',
    act: { kind: 'activate', target: 'A', reason: 'rollback', precondition: 'current' },
    outcome: { status: 409, error: 'contract_not_activatable' },
  },
];

/** The same JSON with every object's members in reverse order. */
function reorder(value: unknown): Record<string, unknown> {
  const walk = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(walk);
    if (typeof node !== 'object' || node === null) return node;
    return Object.fromEntries(
      Object.entries(node)
        .reverse()
        .map(([key, child]) => [key, walk(child)]),
    );
  };
  return walk(value) as Record<string, unknown>;
}

async function run(scenario: Scenario, act: Trigger, before: ContractState) {
  const key = boot.apiKey.key;
  if (act.kind === 'register') return registerVersion(ctx, key, scenario.connectionId, act.body());
  const target = scenario.ids[act.target] as string;
  const current = before.activeContractVersionId;
  const expected = act.precondition === 'current' ? current : current === null ? STALE_ID : null;
  return activateVersion(ctx, key, scenario.connectionId, target, { expectedActiveContractVersionId: expected, reason: act.reason });
}

describe('contract version lifecycle (01), table-driven', () => {
  it.each(table)('$from --$trigger [$condition]--> $outcome.status', async (row) => {
    const scenario = await arrange(row.from);
    const before = await contractState(ctx, scenario.connectionId);
    const res = await run(scenario, row.act, before);
    const after = await contractState(ctx, scenario.connectionId);
    expect(res.statusCode, res.body).toBe(row.outcome.status);
    const outcome = row.outcome;

    if (outcome.status === 409) {
      const body =
        outcome.error === 'active_contract_changed'
          ? { error: 'active_contract_changed', activeContractVersionId: before.activeContractVersionId }
          : { error: outcome.error };
      expect(res.json()).toEqual(body);
      // Nothing written: no version, operation, activation, audit, job, revision or status change.
      expect(after).toEqual(before);
      return;
    }

    if (outcome.status === 201) {
      const body = res.json();
      expect(body.contract.lifecycleStatus).toBe('draft');
      // No analysis enqueued and the active version unchanged.
      expect(after.outbox).toBe(before.outbox);
      expect(after.activations).toBe(before.activations);
      expect(after.activeContractVersionId).toBe(before.activeContractVersionId);
      expect(after.analysisRevision).toBe(before.analysisRevision);
      if (outcome.draft === 'same as A') {
        expect(body.contract.id).toBe(scenario.ids.A);
        // No new version, no audit event, no revision change.
        expect(after).toEqual(before);
      } else {
        expect(Object.keys(scenario.ids)).not.toContain(body.contract.id);
        expect(after.versions).toBe(before.versions + 1);
        expect(after.audits).toBe(before.audits + 1);
        expect(after.revision).not.toBe(before.revision);
        expect(body.connectionRevision).toBe(after.revision);
        expect(after.statuses[body.contract.id]).toBe('draft');
      }
      return;
    }

    const act = row.act as Extract<Trigger, { kind: 'activate' }>;
    const target = scenario.ids[act.target] as string;
    const body = res.json();
    expect(body).toEqual({
      activationId: expect.stringMatching(/^act_[0-9a-z]{26}$/),
      activeContractVersionId: target,
      previousActiveContractVersionId: before.activeContractVersionId,
      revision: before.analysisRevision + 1,
    });
    expect(after.statuses[target]).toBe('active');
    if (outcome.previousTo === null) expect(before.activeContractVersionId).toBeNull();
    else expect(after.statuses[before.activeContractVersionId as string]).toBe('superseded');
    // Every other version keeps its state.
    for (const [id, status] of Object.entries(before.statuses)) {
      if (id !== target && id !== before.activeContractVersionId) expect(after.statuses[id]).toBe(status);
    }
    // New revision and audit event recorded; reanalysis enqueued, all in one transaction.
    expect(after.activeContractVersionId).toBe(target);
    expect(after.analysisRevision).toBe(before.analysisRevision + 1);
    expect(after.revision).not.toBe(before.revision);
    expect(after.activations).toBe(before.activations + 1);
    expect(after.audits).toBe(before.audits + 1);
    expect(after.outbox).toBe(before.outbox + 1);
    expect(after.versions).toBe(before.versions);
    const job = await ctx.deps.pool.query("SELECT payload FROM outbox WHERE topic = 'reanalysis' AND payload->>'activationId' = $1", [
      body.activationId,
    ]);
    expect(job.rows.map((r) => r.payload)).toEqual([
      {
        connectionId: scenario.connectionId,
        contractVersionId: target,
        previousActiveContractVersionId: before.activeContractVersionId,
        activationId: body.activationId,
        analysisRevision: body.revision,
      },
    ]);
  });

  it('covers every row of the specification table', () => {
    const rows = new Set(
      table.map((row) => `${row.from}|${row.act.kind}|${row.outcome.status}|${'error' in row.outcome ? row.outcome.error : ''}`),
    );
    for (const needed of [
      'none|register|201|',
      'draft|register|201|',
      'draft|activate|200|',
      'superseded|activate|200|',
      'draft|activate|409|active_contract_changed',
      'active|activate|409|active_contract_changed',
      'superseded|activate|409|active_contract_changed',
      'active|activate|409|contract_not_activatable',
      'draft|activate|409|contract_not_activatable',
      'superseded|activate|409|contract_not_activatable',
      'active|register|409|contract_version_already_exists',
      'superseded|register|409|contract_version_already_exists',
    ])
      expect(rows, needed).toContain(needed);
  });

  it('walks promote → promote → rollback → rollback with one active version at every step', async () => {
    const key = boot.apiKey.key;
    const { connectionId, ids } = await arrange('superseded');
    const A = ids.A as string;
    const B = ids.B as string;
    const back = await activateOk(ctx, key, connectionId, A, { expectedActiveContractVersionId: B, reason: 'rollback' });
    expect(back).toMatchObject({ activeContractVersionId: A, previousActiveContractVersionId: B, revision: 3 });
    const forth = await activateOk(ctx, key, connectionId, B, { expectedActiveContractVersionId: A, reason: 'rollback' });
    expect(forth).toMatchObject({ activeContractVersionId: B, previousActiveContractVersionId: A, revision: 4 });
    const state = await contractState(ctx, connectionId);
    expect(state.statuses).toEqual({ [A]: 'superseded', [B]: 'active' });
    expect(state.activations).toBe(4);
    const history = await ctx.deps.pool.query(
      'SELECT contract_version_id, previous_active_contract_version_id, reason, analysis_revision FROM contract_activations WHERE connection_id = $1 ORDER BY analysis_revision',
      [connectionId],
    );
    expect(history.rows).toEqual([
      { contract_version_id: A, previous_active_contract_version_id: null, reason: 'promote', analysis_revision: 1 },
      { contract_version_id: B, previous_active_contract_version_id: A, reason: 'promote', analysis_revision: 2 },
      { contract_version_id: A, previous_active_contract_version_id: B, reason: 'rollback', analysis_revision: 3 },
      { contract_version_id: B, previous_active_contract_version_id: A, reason: 'rollback', analysis_revision: 4 },
    ]);
  });
});
