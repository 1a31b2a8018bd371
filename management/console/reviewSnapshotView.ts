// The parts the setup and copy pages share: the selection tables a preview posts, and a review's
// snapshot (02 "Review snapshot") in readable tables and whole as JSON, its fingerprints, its
// expiry, the Apply form, and the artifact mappings and proof of a receipt.

import { isAppError } from '../../shared/errors/index.js';
import type { CopiedArtifacts, SnapshotContract, SnapshotRule } from '../configuration/artifacts.js';
import type { Proof } from '../configuration/snapshot.js';
import type { Mode } from '../connections/connectionStore.js';
import { errorTemplate, fieldErrorId, fieldError, formError } from './consoleForm.js';
import { localTime } from './consoleRoute.js';
import { html, type SafeHtml } from './html.js';
import { delayInWords } from './rulesView.js';
import { rulePair, type CopyableArtifacts, type Preselected } from './setupData.js';
import { SELECTION_FIELD, setupCopyFormErrors, type SetupCopyForm } from './setupWords.js';

export const MODE_NAMES: Record<Mode, string> = { sandbox: 'Sandbox', live: 'Live' };

const STATUS_WORDS = { draft: 'Draft', active: 'Active', superseded: 'Superseded' } as const;

/** What the destination already has, to mark the choices a copy would refuse as conflicts. */
export interface PresentArtifacts {
  declaredVersions: ReadonlySet<string>;
  rulePairs: ReadonlySet<string>;
  /** The destination's name in the marks ("Live has this version"). */
  destinationName: string;
}

function versionChoices(formId: string, artifacts: CopyableArtifacts, preselected: Preselected, present?: PresentArtifacts): SafeHtml {
  if (artifacts.versions.length === 0) return html`<p class="none">This connection has no contract version.</p>`;
  const rows = artifacts.versions.map((version) => {
    const id = `${formId}-cv-${version.id}`;
    const checked = preselected.contractVersionIds.includes(version.id);
    const conflict = present?.declaredVersions.has(version.declaredVersion)
      ? html` <span class="badge">${present.destinationName} has this version</span>`
      : null;
    return html`<tr data-version="${version.id}">
<td><input type="checkbox" id="${id}" name="contractVersionIds" value="${version.id}" data-array${checked ? html` checked` : null}></td>
<td><label for="${id}">${version.declaredVersion}</label>${conflict}</td>
<td>${STATUS_WORDS[version.lifecycleStatus]}</td>
<td>${localTime(version.createdAt)}</td>
</tr>`;
  });
  return html`<div class="table-scroll"><table>
<thead><tr><th scope="col">Copy</th><th scope="col">Declared version</th><th scope="col">Status</th><th scope="col">Imported</th></tr></thead>
<tbody>${rows}</tbody>
</table></div>`;
}

function ruleChoices(formId: string, artifacts: CopyableArtifacts, preselected: Preselected, present?: PresentArtifacts): SafeHtml {
  if (artifacts.rules.length === 0) return html`<p class="none">This connection has no rule.</p>`;
  const rows = artifacts.rules.map((rule) => {
    const id = `${formId}-rule-${rule.id}`;
    const checked = preselected.ruleIds.includes(rule.id);
    const conflict = present?.rulePairs.has(rulePair(rule))
      ? html` <span class="badge">${present.destinationName} has this rule</span>`
      : null;
    return html`<tr data-rule="${rule.id}">
<td><input type="checkbox" id="${id}" name="ruleIds" value="${rule.id}" data-array${checked ? html` checked` : null}></td>
<td><label for="${id}"><code>${rule.sourceEventType}</code> → <code>${rule.expectedObjectType}</code></label>${conflict}</td>
<td>${delayInWords(rule.maxDelayMs)}</td>
<td>${rule.enabled ? 'On' : 'Off'}</td>
</tr>`;
  });
  return html`<div class="table-scroll"><table>
<thead><tr><th scope="col">Copy</th><th scope="col">Event → expected object</th><th scope="col">Within</th><th scope="col">Now</th></tr></thead>
<tbody>${rows}</tbody>
</table></div>`;
}

