// `REPAIR.md`: what drifted, the evidence counts and the change, in words a developer reads in a
// minute (00-decisions §6). Only what the bundle's other files also bind: no reviewer identity (03
// "Repair export bundle"), the approval by its id and fingerprint.

import type { RepairChange } from '../types.js';
import type { RepairBundleInput } from './types.js';

export interface MarkdownContext {
  typeName: string;
  /** JSON Pointers of the schema objects the Overlay edits in the registered document. */
  editedSchemas: string[];
  overlayNotes: string[];
  alsoChanged: string[];
}

export function repairMarkdown(input: RepairBundleInput, context: MarkdownContext): string {
  const { proposal, incident, dataset, run, approval, contract, operation, candidate } = input;
  const lines: string[] = [
    `# Repair ${proposal.id}: ${code(proposal.operationKey)}`,
    '',
    '## What drifted',
    '',
    `${text(incident.summary)} (${code(incident.kind)}; ${count(incident.affectedRecords, 'observation')} affected).`,
    '',
  ];
  if (incident.findings.length > 0) {
    lines.push('| Finding | Path | Contract allows | Observed | Observations |', '| --- | --- | --- | --- | ---: |');
    for (const finding of incident.findings) {
      lines.push(
        `| ${cell(code(finding.kind))} | ${cell(code(finding.path || '/'))} | ${cell(finding.expected)} | ${cell(finding.observed)} | ${finding.observationCount} |`,
      );
    }
    lines.push('');
  }
  lines.push(
    '## Evidence',
    '',
    `- Replay dataset ${code(dataset.id)}: ${count(dataset.fixtureCount, 'frozen shape')} (manifest ${code(dataset.manifestHash)}).`,
    `- Replay run ${code(run.id)} ${run.status}: ${run.conformingCount} of ${count(run.fixtureCount, 'fixture')} conform to the patched schema (${code(run.adapterVersion)}, ${code(run.adapterFingerprint)}).`,
    `- Approved as ${code(approval.id)} at ${approval.decidedAt} (approval ${code(approval.approvalFingerprint)}).`,
    '',
    '## The change',
    '',
    ...candidate.changes.map((change) => `- ${describeChange(change)}`),
    '',
    `Schema ${code(candidate.baseSchemaFingerprint)} becomes ${code(candidate.schemaFingerprint)}.`,
    '',
    '## Files',
    '',
    `- \`repair.json\`: the JSON Patch against the operation's schema, the patched schema and what they are bound to (proposal, contract version ${code(proposal.contractVersionId)}, dataset, run, approval).`,
    `- \`repair.ts\`: \`${context.typeName}\`, \`is${context.typeName}\` and \`normalise${context.typeName}\` for the new shape; no dependencies, \`tsc --strict\` clean.`,
    `- \`repair.overlay.yaml\`: an OpenAPI Overlay 1.0.0 for the registered ${contractName(contract)} document (${code(operation.method)} ${code(operation.routeTemplate)}, ${operation.payloadLocation}${operation.payloadLocation === 'response' ? ` ${operation.statusSelector}` : ''}); it edits ${context.editedSchemas.map((pointer) => code(pointer || '/')).join(', ')}.`,
  );
  if (context.alsoChanged.length > 0) {
    lines.push(`- The edited schema is shared: the Overlay also changes ${context.alsoChanged.map(code).join(', ')}.`);
  }
  for (const note of context.overlayNotes) lines.push(`- Note: ${note}.`);
  lines.push(
    '',
    'Nothing was edited, opened or deployed: apply the Overlay, register the result as a new contract version and activate it.',
    '',
  );
  return lines.join('\n');
}

function describeChange(change: RepairChange): string {
  const where = code(change.payloadPath || '/');
  const evidence = `(${count(change.fixtureCount, 'fixture')})`;
  switch (change.kind) {
    case 'property_added':
      return `Declares optional ${where} as ${text(change.after)} ${evidence}.`;
    case 'type_widened':
      return `Widens ${where} from ${text(change.before)} to ${text(change.after)} ${evidence}.`;
    case 'required_relaxed':
      return `Makes ${where} optional (was ${text(change.before)}, now ${text(change.after)}) ${evidence}.`;
    case 'enum_widened':
      return `Allows more values at ${where}: ${text(change.before)} becomes ${text(change.after)} ${evidence}.`;
    default:
      return `${code(String(change.kind))} at ${where}: ${text(change.before)} becomes ${text(change.after)} ${evidence}.`;
  }
}

function contractName(contract: RepairBundleInput['contract']): string {
  return `${contract.format === 'json-schema' ? 'JSON Schema' : 'OpenAPI'} (imported from ${contract.importedFrom}, version ${contract.declaredVersion})`;
}

function count(value: number, noun: string): string {
  return `${value} ${noun}${value === 1 ? '' : 's'}`;
}

/** Inline code that stays one span whatever it holds. */
function code(value: string): string {
  const flat = value.replace(/[\r\n]+/g, ' ');
  const fence = '`'.repeat(Math.max(0, ...(flat.match(/`+/g) ?? []).map((run) => run.length)) + 1);
  return fence.length > 1 || flat.startsWith(' ') || flat.endsWith(' ') ? `${fence} ${flat} ${fence}` : `${fence}${flat}${fence}`;
}

/** Text for a table cell or a sentence: one line, pipes escaped. */
function cell(value: string): string {
  return text(value).replace(/\|/g, '\\|');
}

function text(value: string): string {
  return value.replace(/[\r\n]+/g, ' ').trim();
}