/**
 * The two selection tables of a preview form (checkboxes named `contractVersionIds` and `ruleIds`
 * with `data-array`: the script sends the checked ids, an empty list when none), and the box the
 * selection errors are shown in, which both tables name as their description.
 */
export function selectionTables(
  formId: string,
  sourceName: string,
  artifacts: CopyableArtifacts,
  preselected: Preselected,
  present?: PresentArtifacts,
): SafeHtml {
  const describedBy = fieldErrorId(formId, SELECTION_FIELD);
  const truncated = artifacts.truncated
    ? html`<p class="hint">Only the newest 100 versions and the first 100 rules are listed: one review copies at most 100 of each.</p>`
    : null;
  return html`<fieldset class="selection" aria-describedby="${describedBy}">
<legend>${sourceName} contract versions to copy (each becomes a draft)</legend>
${versionChoices(formId, artifacts, preselected, present)}
</fieldset>
<fieldset class="selection" aria-describedby="${describedBy}">
<legend>${sourceName} rules to copy (each is copied turned off)</legend>
${ruleChoices(formId, artifacts, preselected, present)}
</fieldset>
${truncated}
${fieldError(formId, SELECTION_FIELD)}`;
}

/** The snapshot members both kinds of review have (a setup's has no destination connection yet, and may have no source). */
export interface AnySnapshot {
  identity: { id: string; revision: string; tenantId: string; name: string; provider: string; direction: string; protocol: string };
  source: { connectionId: string; environmentId: string; revision: string } | null;
  destination: { mode: Mode; environmentId: string; connectionId?: string; revision?: string };
  contracts: SnapshotContract[];
  rules: SnapshotRule[];
  fingerprint: string;
}

function contractsTable(contracts: readonly SnapshotContract[]): SafeHtml {
  if (contracts.length === 0) return html`<p class="none" id="snapshot-contracts">No contract version.</p>`;
  const rows = contracts.map(
    (contract) => html`<tr data-source-version="${contract.sourceContractVersionId}">
<td>${contract.declaredVersion}</td>
<td><code>${contract.sourceContractVersionId}</code></td>
<td>${contract.importedFrom}</td>
<td class="number">${contract.operations.length}</td>
<td>Draft</td>
<td><code>${contract.fingerprint}</code></td>
</tr>`,
  );
  return html`<div class="table-scroll"><table id="snapshot-contracts">
<caption>Contract versions</caption>
<thead><tr><th scope="col">Declared version</th><th scope="col">Source version</th><th scope="col">Imported from</th><th scope="col">Operations</th><th scope="col">Becomes</th><th scope="col">Document fingerprint</th></tr></thead>
<tbody>${rows}</tbody>
</table></div>`;
}

function rulesTable(rules: readonly SnapshotRule[]): SafeHtml {
  if (rules.length === 0) return html`<p class="none" id="snapshot-rules">No rule.</p>`;
  const rows = rules.map(
    (rule) => html`<tr data-source-rule="${rule.sourceRuleId}">
<td><code>${rule.sourceEventType}</code></td>
<td><code>${rule.expectedObjectType}</code></td>
<td>${delayInWords(rule.maxDelayMs)}</td>
<td>Off</td>
<td><code>${rule.sourceRuleId}</code></td>
</tr>`,
  );
  return html`<div class="table-scroll"><table id="snapshot-rules">
<caption>Rules</caption>
<thead><tr><th scope="col">Event</th><th scope="col">Expected object</th><th scope="col">Within</th><th scope="col">Becomes</th><th scope="col">Source rule</th></tr></thead>
<tbody>${rows}</tbody>
</table></div>`;
}

/** The snapshot in tables (identity, source, destination, contracts, rules), then whole as JSON. */
export function snapshotView(snapshot: AnySnapshot): SafeHtml {
  const { identity, source, destination } = snapshot;
  const sourceFacts = source
    ? html`<dt>Connection</dt><dd><code>${source.connectionId}</code></dd>
<dt>Environment</dt><dd><code>${source.environmentId}</code></dd>
<dt>Revision</dt><dd>${source.revision}</dd>`
    : html`<dt>Connection</dt><dd class="none">None: the new connection starts empty</dd>`;
  const destinationConnection = destination.connectionId
    ? html`<dt>Connection</dt><dd><code>${destination.connectionId}</code></dd>
<dt>Revision</dt><dd>${destination.revision}</dd>`
    : html`<dt>Connection</dt><dd>Created when the review is applied</dd>`;
  return html`<section class="snapshot" aria-labelledby="snapshot-heading">
<h2 id="snapshot-heading">What was reviewed</h2>
<h3>Integration</h3>
<dl class="facts" id="snapshot-identity">
<dt>Name</dt><dd>${identity.name}</dd>
<dt>Provider</dt><dd>${identity.provider}</dd>
<dt>Direction and protocol</dt><dd>${identity.direction} · ${identity.protocol}</dd>
<dt>Integration</dt><dd><code>${identity.id}</code></dd>
<dt>Revision</dt><dd>${identity.revision}</dd>
<dt>Tenant</dt><dd><code>${identity.tenantId}</code></dd>
</dl>
<h3>Source</h3>
<dl class="facts" id="snapshot-source">${sourceFacts}</dl>
<h3>Destination</h3>
<dl class="facts" id="snapshot-destination">
<dt>Mode</dt><dd>${MODE_NAMES[destination.mode]}</dd>
<dt>Environment</dt><dd><code>${destination.environmentId}</code></dd>
${destinationConnection}
</dl>
<h3>Copied</h3>
${contractsTable(snapshot.contracts)}
${rulesTable(snapshot.rules)}
<details id="snapshot-json">
<summary>The whole snapshot as JSON</summary>
<pre class="snippet"><code>${JSON.stringify(snapshot, null, 2)}</code></pre>
</details>
</section>`;
}

/** "1 contract version (as a draft) and 2 rules (turned off)", or "nothing" for an empty snapshot. */
export function artifactCount(snapshot: Pick<AnySnapshot, 'contracts' | 'rules'>): string {
  const count = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;
  const parts = [
    snapshot.contracts.length
      ? `${count(snapshot.contracts.length, 'contract version', 'contract versions')} (as ${snapshot.contracts.length === 1 ? 'a draft' : 'drafts'})`
      : null,
    snapshot.rules.length ? `${count(snapshot.rules.length, 'rule', 'rules')} (turned off)` : null,
  ].filter((part) => part !== null);
  return parts.length ? parts.join(' and ') : 'nothing';
}

/** The review's two fingerprints: the one Apply presents, and the snapshot's. */
export function fingerprintFacts(approvalFingerprint: string, configurationFingerprint: string): SafeHtml {
  return html`<dl class="facts" id="fingerprints">
<dt>Approval fingerprint (what Apply presents)</dt><dd><code class="approval-fingerprint">${approvalFingerprint}</code></dd>
<dt>Snapshot fingerprint</dt><dd><code class="configuration-fingerprint">${configurationFingerprint}</code></dd>
</dl>`;
}

/** The status line of a pending or expired review. */
export function reviewStatus(status: 'previewed' | 'expired', expiresAt: string, nothing: string): SafeHtml {
  return status === 'expired'
    ? html`<p class="review-status" data-status="expired"><strong>This review has expired</strong> (at ${localTime(expiresAt)}): it can no longer be applied, and ${nothing}. Preview again for a new review.</p>`
    : html`<p class="review-status" data-status="previewed">Waiting for your approval until ${localTime(expiresAt)}. Nothing changes before you apply it.</p>`;
}

/**
 * The Apply form: the review's approval fingerprint posted to the apply route with a fresh
 * Idempotency-Key; errors (fingerprint, expiry, staleness) in the box right after the button.
 */
export function applyForm(input: {
  form: 'setup-apply' | 'copy-apply';
  route: string;
  approvalFingerprint: string;
  label: string;
  /** `data-next` after success, or the section `data-show` fills (the form then hides). */
  next?: string;
  show?: string;
}): SafeHtml {
  const id = input.form;
  const after = input.show
    ? html` data-show="${input.show}" data-hide-on-success data-hide=".review-status"`
    : input.next
      ? html` data-next="${input.next}"`
      : null;
  return html`<form id="${id}" class="stack" data-api="POST ${input.route}" data-idempotent${after}>
<input type="hidden" name="approvalFingerprint" value="${input.approvalFingerprint}">
<div class="actions"><button type="submit" class="primary">${input.label}</button></div>
${formError(id)}
${errorTemplate(setupCopyFormErrors(input.form))}
</form>`;
}

/** A form of one button posting an empty body (a compensation preview), its errors after the button. */
export function buttonForm(input: {
  form: SetupCopyForm;
  id: string;
  route: string;
  next: string;
  label: string;
  intro?: SafeHtml;
}): SafeHtml {
  return html`<form id="${input.id}" class="stack" data-api="POST ${input.route}" data-next="${input.next}">
${input.intro ?? null}
<div class="actions"><button type="submit">${input.label}</button></div>
${formError(input.id)}
${errorTemplate(setupCopyFormErrors(input.form))}
</form>`;
}

/** A receipt's source → destination mappings; `verb` says what happened to the destination artifacts. */
export function mappingTables(copied: CopiedArtifacts, verb: 'Created' | 'Removed' | 'Will be removed'): SafeHtml {
  const contracts =
    copied.contracts.length === 0
      ? html`<p class="none">No contract version.</p>`
      : html`<div class="table-scroll"><table id="mapped-contracts">
<caption>Contract versions (drafts)</caption>
<thead><tr><th scope="col">Source version</th><th scope="col">${verb}</th></tr></thead>
<tbody>${copied.contracts.map(
          (entry) =>
            html`<tr><td><code>${entry.sourceContractVersionId}</code></td><td><code>${entry.destinationContractVersionId}</code></td></tr>`,
        )}</tbody>
</table></div>`;
  const rules =
    copied.rules.length === 0
      ? html`<p class="none">No rule.</p>`
      : html`<div class="table-scroll"><table id="mapped-rules">
<caption>Rules (turned off)</caption>
<thead><tr><th scope="col">Source rule</th><th scope="col">${verb}</th></tr></thead>
<tbody>${copied.rules.map(
          (entry) =>
            html`<tr data-rule="${entry.destinationRuleId}"><td><code>${entry.sourceRuleId}</code></td><td><code>${entry.destinationRuleId}</code></td></tr>`,
        )}</tbody>
</table></div>`;
  return html`${contracts}${rules}`;
}

/** A completed receipt's proof (02 "Operation receipt (completed)"). */
export function proofFacts(proof: Proof, completedAt: string, historical: boolean): SafeHtml {
  return html`<dl class="facts" id="proof">
<dt>Completed</dt><dd>${localTime(completedAt)}</dd>
<dt>Proof</dt><dd><code>${proof.schema}</code></dd>
<dt>Approved review's fingerprint</dt><dd><code class="approval-fingerprint">${proof.approvalFingerprint}</code></dd>
<dt>Applied snapshot's fingerprint</dt><dd><code class="configuration-fingerprint">${proof.configurationFingerprint}</code></dd>
</dl>
${historical ? html`<p class="hint" id="historical">The destination has changed since (or is gone): this receipt is a record of what was done then, not of what is there now.</p>` : null}`;
}

/**
 * A review page's status read in an archived workspace: a completed receipt is still read, a
 * pending or expired review is the status route's 409 `workspace_unavailable` (02 "Browser session
 * adapters"), which the page says in words instead of answering the JSON error.
 */
export async function readReviewOrArchived<T>(read: () => Promise<T>): Promise<T | SafeHtml> {
  try {
    return await read();
  } catch (error) {
    if (isAppError(error) && error.code === 'workspace_unavailable') {
      return html`<p class="review-status" data-status="archived">This workspace is archived: a review that was not applied can no longer be read or applied. Restore the workspace, then preview again.</p>`;
    }
    throw error;
  }
}
